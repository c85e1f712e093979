"""The local queue with real supervisors: jobs beyond the capacity wait as Queued, in order."""

from __future__ import annotations

import json
import os
import signal

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.records import read_record
from kale_ext.backends.submit import submit
from kale_ext.errors import ConfigError
from kale_ext.job.defaults import lab_settings_file
from tests.backends.local.waiting import exited, until
from tests.cli import cli
from tests.conftest import notebook


def gated(gate, mark=None) -> dict:
    """A job that says it started (and touches ``mark``), then waits for ``gate`` to exist."""
    touch = f"pathlib.Path(r'{mark}').touch()\n" if mark else ""
    return notebook(
        f"import pathlib, time\nprint('started', flush=True)\n{touch}"
        f"while not pathlib.Path(r'{gate}').exists():\n    time.sleep(0.05)\nprint('done')"
    )


def local(*args):
    return cli(*args, "--backend", "local")


def status(backend, name) -> Status:
    return backend.get_job(name).status


def test_capacity_two_runs_two_jobs_and_queues_the_third_until_one_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    settings = lab_settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"local_capacity": 2}')  # as the user sets it in JupyterLab
    names = []
    for k in range(3):
        path = tmp_path / f"job{k}.ipynb"
        path.write_text(json.dumps(gated(tmp_path / f"gate{k}")))
        out = local("run", path, "--name", f"job{k}")
        assert out.returncode == 0, out.stderr
        names.append(out.stdout.strip())
    backend = LocalBackend(tmp_path / "jobs")
    try:
        for name in names[:2]:
            until(lambda n=name: "started" in local("logs", n).stdout, f"{name} to start")
        listed = until(
            lambda: [
                line for line in local("jobs").stdout.splitlines() if line.startswith(names[2])
            ],
            "the third job in `kale-ext jobs`",
        )
        reason = "waiting for 1 CPU, 1st in line (2 of 2 CPUs in use)"
        assert f"Queued ({reason})" in listed[0], listed
        assert local("status", names[2]).stdout.startswith(f"{names[2]}: Queued ({reason})")
        assert (tmp_path / "jobs" / names[2] / "node-0.log").read_text() == ""

        (tmp_path / "gate0").touch()  # the first ends: the third takes its place
        assert backend.wait(names[0], timeout=60, interval=0.1).status is Status.COMPLETE
        until(lambda: "started" in local("logs", names[2]).stdout, "the third job to start")
        assert status(backend, names[1]) is Status.RUNNING
        for k in (1, 2):
            (tmp_path / f"gate{k}").touch()
        for name in names[1:]:
            assert backend.wait(name, timeout=60, interval=0.1).status is Status.COMPLETE
    finally:
        for name in names:
            local("delete", name)


@pytest.fixture
def backend(tmp_path):
    backend = LocalBackend(tmp_path / "jobs", capacity=1)
    yield backend
    for info in backend.list_jobs():
        backend.delete(info.name)


def test_a_cancelled_queued_job_never_runs(backend, tmp_path):
    first = submit(backend, gated(tmp_path / "gate")).name
    queued = submit(backend, gated(tmp_path / "never", mark=tmp_path / "ran")).name
    until(lambda: status(backend, queued) is Status.QUEUED, "the second job to queue")
    supervisor = read_record(tmp_path / "jobs" / queued)["supervisor_pid"]

    backend.delete(queued)
    assert exited(supervisor)
    (tmp_path / "gate").touch()
    assert backend.wait(first, timeout=60, interval=0.1).status is Status.COMPLETE
    later = submit(backend, gated(tmp_path / "gate")).name  # its place is free: this one runs
    assert backend.wait(later, timeout=60, interval=0.1).status is Status.COMPLETE
    assert not (tmp_path / "ran").exists()
    assert [j.name for j in backend.list_jobs()] == [later, first]


def test_a_job_whose_supervisor_died_frees_its_place(backend, tmp_path):
    first = submit(backend, gated(tmp_path / "gate")).name
    until(lambda: status(backend, first) is Status.RUNNING, "the first job to run")
    second = submit(backend, gated(tmp_path / "open")).name
    until(lambda: status(backend, second) is Status.QUEUED, "the second job to queue")
    (tmp_path / "open").touch()

    os.kill(read_record(tmp_path / "jobs" / first)["supervisor_pid"], signal.SIGKILL)
    assert backend.wait(second, timeout=60, interval=0.1).status is Status.COMPLETE
    info = backend.get_job(first)
    assert info.status is Status.FAILED
    assert info.reason.startswith("the job's supervisor stopped unexpectedly")


def test_a_job_larger_than_the_capacity_is_refused_at_submit(backend, tmp_path):
    with pytest.raises(ConfigError) as refused:
        submit(backend, gated(tmp_path / "gate"), {"nodes": 2, "name": "too-big"})
    assert refused.value.field == "nodes"
    assert "needs 2 processes at once (2 nodes × 1 per node)" in refused.value.message
    assert "more than the local capacity of 1" in refused.value.message
    assert not (tmp_path / "jobs" / "too-big").exists()
