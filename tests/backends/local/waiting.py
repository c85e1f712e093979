"""Waiting on events, never on fixed times: a condition coming true, a process exiting. Each
wait is bounded and says what it waited for."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def until(check: Callable[[], T], what: str, timeout: float = 60) -> T:
    """Call ``check`` until it returns something true, and return that; fail naming ``what``
    when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(0.02)
    return result


def exited(pid: int, timeout: float = 30) -> bool:
    """Whether process ``pid`` has exited, waiting up to ``timeout`` seconds for it to (its
    pidfd becomes readable when it does)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)
