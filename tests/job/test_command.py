"""The TrainJob's command runs the compiled function byte-exact.

The Kubeflow SDK embeds the source in an unquoted bash heredoc: bash rewrites `$HOME`, `$5` and
backslashes, runs backticks and `$(...)`, and a line `EOM` ends the script. Here the generated
command runs through bash, as a container would run it, with torchrun and the PET_* variables
the Trainer torch plugin sets, and must print exactly what a direct call prints.
"""

import contextlib
import importlib.util
import io
import os
import shlex
import socket
import subprocess

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import training_command
from tests.conftest import notebook

TRICKY = (
    'money = "cost: $5 and $HOME"\n'
    'windows = "C:\\\\temp\\\\new"\n'
    'ticks = "`echo injected`"\n'
    'subshell = "$(echo also-injected)"\n'
    'heredoc = """\nEOM\nEOF\n\'EOM\'\n"""\n'
    "for word in (money, windows, ticks, subshell, heredoc, 'ünïcödé ✓ 東京', 'a\tb'):\n"
    "\tprint(repr(word), suffix)\n"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_command_runs_the_function_byte_exact(tmp_path):
    job = compile_notebook(notebook(("suffix = '$PATH `x`'", ["parameters"]), TRICKY))
    assert "$HOME" in job.source and "\nEOM\n" in job.source and "\t" in job.source

    spec = build_job_spec(job, {"parameters": {"suffix": "\\n $(id) `id` 'q' \"dq\""}})
    module = write_module(job, tmp_path)
    loaded = importlib.util.spec_from_file_location("tricky", module)
    mod = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(mod)
    direct = io.StringIO()
    with contextlib.redirect_stdout(direct):
        getattr(mod, job.function_name)(**spec.func_args)

    pet = {"PET_NNODES": "1", "PET_NPROC_PER_NODE": "1", "PET_NODE_RANK": "0",
           "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": str(free_port())}  # fmt: skip
    command = training_command(spec)
    via_bash = subprocess.run(
        ["bash", "-c", shlex.join(command)],
        env={**os.environ, **pet},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert via_bash.returncode == 0, via_bash.stderr
    prefix = "[default0]:"  # torchrun --tee marks each line with its local rank
    lines = via_bash.stdout.splitlines(keepends=True)
    assert all(line.startswith(prefix) for line in lines), lines
    assert "".join(line[len(prefix) :] for line in lines) == direct.getvalue()
    assert "$(echo also-injected)" in via_bash.stdout and "`echo injected`" in via_bash.stdout
    assert os.environ["HOME"] not in via_bash.stdout


def test_command_is_plain_argv_without_a_shell():
    job = compile_notebook(notebook("print(1)"))
    command = training_command(build_job_spec(job))
    assert command[:2] == ["python", "-c"] and "bash" not in command


def test_missing_packages_are_installed_before_the_run(tmp_path):
    """The bootstrap installs only what is missing; a present pin installs nothing."""
    job = compile_notebook(notebook(("import packaging", ["imports"]), "print('ok')"))
    assert any(p.startswith("packaging==") for p in job.packages)
    spec = build_job_spec(job)
    spec.runtime = type(spec.runtime)(name="plain", framework="xgboost")  # launcher: python
    out = subprocess.run(training_command(spec), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n"  # no "installing" line: nothing was missing
