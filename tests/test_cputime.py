"""`pytest --cpu-durations=N` lists the tests that took the most CPU time, their own and their
waited-for processes', from -n workers too; without the option nothing is printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BUSY = """
import subprocess, sys, time

def test_spins_in_a_process():
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                    "while time.process_time() - t < 0.6: pass"], check=True)

def test_sleeps():
    time.sleep(0.3)

def test_nothing():
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_the_tests_that_took_most_cpu_come_first(tmp_path, workers):
    (tmp_path / "test_busy.py").write_text(BUSY)
    out = pytest_on(tmp_path, "--cpu-durations=2", *workers)
    assert out.returncode == 0, out.stdout + out.stderr
    summary = out.stdout[out.stdout.index("CPU time: 3 tests") :].splitlines()
    assert re.fullmatch(r"CPU time: 3 tests, \d+\.\d s in all =+", summary[0]), summary[0]
    first = re.fullmatch(r" *(\d+\.\d+)s cpu  test_busy.py::test_spins_in_a_process", summary[1])
    assert first and float(first.group(1)) >= 0.6, summary
    assert "test_sleeps" not in summary[1] and len(summary) >= 3
    assert not summary[3:] or "cpu  test_busy.py" not in summary[3]  # only the 2 asked for


def test_without_the_option_nothing_is_listed(tmp_path):
    (tmp_path / "test_busy.py").write_text("def test_nothing():\n    pass\n")
    out = pytest_on(tmp_path)
    assert out.returncode == 0 and "CPU time" not in out.stdout


def pytest_on(folder, *args) -> subprocess.CompletedProcess:
    """pytest in ``folder`` with only this plugin (and xdist) loaded."""
    options = ["-p", "tests.cputime", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder)]
    return subprocess.run([sys.executable, "-m", "pytest", *options, *args], cwd=folder,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
