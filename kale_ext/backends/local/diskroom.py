"""A local job on a full disk: its nodes' tracebacks and error records cannot be written, and
neither can its record. The supervisor keeps a little room in the job's folder (RESERVE) that it
gives back before it records the end, and a failure that happened on a full disk says so."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..base import Failure

#: Kept free for the job's last record (job.json with its failure is a few KiB).
RESERVE = ".kale_ext-reserve"
RESERVE_BYTES = 256 * 1024
#: A write of this much fails on a disk that counts as full (smaller than a traceback's
#: few KiB would not tell why the traceback is missing).
PROBE_BYTES = 64 * 1024
#: What an exception from a full disk reads as.
NO_SPACE = "[Errno 28]"


def keep_room(job_dir: Path) -> None:
    """Hold RESERVE_BYTES in the job's folder (nothing when the disk is full already)."""
    try:
        with open(job_dir / RESERVE, "wb") as f:
            f.write(bytes(RESERVE_BYTES))
    except OSError:
        (job_dir / RESERVE).unlink(missing_ok=True)


def give_back(job_dir: Path) -> None:
    (job_dir / RESERVE).unlink(missing_ok=True)


def full(job_dir: Path) -> bool:
    """Whether the job's folder cannot take PROBE_BYTES more now (no space, or over quota)."""
    probe = job_dir / ".kale_ext-room"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as e:
        return e.errno in (28, 122)  # ENOSPC, EDQUOT
    try:
        os.write(fd, bytes(PROBE_BYTES))
        os.fsync(fd)
        return False
    except OSError as e:
        return e.errno in (28, 122)
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def on_full_disk(failure: Failure, job_dir: Path) -> Failure:
    """The failure of a job that died of a full disk, saying so first: `the disk is full: no
    space left in JOB_DIR (node 0, rank 0: exited with code 1 (no traceback))`."""
    said = f"the disk is full: no space left in {job_dir} ({failure.summary})"
    return replace(failure, summary=said, reason=failure.reason or "the disk is full")


def died_of_full_disk(failure: Failure, was_full: bool) -> bool:
    """A failure with no exception while the disk was full, or one whose exception says it."""
    return NO_SPACE in (failure.exception or "") or (was_full and not failure.exception)
