"""The real control plane as a pytest fixture: ``control_plane`` starts
``python -m tests.harness.controlplane`` once per session (building the binaries first when they
are not cached: see CONTRIBUTING.md for how long that takes) and yields it; its ``kubeconfig``
is what a test points ``KUBECONFIG`` at (``control_plane_env`` does it for one test)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 3600.0  # a cold build of every binary included


@dataclass
class RunningControlPlane:
    process: subprocess.Popen
    kubeconfig: Path
    folder: Path
    server: str = ""
    lines: list[str] = field(default_factory=list)

    def pids(self) -> set[int]:
        """Every process of the control plane (its own and its descendants')."""
        out, todo = set(), [self.process.pid]
        while todo:
            pid = todo.pop()
            out.add(pid)
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            todo += [int(c) for c in children]
        return out


def start_control_plane(folder: Path, timeout: float = READY_TIMEOUT,
                        with_kueue: bool = True) -> RunningControlPlane:  # fmt: skip
    """Start the control plane in a process of its own; return once it printed ``ready``."""
    folder.mkdir(parents=True, exist_ok=True)
    kubeconfig = folder / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.harness.controlplane", "--kubeconfig", str(kubeconfig),
         "--folder", str(folder / "state"), *([] if with_kueue else ["--no-kueue"])],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    running = RunningControlPlane(process, kubeconfig, folder / "state")
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in process.stdout:
            running.lines.append(line.rstrip("\n"))
            lines.put(line)
            sys.stderr.write(f"[controlplane] {line}")
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
        except queue.Empty:
            stop_control_plane(running)
            raise TimeoutError(f"no `ready` from the control plane after {timeout:.0f} s") from None
        if line is None:
            process.wait()
            raise RuntimeError("the control plane ended before it was ready:\n"
                               + "\n".join(running.lines[-40:]))  # fmt: skip
        if line.startswith("ready "):
            running.server = line.split()[1]
            return running


def stop_control_plane(running: RunningControlPlane, timeout: float = 60) -> int:
    if running.process.poll() is None:
        running.process.send_signal(signal.SIGTERM)
        try:
            running.process.wait(timeout)
        except subprocess.TimeoutExpired:
            running.process.kill()
            running.process.wait()
    return running.process.returncode


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory):
    """The real control plane (kube-apiserver, kube-controller-manager, kube-scheduler, etcd,
    JobSet, Kubeflow Trainer v2.3.0, the process kubelet), once per session."""
    pytest.importorskip("aiohttp", reason="the process kubelet serves logs with aiohttp")
    running = start_control_plane(tmp_path_factory.mktemp("controlplane"))
    yield running
    stop_control_plane(running)


@pytest.fixture
def control_plane_env(control_plane, monkeypatch):
    """KUBECONFIG points at the control plane for this test (and the processes it starts)."""
    monkeypatch.setenv("KUBECONFIG", str(control_plane.kubeconfig))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return control_plane


__all__ = ["control_plane", "control_plane_env", "start_control_plane", "stop_control_plane",
           "os"]  # fmt: skip
