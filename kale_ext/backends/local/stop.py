"""Stop a local job and keep it, saying why (someone stopped it, a sweep stopped a trial early
or was cancelled): its supervisor stops the nodes and records the end as for a cancel; the reason
then says what happened, and the nodes it stopped read Stopped. Or stop it and remove its folder
(a delete)."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

from ..base import Status
from .lifetime import remembered, stop_leftovers
from .outputs import gather, keep_note
from .processes import alive, kill_group, runs, terminate
from .queue import leave
from .records import Unreadable, now, read_checked, read_record, update_record
from .supervisor import STOP_REASON, SUPERVISOR_GRACE
from .volumes import free_mounts


def remove_job(job_dir: Path, name: str) -> Path | None:
    """Stop job ``name`` (its supervisor, then any node left) and remove ``job_dir``, even when
    its record cannot be read; its outputs folder (gathered first), or None."""
    try:
        record = read_checked(job_dir, name)
    except Unreadable:  # its processes are still known (stop_leftovers): remove the rest
        record = {}
    supervisor = record.get("supervisor_pid"), record.get("supervisor_started")
    if runs(*supervisor):  # it stops every node, then exits
        terminate(record["supervisor_pid"], grace=SUPERVISOR_GRACE)
    known = remembered(job_dir)  # pid -> start time: a pid reused since is another's
    stop_leftovers(job_dir)
    try:
        nodes = read_checked(job_dir, name)["nodes"]
    except Unreadable:
        nodes = []
    for n in nodes:
        pid = n.get("pid")
        if alive(pid) and (pid not in known or runs(pid, known[pid])):
            kill_group(pid, signal.SIGKILL)
    final = Path(record["outputs"]) if record.get("outputs") else None
    if final is not None:
        gather(job_dir, final)  # what a supervisor that stopped early left behind
    free_mounts(job_dir)
    shutil.rmtree(job_dir, ignore_errors=True)
    return final


def delete_job(jobs_dir: Path, name: str, outputs: bool) -> str | None:
    """Remove job ``name`` (:func:`remove_job`) and its place in line; its outputs deleted when
    ``outputs``, else kept and noted (`outputs NAME` still finds them): what became of them."""
    final = remove_job(jobs_dir / name, name)
    leave(jobs_dir, name)
    if final is None or not final.is_dir():
        return None
    keep_note(jobs_dir, name, None if outputs else final)
    if outputs:
        shutil.rmtree(final, ignore_errors=True)
        return f"deleted its outputs in {final}"
    return f"kept its outputs in {final} (delete them too with --outputs)"


def stop_job(job_dir: Path, reason: str) -> None:
    """Stop the job in ``job_dir`` (its supervisor, then its nodes) and record ``reason``. A
    job that ends by itself meanwhile keeps its end: the supervisor records either its own end
    or the stop, never half of each (both change the record under its lock)."""
    record = read_record(job_dir)
    if Status(record["status"]).finished:
        return
    pid, started = record.get("supervisor_pid"), record.get("supervisor_started")
    if runs(pid, started):

        def asked(record: dict) -> None:
            if not Status(record["status"]).finished:  # else it ended as this stop began
                record[STOP_REASON] = reason  # it records the end with it

        if STOP_REASON not in update_record(job_dir, asked):
            return
        terminate(pid, grace=SUPERVISOR_GRACE)  # it stops every node, records the end, exits

    def stopped(record: dict) -> None:
        if Status(record["status"]) is Status.COMPLETE:  # it ended by itself before the signal
            record.pop(STOP_REASON, None)
            return
        if not Status(record["status"]).finished:  # it was gone, or ended before recording
            record.update(status=Status.FAILED.value, finished=now())
        for node in record.get("nodes", []):
            if node.get("state") != "Succeeded":
                node.update(state="Stopped", reason=None)
        record.pop(STOP_REASON, None)
        record.update(reason=reason, failure=None)

    update_record(job_dir, stopped)
