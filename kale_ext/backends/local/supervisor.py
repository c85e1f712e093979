"""Runs one local job: a process per node, each the TrainJob's own command with the PET_*
environment the Trainer torch plugin gives a node (on an MPI runtime, one mpirun for every
node's ranks: mpirun.py); records every state change in job.json.

    python -m kale_ext.backends.local.supervisor JOB_DIR

It runs detached from the Jupyter server (its own session), so a job outlives a server restart.
It claims the job's rendezvous port for the job's whole life, unbound, so the framework's own
listener (torch's TCPStore, XGBoost's RabitTracker) binds it (see ports.py).
When a node fails, the other nodes are stopped: no orphans are left behind. When the
supervisor itself is killed, the nodes end with it (lifetime.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path

from ...checkpoint import STOP_GRACE
from ...errors import StorageError
from ...files import write_atomic
from ...job.outputs import ENV as OUTPUT_ENV
from ...job.restarts import RESTART_ENV
from ...job.shipping import WORKDIR_ENV
from ...mlflow_api import finish as finish_run
from ..base import BackendError, Failure, Status
from ..failure import exit_words
from .diskroom import died_of_full_disk, full, give_back, keep_room, on_full_disk
from .failures import local_failure, node_env
from .frameworks import framework_env
from .installs import InstallError, prepare
from .lifetime import dies_with_parent, remember, remove_scratch, scratch
from .mpirun import RankOutput, pin_all, workdirs
from .mpirun import start as start_mpirun
from .outputs import gather, staging
from .ports import claim_port
from .priority import Groups, lower_priority
from .processes import NotStarted, descendants, kill, kill_group, start_time
from .processes import start as start_process
from .progressfile import ProgressFollower
from .queue import Need, leave, wait_turn
from .records import now, read_record, update_record
from .resources import MemoryWatch, chain, node_settings
from .restarts import completed_after, next_attempt, recorded, restart_note
from .volumes import free_mounts, make_mounts
from .workspace import node_workdir

#: After a node fails, how long the others may take to end by themselves (and report what
#: their ranks saw) before they are stopped.
FAILURE_GRACE = 5.0
#: How long stopped nodes get after SIGTERM before SIGKILL: a job's on_stop handlers save its
#: checkpoint in it (kale_ext/checkpoint.py; a cluster's pods get as long). torchrun passes the
#: SIGTERM on to its workers and waits as long for them.
NODE_GRACE = STOP_GRACE
#: How long a stop waits for the supervisor (stop.py): its nodes' grace, then their outputs
#: gathered and the end recorded.
SUPERVISOR_GRACE = NODE_GRACE + 15
#: In the job's folder while the others are given that time: which node failed and how, in
#: words (`node 1 exited with code 1`); every view shows the job as `Failing (...)` meanwhile.
FAILING = "failing.txt"


def _this_process() -> dict:
    """This supervisor, as its job's record names it."""
    me = os.getpid()
    return {"supervisor_pid": me, "supervisor_started": start_time(me)}


def _remember(job_dir: Path, processes: dict[int, str | None]) -> None:
    """lifetime.remember, unless the disk is full (the job's end says so; its processes are
    still stopped by this supervisor)."""
    with contextlib.suppress(StorageError):
        remember(job_dir, processes)


def failing_text(ended: dict[int, int]) -> str:
    """The first node that ended with a failure, and how: `node 1 exited with code 1`, `node 0
    was killed by signal 9 (SIGKILL)`."""
    node, code = next((k, c) for k, c in ended.items() if c)
    words = exit_words(code)
    return f"node {node} was killed by {words}" if words else f"node {node} exited with code {code}"


def start_nodes(
    job_dir: Path, record: dict, port: int, extra: dict[str, str] | None = None
) -> list[subprocess.Popen]:
    """One process group per node: the job's command with that node's PET_* (or its runtime's)
    environment, in
    its own working directory, writing to its own log, its temporary files in the job's folder;
    each node ends with this supervisor (see lifetime.py)."""
    procs: list[subprocess.Popen] = []
    for k in range(record["num_nodes"]):
        threads, pin = node_settings(record, k)  # its cores and thread counts
        env = {
            **os.environ,
            **threads,
            "TMPDIR": str(scratch(job_dir, k).resolve()),  # removed when the job ends
            **record["env"],
            **framework_env(record, k, port),  # PET_*, or the runtime's own (DMLC_*, JAX_*)
            **node_env(job_dir, k),  # where torchrun and the module record errors
            **(extra or {}),
        }
        workdir = node_workdir(job_dir, k)
        workdir.mkdir(exist_ok=True)
        env[WORKDIR_ENV] = str(workdir.resolve())  # the workspace is unpacked here
        env[OUTPUT_ENV] = str(staging(job_dir, k).resolve())  # gathered when the job ends
        make_mounts(job_dir, record.get("mounts", []), k, workdir)  # relative ones, per node
        preexec = chain(dies_with_parent(signal.SIGTERM), pin,
                        lower_priority(record.get("nice", 0)))  # fmt: skip
        with open(job_dir / f"node-{k}.log", "ab", buffering=0) as log:
            try:  # each node its own process group
                procs.append(start_process(f"node {k}", record["command"], cwd=workdir, env=env,
                                           stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True,
                                           preexec_fn=preexec))  # fmt: skip
            except NotStarted:  # nothing of the job is left running
                stop_nodes(procs, {})
                raise
    return procs


def start_mpi(
    job_dir: Path, record: dict, extra: dict[str, str]
) -> tuple[subprocess.Popen, RankOutput]:
    """An MPI job's one mpirun (mpirun.py), every node's ranks under it, with the environment
    the nodes of other jobs get less the torch plugin's; it ends with this supervisor."""
    threads, _ = node_settings(record, 0)  # the same thread counts on every node
    env = {**os.environ, **threads, "TMPDIR": str(scratch(job_dir, 0).resolve()),
           **record["env"], **extra}  # fmt: skip
    for k, workdir in workdirs(job_dir, record):  # relative mounts, in each rank's directory
        workdir.mkdir(parents=True, exist_ok=True)
        make_mounts(job_dir, record.get("mounts", []), k, workdir)
    preexec = chain(dies_with_parent(signal.SIGTERM), pin_all(record),
                    lower_priority(record.get("nice", 0)))  # fmt: skip
    return start_mpirun(job_dir, record, env, preexec)


def running(procs: list[subprocess.Popen]) -> set[int]:
    """The pids of the nodes not reaped yet. A reaped node's pid is free: the system gives it to
    the next process (or thread) anywhere on the machine, and its children are not this job's
    (pid_max is 32768 here, and every thread takes one)."""
    return {p.pid for p in procs if p.returncode is None}


def stop_nodes(procs: list[subprocess.Popen], family: dict[int, str]) -> None:
    """Stop every node still running (SIGTERM to its group, SIGKILL after NODE_GRACE), then
    every process the nodes started, whatever its process group: a job leaves no orphans."""
    family.update(descendants(running(procs)))
    for p in procs:
        if p.poll() is None:
            kill_group(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + NODE_GRACE
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_group(p.pid, signal.SIGKILL)
            p.wait()
    for pid, started in family.items():
        if start_time(pid) == started:  # the same process, not a reused PID
            kill(pid, signal.SIGKILL)


def over_memory(failure: Failure, memory: MemoryWatch) -> Failure:
    """The failure of a node the memory watchdog stopped: that node, and why."""
    k = memory.killed
    return replace(failure, summary=f"node {k}: {memory.text}", node=k, rank=None,
                   signal=memory.text, reason=memory.text, exit_code=-signal.SIGKILL,
                   log_tail=failure.log_tail if failure.node == k else [])  # fmt: skip


def end_tracked_run(job_dir: Path, record: dict, cancelled: bool) -> None:
    """End the job's MLflow run when it has one (its outputs uploaded); a problem doing so is
    said in node 0's log."""
    outputs = Path(record["outputs"]) if record.get("outputs") else None
    note = finish_run(record.get("env") or {}, record["status"], outputs, cancelled)
    if note:
        with open(job_dir / "node-0.log", "a", encoding="utf-8") as log:
            log.write(f"kale_ext: MLflow: {note}\n")


class Cancelled(Exception):
    """SIGTERM before the nodes started."""


def _cancel(*_) -> None:
    raise Cancelled


def not_started(job_dir: Path, reason: str) -> int:
    """Record a job that ended before its nodes started."""
    remove_scratch(job_dir)
    free_mounts(job_dir)

    def ended(record: dict) -> None:
        for node in record.get("nodes", []):
            node.update(state="Failed", reason="not started")
        record.update(status="Failed", reason=reason, finished=now(), **_this_process())

    record = update_record(job_dir, ended)
    end_tracked_run(job_dir, record, cancelled=reason.startswith("cancelled"))
    return 0


@dataclass
class Attempt:
    """How one start of the job's nodes ended."""

    procs: list[subprocess.Popen]
    failure: Failure | None = None  # a node failed (not stopped, not past the deadline)
    expired: bool = False  # the job ran past its deadline


class _Stop:
    """Whether the job was asked to stop (SIGTERM), for every attempt."""

    asked = False

    def __call__(self, *_) -> None:
        self.asked = True


def watch(
    job_dir: Path, record: dict, port: int, extra: dict[str, str], ends_by: float | None,
    stop: _Stop, progress: ProgressFollower,
) -> Attempt:  # fmt: skip
    """Start the nodes, follow them until they end, one fails (the others given FAILURE_GRACE),
    the deadline passes or a stop is asked; stop what is left; how it ended."""
    output: RankOutput | None = None
    if record.get("mpirun"):  # one mpirun runs every node's ranks
        mpirun, output = start_mpi(job_dir, record, extra)
        procs, pids = [mpirun], [mpirun.pid] * record["num_nodes"]
    else:
        procs = start_nodes(job_dir, record, port, extra)
        pids = [p.pid for p in procs]
    nodes = {p.pid: start_time(p.pid) for p in procs}
    _remember(job_dir, nodes)
    started = {"status": "Running", "master_port": port, **_this_process(),
               "nodes": [{"index": k, "state": "Running", "pid": pid}
                         for k, pid in enumerate(pids)]}  # fmt: skip
    update_record(job_dir, lambda r: r.update(started, started=r.get("started") or now()))

    ended: dict[int, int] = {}  # node -> exit code, in the order the nodes ended
    ended_at: dict[int, float] = {}  # node -> when it was seen to end (or was stopped)
    failed_at: float | None = None
    expired = False
    was_full = False  # whether the disk was full when the first node failed
    family: dict[int, str] = {}  # every process the nodes started: torchrun's workers run
    last_scan = 0.0  # in sessions of their own, and would outlive a killed agent
    memory = MemoryWatch(record)
    groups = Groups(record.get("nice", 0))  # the job's sessions, below the server
    while not stop.asked:
        progress.poll()
        if failed_at is None:
            # a node over its memory limit is stopped (one that ended has no pid any more)
            memory.check([p.pid if p.returncode is None else None for p in procs])
        if time.monotonic() - last_scan > 0.5:
            known = len(family)
            family.update(descendants(running(procs)))
            if len(family) > known:  # for whoever finds this supervisor gone
                _remember(job_dir, {**nodes, **family})
                groups.pending = True
            last_scan = time.monotonic()
        if groups.pending:  # torchrun's workers lead sessions of their own
            groups.lower([*running(procs), *family])
        for k, p in enumerate(procs):
            if k not in ended and p.poll() is not None:
                ended[k], ended_at[k] = p.returncode, time.time()
        if failed_at is None and any(ended.values()):
            failed_at = time.monotonic()  # the others may still report what they saw
            was_full = full(job_dir)  # its traceback may be missing for want of room
            if len(ended) < len(procs):
                with contextlib.suppress(OSError):  # a full disk: the end says it
                    write_atomic(job_dir / FAILING, failing_text(ended))
        if len(ended) == len(procs):
            break
        if failed_at is not None and time.monotonic() - failed_at > FAILURE_GRACE:
            break
        if failed_at is None and ends_by is not None and time.monotonic() > ends_by:
            expired = True
            break
        time.sleep(0.05)
    stopped_at = time.time()
    stop_nodes(procs, family)
    if output is not None:  # what mpirun passed on last, in the logs
        output.join(NODE_GRACE)
    (job_dir / FAILING).unlink(missing_ok=True)
    remove_scratch(job_dir)
    progress.poll(every=0)  # what rank 0 logged last

    failure = None
    if not stop.asked and not expired and failed_at is not None:
        stopped = [(k, p.returncode) for k, p in enumerate(procs) if k not in ended]
        times = {**{k: stopped_at for k, _ in stopped}, **ended_at}
        exits = [*ended.items(), *stopped]
        if output is not None:  # every node's ranks ended with the one mpirun
            exits = [(k, exits[0][1]) for k in range(record["num_nodes"])]
            times = {k: times[0] for k in range(record["num_nodes"])}
        failure = local_failure(job_dir, record, exits, times, {k for k, _ in stopped})
        if memory.killed is not None:
            failure = over_memory(failure, memory)
        elif died_of_full_disk(failure, was_full):
            failure = on_full_disk(failure, job_dir)
    return Attempt(procs, failure, expired)


def run(job_dir: Path) -> int:
    record = read_record(job_dir)
    stop = _Stop()
    signal.signal(signal.SIGTERM, _cancel)  # while packages install: pip is stopped with it
    try:
        packages = prepare(job_dir, record)  # what the job lacks, in its own folder
        signal.signal(signal.SIGTERM, stop)
    except (InstallError, Cancelled) as e:
        return not_started(job_dir, str(e) if isinstance(e, InstallError) else "cancelled")
    deadline_s = record.get("active_deadline_seconds")  # over every attempt
    ends_by = time.monotonic() + deadline_s if deadline_s else None
    most = record.get("max_restarts") or 0
    # rank 0's, as it logs; its ETA timed from now, when the nodes start
    progress = ProgressFollower(job_dir, record["procs_per_node"], time.monotonic())
    keep_room(job_dir)  # for the record of a job that fills its disk
    tried: Attempt | None = None
    not_restarted = ""  # why a failed node's job was not started again, when it could be
    for attempt in range(most + 1):
        try:
            extra = {**packages, RESTART_ENV: str(attempt)}
            tried = _attempt(job_dir, record, extra, ends_by, stop, progress)
        except NotStarted as e:  # nothing of this attempt runs: no port, or a node not started
            remove_scratch(job_dir)
            if tried is None:
                give_back(job_dir)
                return not_started(job_dir, str(e))
            not_restarted = f" (not restarted: {e})"
            break
        if tried.failure is None or stop.asked or attempt == most:
            break
        note = restart_note(attempt + 1, most, tried.failure)
        next_attempt(job_dir, record["num_nodes"], note)
        record = update_record(job_dir, partial(recorded, attempt=attempt + 1, note=note, at=now()))
    last = tried
    assert last is not None
    if record.get("outputs"):
        gather(job_dir, Path(record["outputs"]))
    free_mounts(job_dir)
    give_back(job_dir)
    record = update_record(job_dir, lambda r: _ended(r, last, stop.asked, not_restarted))
    end_tracked_run(job_dir, record, cancelled=stop.asked)
    return 0


def _attempt(job_dir: Path, record: dict, extra: dict[str, str], ends_by: float | None,
             stop: _Stop, progress: ProgressFollower) -> Attempt:  # fmt: skip
    """One attempt, on a port of its own (the last one's may linger in TIME_WAIT); NotStarted
    when there is no port or a node cannot start (start_nodes, start_mpi)."""
    try:
        claim = claim_port()
    except BackendError as e:
        raise NotStarted(str(e)) from e
    with claim:
        return watch(job_dir, record, claim.port, extra, ends_by, stop, progress)


def _ended(record: dict, last: Attempt, stopping: bool, not_restarted: str) -> None:
    """Record how the job ended, on the record as it is now: what others recorded stays."""
    procs, failure = last.procs, last.failure
    if len(procs) < len(record["nodes"]):  # an MPI job's: every node ends with its mpirun
        procs = procs[:1] * len(record["nodes"])
    for k, p in enumerate(procs):
        state = "Succeeded" if p.returncode == 0 else "Failed"
        record["nodes"][k].update(state=state, exit_code=p.returncode)
    if stopping:  # a stop says why it stopped the job (stop.py), a delete does not
        reason = record.pop(STOP_REASON, None)
        record.update(status="Failed", reason=reason or "cancelled")
        for k, p in enumerate(procs):
            if reason and p.returncode != 0:
                record["nodes"][k]["state"] = "Stopped"
    elif last.expired:
        deadline_s = record.get("active_deadline_seconds")
        record.update(status="Failed",
                      reason=f"DeadlineExceeded: ran longer than {deadline_s} s")  # fmt: skip
    elif failure is not None:
        if failure.node is not None:
            record["nodes"][failure.node]["reason"] = failure.summary
        record.update(status="Failed", reason=failure.summary + not_restarted,
                      failure=asdict(failure))  # fmt: skip
    else:
        record.update(status="Complete", reason=completed_after(record.get("restarts") or []))
    record["finished"] = now()


#: The record's field a stop writes before it signals the supervisor: the reason to record.
STOP_REASON = "stop_reason"


def _waiting(job_dir: Path, reason: str | None) -> None:
    """Record that the job waits in the local queue, and why (None: its turn came)."""
    status = Status.QUEUED.value if reason else Status.CREATED.value

    def waiting(record: dict) -> None:
        if (record["status"], record.get("reason")) != (status, reason):
            record.update(status=status, reason=reason, **_this_process())

    update_record(job_dir, waiting)


def main(job_dir: Path) -> int:
    """Wait for the job's turn in the local queue (queue.py), run it, then free its place.
    First, record this process (its submitter records it too, unless it stopped first); a job
    that reads finished already was found interrupted before this process ran: nothing runs."""
    record = read_record(job_dir)
    if Status(record["status"]).finished:
        free_mounts(job_dir)
        leave(job_dir.parent, job_dir.name)
        return 0
    if not record.get("supervisor_pid"):
        update_record(job_dir, lambda r: r.get("supervisor_pid") or r.update(_this_process()))
    queue = record.get("queue")
    if not queue:
        return run(job_dir)
    signal.signal(signal.SIGTERM, _cancel)
    need, machine = Need(*queue["need"]), Need(*queue["capacity"])
    try:
        try:
            wait_turn(
                job_dir.parent, job_dir.name, need, machine, lambda why: _waiting(job_dir, why)
            )
        except Cancelled:
            return not_started(job_dir, "cancelled while queued")
        _waiting(job_dir, None)
        return run(job_dir)
    finally:
        leave(job_dir.parent, job_dir.name)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
