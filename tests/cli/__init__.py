"""Tests of the `kale-ext` command line, run as a user runs it: a real process."""

import json
import subprocess
import sys

from tests.conftest import notebook


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "kale_ext.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def project(root):
    """A notebook importing a module beside it and reading a CSV beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "data.csv").write_text("a\n1\n3\n")
    nb = notebook(
        ("from helpers import double", ["imports"]), "print(double(len(open('data.csv').read())))"
    )
    path = root / "train.ipynb"
    path.write_text(json.dumps(nb))
    return path
