"""A local job's automatic restarts (its ``max_restarts``): when a node fails, the supervisor
stops the others and starts every node again, up to that many times, each node's
``KALE_EXT_RESTART`` the attempt (0 the first time).

Each attempt starts as a restarted pod does, from a fresh container: each node's working
directory (the workspace unpacked anew), its temporary folder and its emptyDirs are emptied;
what outlives a pod stays: its outputs (staged apart, outputs.py), the lineage's checkpoints
(checkpoints.py), the packages installed for the job and the logs.

Each attempt's logs stay readable: the nodes' logs go on in the same files (bounded as before),
the attempts parted by a line naming the restart (RESTART_MARK); what a failure is read from
(failures.py) is the last attempt's part only. The record keeps each restart (``restarts``: the
attempt, why, when; at most MAX_RESTARTS) and says the last in its reason.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..base import Failure
from .failures import error_file, torchrun_dir
from .lifetime import scratch
from .volumes import EMPTY_DIRS
from .workspace import node_workdir


def restart_note(attempt: int, most: int, failure: Failure) -> str:
    """`restart 1 of 2 after node 1 failed: ValueError: boom`."""
    who, sep, what = failure.summary.partition(": ")
    said = f"{who} failed: {what}" if sep else failure.summary
    return f"restart {attempt} of {most} after {said}"


def next_attempt(job_dir: Path, nodes: int, note: str) -> None:
    """Part the nodes' logs with ``note``, clear what the last attempt's failure left (its
    error records), so the next attempt's failure is read from its own, and the files each node
    wrote where a restarted pod's would be gone (a link is removed, never followed)."""
    for k in range(nodes):
        with open(job_dir / f"node-{k}.log", "a", encoding="utf-8") as log:
            log.write(f"\nkale_ext: {note}\n")  # RESTART_MARK: `note` starts `restart `
        error_file(job_dir, k).unlink(missing_ok=True)
        gone = [torchrun_dir(job_dir, k), node_workdir(job_dir, k), scratch(job_dir, k)]
        for folder in gone + sorted((job_dir / EMPTY_DIRS).glob(f"*-node-{k}")):
            shutil.rmtree(folder, ignore_errors=True)


def recorded(record: dict, attempt: int, note: str, at: str) -> None:
    """Record in ``record`` that attempt ``attempt`` starts, and why."""
    restarts = record.setdefault("restarts", [])
    restarts.append({"attempt": attempt, "reason": note, "time": at})
    record["reason"] = note


def completed_after(restarts: list[dict]) -> str | None:
    """A complete job's reason: `restarted once; the last: restart 1 of 2 after ...` (None: it
    was not restarted)."""
    if not restarts:
        return None
    times = "once" if len(restarts) == 1 else f"{len(restarts)} times"
    return f"restarted {times}; the last: {restarts[-1]['reason']}"
