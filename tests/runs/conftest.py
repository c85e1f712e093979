"""A tiny plain-Python notebook that reports a metric, and waits for sweeps to end."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from kale_ext.backends.local import LocalBackend
from kale_ext.runs import sweep
from tests.conftest import notebook

#: accuracy = quality at every step; a good trial (quality >= 0.5) reports 5 steps at once, a
#: bad one keeps reporting (up to 10 s) until it is stopped.
TRAINING = """\
import time
from kale_ext import report
steps = 5 if quality >= 0.5 else 200
for step in range(steps):
    report(step=step, accuracy=quality)
    if quality < 0.5:
        time.sleep(0.05)
print("trained", quality, layers)
"""


@pytest.fixture
def sweep_nb(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = tmp_path / "nb.ipynb"
    cells = (("quality = 0.5\nlayers = 1\n", ["parameters"]), (TRAINING, ["training"]))
    path.write_text(json.dumps(notebook(*cells)))
    yield path
    sweeps = tmp_path / "jobs" / ".sweeps"
    for name in os.listdir(sweeps) if sweeps.is_dir() else []:
        stop_driver(name)
    backend = LocalBackend(tmp_path / "jobs")
    for job in backend.list_jobs():  # nothing left running
        if not job.status.finished:
            backend.delete(job.name)


@pytest.fixture
def backend(sweep_nb) -> LocalBackend:
    return LocalBackend(sweep_nb.parent / "jobs")


def wait_for(check, timeout: float = 180, what: str = "the sweep"):
    """Poll ``check()`` until it returns something true (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def finished(name: str, timeout: float = 180) -> dict:
    def ended():
        record = sweep.get(name)
        return record if record["status"] not in ("Starting", "Running") else None

    return wait_for(ended, timeout, f"sweep {name} ending")


def stop_driver(name: str) -> None:
    """Kill the sweep's driver (as a crash or a server restart would), and wait until it is gone."""
    try:
        me = json.loads((sweep.rec.sweep_dir(name) / sweep.DRIVER).read_text())
    except OSError:
        return
    try:
        os.kill(me["pid"], signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_for(lambda: not sweep.driver_running(name), 30, "the driver ending")
