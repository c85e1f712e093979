"""Tests of the `kale-ext` command line: `cli` runs it in this process (kale_ext.cli.main, what
the entry point calls: a new Python costs 0.5-0.8 s of CPU a call), `cli_process` as a user
runs it, a real process through the entry point."""

import contextlib
import io
import json
import os
import subprocess
import sys

from tests.conftest import notebook


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """`kale-ext ARGS` in this process, in ``cwd``: its exit code and what it printed."""
    from kale_ext.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(cwd or here)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:  # argparse: a usage error, or --help
                code = e.code if isinstance(e.code, int) else 1
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def cli_process(*args, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    """`kale-ext ARGS` as a user runs it: `python -m kale_ext.cli`, a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "kale_ext.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
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
