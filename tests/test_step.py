"""scripts/step.py, which `make demo` runs its installs through: a slow step is never silent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

STEP = Path(__file__).parents[1] / "scripts" / "step.py"


def test_a_running_step_says_so_until_it_ends(tmp_path):
    """The command waits for a file the test makes only once a progress line has come."""
    gate = tmp_path / "go"
    wait = f"import os\nwhile not os.path.exists({str(gate)!r}): os.sched_yield()"
    proc = subprocess.Popen(
        [sys.executable, STEP, "--every", "0.05", "installing x", sys.executable, "-c", wait],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "==> installing x\n"
    assert proc.stdout.readline().startswith("    ... installing x (")  # still running
    gate.touch()
    rest = proc.stdout.read().splitlines()
    assert proc.wait() == 0
    assert rest[-1].startswith("    done in ") and rest[-1].endswith(" s")


@pytest.mark.parametrize(
    "command, code, says",
    [
        (["-c", "raise SystemExit(3)"], 3, "FAILED (exit code 3) in "),
        (["-c", "pass"], 0, "done in "),
    ],
)
def test_a_step_ends_with_its_commands_exit_code(command, code, says):
    out = subprocess.run(
        [sys.executable, STEP, "x", sys.executable, *command], capture_output=True, text=True
    )
    assert out.returncode == code and out.stdout.splitlines()[-1].strip().startswith(says)


def test_a_missing_command_is_said_not_a_traceback():
    out = subprocess.run([sys.executable, STEP, "x", "no-such-tool-here"], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 127 and "x: cannot run no-such-tool-here" in out.stderr
    assert "Traceback" not in out.stderr
