"""One thing at a time on a local job, whichever process does it (the CLI, the Jupyter server's
threads, the magics, a sweep's driver, the job's own supervisor).

Two locks, both ``flock``s, as the jobs folder's ledger is (ledger.py):

- **an action's** (:func:`acting_on`): stop and delete hold an exclusive lock of the job's
  folder from start to end, so the second of two that meet waits for the first to finish,
  then finds the job as the first left it: gone (a 404) or ended (a 409). One that waits past
  ``ACTION_WAIT`` is a 409 saying another action is under way.
- **the record's** (:func:`record_lock`): every change to ``job.json`` reads it and writes it
  back under a short lock of ``RECORD_LOCK`` in the folder, so a change made meanwhile (the
  supervisor recording the end, a stop recording its reason) is never written over. An action
  never holds it while it waits for the supervisor to end.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..base import BackendError, NotFound

#: How long an action on a job waits for another on the same job (a stop gives the supervisor
#: 15 s to end its nodes) before it is refused with a 409.
ACTION_WAIT = 40.0
#: The file in a job's folder whose lock guards its record.
RECORD_LOCK = ".record.lock"


def _gone(name: str) -> NotFound:
    return NotFound(f"no local job named {name!r} (it was deleted)")


def _lock(fd: int, wait: float, busy) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise busy() from None
            time.sleep(0.02)


@contextmanager
def acting_on(job_dir: Path, name: str, wait: float = ACTION_WAIT) -> Iterator[None]:
    """Hold job ``name``'s action lock while the block runs. NotFound when the job is gone
    (before, or by the action it waited for); a 409 when another action holds it past
    ``wait`` seconds."""
    try:
        fd = os.open(job_dir, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        raise _gone(name) from None
    try:
        _lock(fd, wait, lambda: BackendError(
            f"another action on job {name} (a stop or a delete) is still under way: try again "
            "when it has ended", 409, "Busy"))  # fmt: skip
        try:  # the folder it locked is still the job's (not deleted, nor made again since)
            same = os.stat(job_dir).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if not same or not (job_dir / "job.json").is_file():
            raise _gone(name)
        yield
    finally:
        os.close(fd)  # and with it the lock


@contextmanager
def record_lock(job_dir: Path) -> Iterator[None]:
    """Hold the lock of the record in ``job_dir`` (made with it at submit; made here for a job
    recorded before). NotFound when the job is gone: no lock is made in a folder being
    deleted."""
    path = job_dir / RECORD_LOCK
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        if not (job_dir / "job.json").is_file():
            raise _gone(job_dir.name) from None
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:
            raise _gone(job_dir.name) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for a read and a write of a small file
        yield
    finally:
        os.close(fd)
