"""Processes of local jobs: liveness that knows zombies, process trees from /proc, and kills
that tolerate processes already gone (a job's rendezvous port: ports.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


class NotStarted(Exception):
    """A job's process could not be started: which, its program, and why (the system's
    words)."""


#: The most of a failed preexec's reason kept (bytes).
REASON_BYTES = 500


def start(what: str, argv: list[str], **options: Any) -> subprocess.Popen:
    """``subprocess.Popen(argv, **options)``; NotStarted when it cannot start (a program gone
    since the job was submitted, a folder it needs gone, a preexec that failed), naming
    ``what`` (`node 1`, `mpirun`) and the program, and why: for a preexec, its own exception,
    which the child writes to a pipe (Python says only "Exception occurred in preexec_fn")."""
    preexec = options.pop("preexec_fn", None)
    read_end, write_end = os.pipe()

    def reporting() -> None:
        try:
            preexec()
        except BaseException as e:
            os.write(write_end, f"{type(e).__name__}: {e}".encode()[:REASON_BYTES])
            raise

    try:
        try:
            return subprocess.Popen(argv, preexec_fn=reporting if preexec else None, **options)
        finally:
            os.close(write_end)  # the child's copy went with it: a read ends at what it wrote
    except (OSError, subprocess.SubprocessError) as e:
        reason = os.read(read_end, REASON_BYTES).decode(errors="replace").strip()
        why = f"{str(e).rstrip('.')}: {reason}" if reason else str(e)
        raise NotStarted(f"{what} could not be started ({argv[0]}): {why}") from e
    finally:
        os.close(read_end)


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name, or None when there is no such
    process (or no /proc)."""
    try:
        text = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def alive(pid: int | None) -> bool:
    """Whether ``pid`` runs: a zombie (exited, not yet reaped by its parent) does not."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat(pid)
    return fields is None or fields[0] != "Z"


def start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot): tells a process from a reused PID."""
    fields = _stat(pid)
    return fields[19] if fields else None


def runs(pid: int | None, started: str | None) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs (None: any process
    with that pid): a PID reused after a restart is not the same process."""
    return alive(pid) and (started is None or start_time(pid) == started)


def running_command(tail: list[str]) -> bool:
    """Whether a process runs whose command line ends with ``tail`` (False where there is no
    /proc). Reads every process's command line: for the rare question no pid answers."""
    want = "\0".join(tail).encode() + b"\0"
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return False
    for entry in entries:
        try:
            line = Path("/proc", entry, "cmdline").read_bytes()
        except OSError:
            continue
        if (line == want or line.endswith(b"\0" + want)) and alive(int(entry)):
            return True
    return False


def descendants(roots: set[int]) -> dict[int, str]:
    """Live descendants of ``roots`` with their start times (empty where there is no /proc)."""
    children: dict[int, list[tuple[int, str]]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    for entry in entries:
        fields = _stat(entry)
        if fields:
            children.setdefault(int(fields[1]), []).append((int(entry), fields[19]))
    found: dict[int, str] = {}
    todo = list(roots)
    while todo:
        for child, started in children.get(todo.pop(), []):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found


def kill(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid``, if it still exists."""
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to every process of the group ``pgid``, if any is left."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def terminate(pid: int, grace: float) -> None:
    """SIGTERM ``pid``, give it ``grace`` seconds to finish, then SIGKILL it."""
    kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(pid):
        kill(pid, signal.SIGKILL)
