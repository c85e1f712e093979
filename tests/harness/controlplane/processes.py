"""The control plane's processes: each in its own process group, killed by the kernel when the
harness dies (PR_SET_PDEATHSIG), its output in a log file, stopped as a group (SIGTERM, then
SIGKILL)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
_libc = None


def die_with_parent() -> None:
    """In a child before exec: the kernel sends it SIGKILL when its parent (the harness)
    exits, however the harness ends. A new session too: the child and its children are one
    process group, stopped together."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


class Process:
    """A started component: ``name``, its ``log`` file and its ``process``."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict | None = None,
                 cwd: Path | None = None):  # fmt: skip
        self.name, self.argv, self.log, self.env, self.cwd = name, argv, log, env, cwd
        self.process: asyncio.subprocess.Process | None = None
        self.started = 0.0

    async def start(self) -> Process:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as sink:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv, stdout=sink, stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                start_new_session=True, preexec_fn=die_with_parent,
            )  # fmt: skip
        self.started = time.monotonic()
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def check(self) -> None:
        """Raise, with the end of its log, when the process has ended."""
        if self.process is not None and self.process.returncode is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}; the end of "
                               f"{self.log}:\n{self.tail()}")  # fmt: skip

    async def stop(self, grace: float = 5.0) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        _killpg(self.process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), grace)
        except asyncio.TimeoutError:
            _killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
        _killpg(self.process.pid, signal.SIGKILL)  # anything left in its group


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
