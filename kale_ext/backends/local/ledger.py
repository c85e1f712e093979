"""A small JSON record shared by every process that runs jobs from one jobs folder (the queue's
line, the shared mounts' counts): read and written back under the folder's lock, so other
processes wait their turn; written only when changed, removed when it holds nothing."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ...files import MAX_RECORD_BYTES, read_json, write_atomic


@contextmanager
def locked_json(
    jobs_dir: Path,
    name: str,
    fresh: Callable[[], dict],
    empty: Callable[[dict], bool],
    valid: Callable[[dict], bool] = lambda data: True,
) -> Iterator[dict]:
    """The record ``jobs_dir/name`` to read and change in place: ``fresh()`` when it is missing,
    unreadable or not ``valid``; removed when ``empty`` afterwards."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    lock = os.open(jobs_dir, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = jobs_dir / name
        try:
            data = read_json(path, MAX_RECORD_BYTES)
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or not valid(data):
            data = fresh()
        before = json.dumps(data, sort_keys=True)
        yield data
        if empty(data):  # nothing is left behind
            path.unlink(missing_ok=True)
        elif json.dumps(data, sort_keys=True) != before:
            write_atomic(path, json.dumps(data, indent=1, sort_keys=True))
    finally:
        os.close(lock)  # and with it the lock
