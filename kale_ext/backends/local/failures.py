"""A local job's failure summary, from what its nodes left in the job's folder.

Each node's command runs with two of torchrun's own settings: ``TORCHELASTIC_ERROR_FILE`` (where
torchrun's ``@record`` copies the root cause of the node, and where a node without torchrun has
the module write its error) and ``PET_LOG_DIR`` (torchrun's ``--log-dir``: every worker's error
record, ``<run>/attempt_0/<local rank>/error.json``). The node's log adds torchrun's report (exit
codes and signals of ranks that wrote no record).

A job on an MPI runtime (mpirun.py) runs no torchrun: each rank writes its error record under
its node's torchrun folder (RANK_RECORDS, then its rank on the node); the record does not know
its node (no torchrun tells it), its place does, and so its rank too. A rank that wrote none
is named by mpirun's own words in node 0's log (the launcher's).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...files import open_regular
from ..base import Failure, LogLine, split_rank
from ..failure import (
    RankFailure,
    first_failure,
    from_report,
    merge,
    rank_tail,
    read_record,
    summarize,
)
from ..torchrun_report import find_reports, fold_reports

#: How much of the end of a node's log is read for its report and the failing rank's lines.
LOG_WINDOW = 256 * 1024
#: How the line parting two attempts of a restarted job starts in every node's log
#: (restarts.py): a failure is read from the lines after the last one.
RESTART_MARK = "kale_ext: restart "
#: Where an MPI job's rank writes its error record, in its node's torchrun folder.
RANK_RECORDS = "mpi/attempt_0"
#: mpirun's words of the rank whose end ended the job: killed by a signal, or an exit code.
_MPI_SIGNAL = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)")
_MPI_EXIT = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]")
_MPI_CODE = re.compile(r"Exit code:\s+(\d+)")


def error_file(job_dir: Path, node: int) -> Path:
    return job_dir / f"node-{node}.error.json"


def torchrun_dir(job_dir: Path, node: int) -> Path:
    return job_dir / f"node-{node}.torchrun"


def node_env(job_dir: Path, node: int) -> dict[str, str]:
    """The environment that makes a node's errors land in the job's folder."""
    return {
        "TORCHELASTIC_ERROR_FILE": str(error_file(job_dir, node)),
        "PET_LOG_DIR": str(torchrun_dir(job_dir, node)),
    }


def log_end(job_dir: Path, node: int, procs_per_node: int) -> list[LogLine]:
    """The last lines of a node's log (at most LOG_WINDOW bytes) since the last restart,
    reports not folded."""
    path = job_dir / f"node-{node}.log"
    try:
        with open_regular(path) as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - LOG_WINDOW))
            data = f.read()
    except OSError:
        return []
    raw = data.split(b"\n")
    if size > LOG_WINDOW:
        raw = raw[1:]  # begins inside a line
    out: list[LogLine] = []
    for chunk in raw:
        if chunk.startswith(RESTART_MARK.encode()):
            out = []  # an earlier attempt's
        elif chunk:
            text = chunk.decode("utf-8", "replace").rstrip("\r")
            rank, text = split_rank(node, procs_per_node, text)
            out.append(LogLine(node, text, rank))
    return out


def node_failures(job_dir: Path, node: int, code: int | None, lines: list[LogLine], procs: int):
    """The failures one node saw: its error records, its torchrun report, else its exit."""
    ranks = torchrun_dir(job_dir, node) / RANK_RECORDS  # an MPI job's: read below
    workers = [p for p in sorted(torchrun_dir(job_dir, node).glob("*/*/*/error.json"))  # run/
               if not p.is_relative_to(ranks)]  # attempt/rank  # fmt: skip
    files = [error_file(job_dir, node), *workers]
    found = [f for f in (read_record(p, node) for p in files if p.is_file()) if f is not None]
    found += mpi_ranks(job_dir, node, procs)
    found += [from_report(e, node) for e in find_reports(line.text for line in lines)]
    found = merge(found)
    if not found and code not in (None, 0):
        found = [RankFailure(node=node, rank=node if procs == 1 else None, exit_code=code)]
    return found


def mpi_ranks(job_dir: Path, node: int, procs: int) -> list[RankFailure]:
    """The error records of an MPI job's ranks on ``node``, each with its rank and node."""
    out = []
    for path in sorted((torchrun_dir(job_dir, node) / RANK_RECORDS).glob("*/error.json")):
        found = read_record(path, node)
        if found is not None and path.parent.name.isdigit():
            found.node, found.rank = node, node * procs + int(path.parent.name)
            out.append(found)
    return out


def mpi_ended(lines: list[LogLine], procs: int) -> RankFailure | None:
    """The rank mpirun says ended the job (in node 0's log), when it says one."""
    text = "\n".join(line.text for line in lines)
    if m := _MPI_SIGNAL.search(text):
        rank = int(m.group(1))
        return RankFailure(node=rank // procs, rank=rank, exit_code=-int(m.group(2)))
    if m := _MPI_EXIT.search(text):
        rank, code = int(m.group(1)), _MPI_CODE.search(text, m.end())
        return RankFailure(
            node=rank // procs, rank=rank, exit_code=int(code.group(1)) if code else None
        )
    return None


def local_failure(
    job_dir: Path,
    record: dict,
    exits: list[tuple[int, int | None]],
    times: dict[int, float] | None = None,
    stopped: set[int] | frozenset[int] = frozenset(),
) -> Failure:
    """The summary of a failed local job; ``exits``: (node, exit code) in the order the nodes
    ended (None: still running when the job was stopped); ``times``: when each node ended (the
    time of a failure that tells none of its own); ``stopped``: the nodes the supervisor
    stopped after another failed, whose endings (a SIGKILL, torchrun's record of the signal)
    are consequences: the first node to fail on its own is the one named."""
    procs, times = record["procs_per_node"], times or {}
    logs = {k: log_end(job_dir, k, procs) for k, _ in exits}
    mpi = bool(record.get("mpirun"))  # one mpirun: its exit code is no node's own
    found = []
    for k, code in exits:
        for failure in node_failures(job_dir, k, None if mpi else code, logs[k], procs):
            if failure.time is None:
                failure.time = times.get(k)
            found.append(failure)
    found = merge(found)
    if mpi and not found:  # no rank wrote a record: mpirun says which ended the job
        ended = mpi_ended(logs.get(0, []), procs) or RankFailure(node=0, exit_code=exits[0][1])
        ended.time = times.get(0)
        found = [ended]
    first = first_failure([f for f in found if f.node not in stopped]) or first_failure(found)
    if first is None:
        first = RankFailure(node=exits[0][0] if exits else 0)
    tail = rank_tail(fold_reports(logs.get(first.node, []), first.node), first.rank)
    return summarize(first, tail)
