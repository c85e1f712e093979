"""A local job's record (job.json): read, written whole and changed under its lock
(``update_record``), and read as hostile input: a record that is not what the local
backend writes (garbage, cut short, the wrong shapes) is an unreadable job, listed as such with
how to remove it, never an error in another job's request."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from ...errors import BackendError, StorageError
from ...files import MAX_RECORD_BYTES, read_json, write_atomic
from ..base import SUBMIT_INTERRUPTED, JobInfo, NotFound, Status
from .diskroom import give_back, keep_room
from .joblock import record_lock
from .lifetime import supervisor_gone
from .processes import running_command, runs
from .queue import supervisor_args


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_record(job_dir: Path) -> dict:
    return read_json(job_dir / "job.json", MAX_RECORD_BYTES, inside=job_dir)


def write_record(job_dir: Path, record: dict) -> None:
    write_atomic(job_dir / "job.json", json.dumps(record, indent=2), private=True)


def update_record(job_dir: Path, change: Callable[[dict], None]) -> dict:
    """Change the job's record in place with ``change``, under the record's lock (joblock.py):
    read, changed, written back only when it changed, so what another process recorded
    meanwhile is kept. The record as it is now. NotFound when the job is gone. On a full disk
    the room the supervisor kept (diskroom.py) is given back for the record."""
    with record_lock(job_dir):
        try:
            record = read_record(job_dir)
            before = json.dumps(record, sort_keys=True)
            change(record)
            if json.dumps(record, sort_keys=True) != before:
                try:
                    write_record(job_dir, record)
                except StorageError:
                    give_back(job_dir)
                    write_record(job_dir, record)
                    keep_room(job_dir)  # for the next record, when there is room again
        except FileNotFoundError:  # its folder went while the lock was taken: a delete
            raise NotFound(f"no local job named {job_dir.name!r} (it was deleted)") from None
    return record


#: The fields every view reads, and their types.
FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "status": str,
    "runtime": str,
    "num_nodes": int,
    "procs_per_node": int,
    "nodes": list,
}


class Unreadable(BackendError):
    """A job whose record cannot be read (409: it exists, but nothing but a delete works)."""

    def __init__(self, name: str, why: str):
        self.name, self.why = name, why
        super().__init__(f"the record of job {name} cannot be read ({why}); {remedy(name)}",
                         409, "UnreadableRecord")  # fmt: skip


def remedy(name: str) -> str:
    return (
        f"remove it with `kale-ext delete {name}` (or DELETE kale-ext/jobs/{name}, or the "
        "panel's Delete)"
    )


def _problem(record) -> str | None:
    """What is wrong with a parsed record, or None."""
    if not isinstance(record, dict):
        return f"it holds a JSON {type(record).__name__}, not an object"
    for key, kind in FIELDS.items():
        value = record.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"its {key} is missing or not a {getattr(kind, '__name__', kind)}"
    if record["status"] not in {s.value for s in Status}:
        return f"its status {record['status'][:40]!r} is not one a job has"
    if not all(isinstance(n, dict) and isinstance(n.get("index"), int) for n in record["nodes"]):
        return "its nodes are not a list of node states"
    if record.get("provenance") is not None and not isinstance(record["provenance"], dict):
        return "its provenance is not an object"
    return None


def read_checked(job_dir: Path, name: str) -> dict:
    """The record of job ``name``; Unreadable says why when it is not one."""
    try:
        record = read_record(job_dir)
    except OSError as e:
        raise Unreadable(name, f"job.json: {e.strerror}") from None
    except UnicodeDecodeError:
        raise Unreadable(name, "job.json is not UTF-8 text") from None
    except (ValueError, RecursionError) as e:
        why = e.msg if isinstance(e, json.JSONDecodeError) else "too deeply nested"
        raise Unreadable(name, f"job.json is not valid JSON: {why}") from None
    problem = _problem(record)
    if problem is not None:
        raise Unreadable(name, f"job.json: {problem}")
    return record


def unreadable_info(e: Unreadable, backend: str) -> JobInfo:
    """How every view lists it: status Unreadable, the reason and how to remove it."""
    return JobInfo(name=e.name, status=Status.UNREADABLE, backend=backend, reason=str(e))


def half_made(job_dir: Path) -> bool:
    """A job's folder without its record: what a submit stopped midway (killed) leaves."""
    return job_dir.is_dir() and not (job_dir / "job.json").exists()


def interrupted(job_dir: Path, record: dict) -> dict | None:
    """The record of a job recorded but never started, Failed and saying why: the process
    submitting it (the server, the command line, a sweep's driver) stopped before it started
    the job's supervisor. None for any other job, and for one whose supervisor runs but is not
    recorded yet (its submitter stopped between starting it and recording it: the supervisor
    records itself)."""
    submitter = record.get("submitter")
    if record["status"] != Status.CREATED.value or not isinstance(submitter, list):
        return None
    if len(submitter) != 2 or runs(*submitter) or running_command(supervisor_args(job_dir)):
        return None
    why = f"{SUBMIT_INTERRUPTED}: the process submitting it stopped before it started"
    return {**record, "status": "Failed", "finished": now(), "reason": f"{why}; submit it again"}


def settled(job_dir: Path, name: str) -> dict:
    """The record of job ``name`` (Unreadable, a 409 saying how to remove it, when it is not
    one), settled: a job whose submit was interrupted, or whose supervisor ended without
    recording its end, is recorded Failed saying why, under the record's lock (what the
    supervisor recorded meanwhile stays)."""
    record = read_checked(job_dir, name)
    pid = record.get("supervisor_pid")

    def settle(record: dict) -> None:  # as it reads now
        if Status(record["status"]).finished:  # the supervisor recorded its end meanwhile
            return
        if not record.get("supervisor_pid") and (failed := interrupted(job_dir, record)):
            record.update(failed)
        elif (pid := record.get("supervisor_pid")) and not runs(
            pid, record.get("supervisor_started")
        ):
            record.update(supervisor_gone(job_dir, dict(record), now()))

    started = pid and runs(pid, record.get("supervisor_started"))
    finished = Status(record["status"]).finished
    if not finished and not started and (pid or interrupted(job_dir, record)):
        update_record(job_dir, settle)
        record = read_checked(job_dir, name)
    return record
