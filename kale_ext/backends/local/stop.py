"""Stop a local job and keep it, saying why (someone stopped it, a sweep stopped a trial early
or was cancelled): its supervisor stops the nodes and records the end as for a cancel; the reason
then says what happened, and the nodes it stopped read Stopped."""

from __future__ import annotations

from pathlib import Path

from ..base import Status
from .processes import runs, terminate
from .supervisor import STOP_REASON, now, read_record, write_record


def stop_job(job_dir: Path, reason: str) -> None:
    """Stop the job in ``job_dir`` (its supervisor, then its nodes) and record ``reason``."""
    record = read_record(job_dir)
    if Status(record["status"]).finished:
        return
    pid, started = record.get("supervisor_pid"), record.get("supervisor_started")
    if runs(pid, started):
        write_record(job_dir, {**record, STOP_REASON: reason})  # it records the end with it
        terminate(pid, grace=15)  # it stops every node and records the end, then exits
    record = read_record(job_dir)
    if not Status(record["status"]).finished:  # it was gone, or ended before recording
        record.update(status=Status.FAILED.value, finished=now())
    for node in record.get("nodes", []):
        if node.get("state") != "Succeeded":
            node.update(state="Stopped", reason=None)
    record.pop(STOP_REASON, None)
    record.update(reason=reason, failure=None)
    write_record(job_dir, record)
