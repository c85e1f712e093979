"""Items 10 and 14 from the command line: `--gpu 0` is a choice, `--allow-cpu-for-gpu` runs a GPU
job here, `run` shows the compile's warnings, and the jobs table keeps its columns."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import notebook
from tests.robustness.test_job_inputs import sdk_notebook


def cli(*args):
    return subprocess.run([sys.executable, "-m", "kale_ext.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture
def jobs_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    yield tmp_path
    for job in (tmp_path / "jobs").glob("*/job.json"):
        cli("delete", job.parent.name, "--backend", "local")


def test_10_gpu_0_on_the_command_line_overrides_a_notebooks_gpu(jobs_env, write_nb):
    nb = notebook("print(1)")
    nb["metadata"]["kale_ext"] = {"options": {"gpu": 1}}
    path = write_nb(nb)
    out = cli("compile", path, "--trainjob", "--json", "--gpu", "0", "--backend", "local",
              "-o", jobs_env / "out")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "gpu" not in json.dumps(json.loads(out.stdout)["trainjob"]["spec"]["trainer"])


def test_10_allow_cpu_for_gpu_is_a_flag(jobs_env, write_nb):
    path = write_nb(
        notebook("import os\nprint('visible', repr(os.environ['CUDA_VISIBLE_DEVICES']))")
    )
    refused = cli("run", path, "--backend", "local", "--gpu", "1")
    assert refused.returncode == 1 and "this machine has no GPU" in refused.stderr
    out = cli("run", path, "--backend", "local", "--gpu", "1", "--allow-cpu-for-gpu", "--follow")
    assert out.returncode == 0, out.stderr
    assert "visible ''" in out.stdout


def test_14_run_shows_the_compile_warnings(jobs_env, write_nb):
    out = cli("run", write_nb(sdk_notebook("")), "--backend", "local", "--follow")
    assert out.returncode == 0, out.stderr
    assert "warning: cell 2: this cell drives TrainerClient" in out.stderr


def test_14_the_jobs_table_keeps_its_columns_with_long_names(jobs_env, write_nb):
    path = write_nb(notebook("print(1)"))
    long = "a-long-training-job-name-that-goes-on-x"
    for name in ("short", long):
        assert cli("run", path, "--backend", "local", "--name", name, "--follow").returncode == 0
    lines = cli("jobs", "--backend", "local").stdout.splitlines()
    status = lines[0].index("STATUS")
    assert {line[status:].split()[0] for line in lines[1:]} == {"Complete"}
    assert sorted(line.split()[0] for line in lines[1:]) == sorted(["short", long])


def test_14_a_package_given_twice_on_the_command_line_is_refused(jobs_env, write_nb):
    out = cli("run", write_nb(notebook("print(1)")), "--backend", "local",
              "--package", "numpy", "--package", "NumPy>=1")  # fmt: skip
    assert out.returncode == 1 and "listed twice" in out.stderr
