"""A real MLflow tracking server for tests: SQLite store, artifacts served by the server, on a
loopback port the OS picks. Start one per test module (it takes seconds)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextmanager
def mlflow_server(folder: Path, timeout: float = 180) -> Iterator[str]:
    """``mlflow server`` storing into ``folder``; yields its URL once it answers, stops it
    (and every process it started) at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
               "--artifacts-destination", str(folder / "artifacts")]  # fmt: skip
    log = open(folder / "server.log", "wb")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not answers(url):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the MLflow server did not start:\n{tail}")
            time.sleep(0.2)
        yield url
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):  # the server and its workers
            try:
                os.killpg(server.pid, sig)
                server.wait(timeout=20)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        log.close()
