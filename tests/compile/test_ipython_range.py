"""The line-magic reader (compile/linemagics.py) and the skip of IPython's transformer
(compile/transform.py: needs_ipython) give what IPython gives for every IPython the project
allows. The installed IPython (the newest pip resolves) runs their tests in the suite; this
runs the same tests again in a virtualenv with the oldest IPython that pyproject.toml allows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ["tests/compile/test_linemagics.py", "tests/compile/test_transform.py"]


def oldest_allowed_ipython() -> str:
    """The lower bound of pyproject.toml's `ipython>=X` dependency."""
    found = re.findall(r'^\s*"ipython>=([0-9.]+)[,"]', (ROOT / "pyproject.toml").read_text(), re.M)
    assert len(found) == 1, (
        f"pyproject.toml's ipython dependency has no single lower bound: {found}"
    )
    return found[0]


def test_the_oldest_allowed_ipython_reads_cells_as_kale_ext_does(tmp_path):
    oldest = oldest_allowed_ipython()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         f"ipython=={oldest}.*", "pytest", "hypothesis", "packaging"],
        check=True, timeout=600,
    )  # fmt: skip
    version = subprocess.run(
        [python, "-c", "import IPython; print(IPython.__version__)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert version.startswith(f"{oldest}."), version
    run = subprocess.run(
        [python, "-m", "pytest", *TESTS, "-q", "-p", "no:cacheprovider", "-o", "addopts="],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert run.returncode == 0, f"with IPython {version}:\n{run.stdout[-4000:]}{run.stderr[-2000:]}"
    assert " passed" in run.stdout and " failed" not in run.stdout
