"""A local job's processes and temporary files live no longer than the job.

- Each node is started with a parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``): when its
  supervisor ends, even by SIGKILL, the node gets SIGTERM; torchrun stops its workers on SIGTERM
  (they run in sessions of their own, out of reach of a group kill), a plain Python node ends.
- The supervisor records every process of the job with its start time (``processes.json``), so
  whoever finds the supervisor gone (a restarted server reading the job) can stop what is left,
  and never a process that merely reuses a PID.
- Each node's temporary folder (``TMPDIR``: the bootstrap's module, pip's build folders, the
  user's own temporary files) lives in the job's folder and is removed when the job ends, as a
  pod's filesystem goes with the pod.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from ...files import MAX_RECORD_BYTES, read_json, write_atomic
from .links import release
from .processes import kill, start_time

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PROCESSES = "processes.json"
SCRATCH = "tmp"


def _prctl() -> Callable | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def dies_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for Popen: the child gets ``sig`` when this process ends (None where
    the platform cannot do it). Runs in the child between fork and exec; the setting survives
    the exec (and the bootstrap's own exec into torchrun)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent ended before the signal was armed
            os.kill(os.getpid(), sig)

    return arm


def scratch(job_dir: Path, node: int | None = None) -> Path:
    """The job's temporary folder, or one node's inside it (created)."""
    path = job_dir / SCRATCH / (f"node-{node}" if node is not None else "")
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_scratch(job_dir: Path) -> None:
    shutil.rmtree(job_dir / SCRATCH, ignore_errors=True)


def remember(job_dir: Path, processes: dict[int, str | None]) -> None:
    """Record the job's processes (pid → start time) for :func:`stop_leftovers`."""
    known = {str(pid): started for pid, started in processes.items() if started}
    write_atomic(job_dir / PROCESSES, json.dumps(known, sort_keys=True))


def remembered(job_dir: Path) -> dict[int, str]:
    try:
        data = read_json(job_dir / PROCESSES, MAX_RECORD_BYTES)
    except (OSError, ValueError):
        return {}
    return {int(pid): started for pid, started in data.items()} if isinstance(data, dict) else {}


def stop_leftovers(job_dir: Path) -> list[int]:
    """SIGKILL every recorded process of the job that still runs (the same process: its start
    time matches); return their pids."""
    stopped = []
    for pid, started in remembered(job_dir).items():
        if start_time(pid) == started:
            kill(pid, signal.SIGKILL)
            stopped.append(pid)
    return stopped


def supervisor_gone(job_dir: Path, record: dict, when: str) -> dict:
    """The record of a job whose supervisor ended without recording the job's end (killed, or
    the machine restarted): Failed, saying so. Whatever of the job still runs is stopped, its
    temporary folders are removed and its absolute mounts released."""
    stop_leftovers(job_dir)
    remove_scratch(job_dir)
    release(job_dir.parent, job_dir.name)
    for node in record.get("nodes", []):
        if node.get("state") in ("Pending", "Running"):
            node.update(state="Failed", reason="stopped with the job's supervisor")
    reason = (
        "the job's supervisor stopped unexpectedly (killed, or the machine restarted); "
        "its processes were stopped"
    )
    return {**record, "status": "Failed", "reason": reason, "finished": when}
