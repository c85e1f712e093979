"""`make check` without `make install` first: scripts/tools_ready.sh says in one line what to run
first, and lets an installed environment through."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "tools_ready.sh"


def ready(python: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), python], capture_output=True, text=True,
                          timeout=30)  # fmt: skip


def test_a_missing_python_is_one_line_saying_what_to_run(tmp_path):
    done = ready(str(tmp_path / "nowhere" / "python"))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "run 'make install' first" in line and "nowhere/python" in line


def test_a_python_without_the_tools_names_them(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python").symlink_to(sys.executable)
    done = ready(str(bin_ / "python"))
    assert done.returncode == 2
    assert "missing: ruff jlpm pytest" in done.stderr


def test_the_installed_environment_is_ready():
    bin_ = Path(sys.executable).parent
    if not all((bin_ / tool).exists() for tool in ("ruff", "jlpm", "pytest")):
        raise AssertionError(f"make install has not run for {sys.executable}")
    done = ready(sys.executable)
    assert done.returncode == 0, done.stderr
