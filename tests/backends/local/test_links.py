"""Absolute mounts shared between local jobs, with real jobs: two jobs mounting the same folder
at one path run at the same time, a second folder at a held path is refused before its job
starts (naming both folders), and what a killed supervisor left is removed at the next start."""

from __future__ import annotations

import json
import os
import signal

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.links import LEDGER
from kale_ext.backends.submit import submit
from kale_ext.errors import ConfigError
from tests.backends.local.waiting import exited, until
from tests.conftest import notebook

#: Each job signs the mounted folder, then waits (bounded) until ``want`` jobs have signed it
#: and the file ``hold`` (if any) exists: two jobs pass only if they ran at the same time.
MEETS = notebook(
    ("import os\nimport time", ["imports"]),
    ("data = '/none'\nsign = 'a'\nwant = 1\nhold = ''", ["parameters"]),
    "open(os.path.join(data, 'here-' + sign), 'w').write(sign)\n"
    "end = time.monotonic() + 120\n"
    "def signed():\n"
    "    return sorted(f for f in os.listdir(data) if f.startswith('here-'))\n"
    "while len(signed()) < want or (hold and not os.path.exists(hold)):\n"
    "    assert time.monotonic() < end, 'the other job never came'\n"
    "    time.sleep(0.05)\n"
    "print('saw', open(os.path.join(data, 'x.csv')).read().strip(), signed())",
)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project" / "meet.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(MEETS))
    for folder in ("datasets", "other"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.csv").write_text(folder)
    (tmp_path / "mnt").mkdir()
    return path


def options(tmp_path, folder: str, **parameters) -> dict:
    mount = tmp_path / "mnt" / "data"
    return {
        "volumes": [f"pvc:datasets:{mount}={tmp_path / folder}"],
        "parameters": {"data": str(mount), **parameters},
    }


def saw(backend, name) -> str:
    return next(line.text for line in backend.logs(name) if line.text.startswith("saw"))


def running(backend, name) -> bool:
    return backend.get_job(name).status is Status.RUNNING


def test_two_jobs_mounting_one_folder_at_one_path_run_at_once(backend, project, tmp_path):
    first = submit(backend, project, options(tmp_path, "datasets", sign="a", want=2)).name
    second = submit(backend, project, options(tmp_path, "datasets", sign="b", want=2)).name
    for name in (first, second):
        info = backend.wait(name, timeout=180, interval=0.1)
        assert info.status is Status.COMPLETE, info.reason
        assert saw(backend, name) == "saw datasets ['here-a', 'here-b']"
    mount = tmp_path / "mnt" / "data"
    assert not mount.is_symlink() and not mount.exists()  # the last job removed it
    assert not (backend.jobs_dir / LEDGER).exists()
    assert sorted(os.listdir(tmp_path / "datasets")) == ["here-a", "here-b", "x.csv"]


def test_another_folder_at_a_held_path_is_refused_naming_both(backend, project, tmp_path):
    hold = tmp_path / "go"
    first = submit(backend, project, options(tmp_path, "datasets", hold=str(hold))).name
    until(lambda: running(backend, first), f"{first} to run")
    with pytest.raises(ConfigError) as refused:
        submit(backend, project, options(tmp_path, "other"))
    assert refused.value.field == "volume_mounts[0]"
    assert refused.value.message == (
        f"{tmp_path / 'mnt' / 'data'} is {tmp_path / 'datasets'} for the job {first}, which has "
        f"not ended, and this job mounts {tmp_path / 'other'} there: one path cannot stand for "
        "two folders; mount it elsewhere, or wait for that job to end"
    )
    assert [job.name for job in backend.list_jobs()] == [first]  # the refused one left nothing
    hold.touch()
    info = backend.wait(first, timeout=180, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    assert saw(backend, first) == "saw datasets ['here-a']"  # its folder stayed its own
    assert not (tmp_path / "mnt" / "data").is_symlink()


def test_a_killed_supervisors_link_is_removed_at_the_next_start(backend, project, tmp_path):
    mount = tmp_path / "mnt" / "data"
    hold = tmp_path / "never"
    first = submit(backend, project, options(tmp_path, "datasets", hold=str(hold))).name
    until(lambda: running(backend, first), f"{first} to run")
    pid = json.loads((backend.jobs_dir / first / "job.json").read_text())["supervisor_pid"]
    os.kill(pid, signal.SIGKILL)
    assert exited(pid)
    assert os.readlink(mount) == str(tmp_path / "datasets")  # left on the machine, for now
    second = submit(backend, project, options(tmp_path, "other")).name  # another folder there
    info = backend.wait(second, timeout=180, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    assert saw(backend, second) == "saw other ['here-a']"
    assert not mount.is_symlink() and not (backend.jobs_dir / LEDGER).exists()
    assert backend.get_job(first).status is Status.FAILED


def test_a_sweep_two_at_a_time_shares_its_volume(backend, project, tmp_path, monkeypatch):
    from kale_ext.runs import sweep

    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(backend.jobs_dir))
    mount = tmp_path / "mnt" / "data"
    text = json.dumps(MEETS).replace("data = '/none'", f"data = {str(mount)!r}")
    swept = project.with_name("swept.ipynb")  # its defaults: the mount, and wait for 2 signs
    swept.write_text(text.replace("want = 1", "want = 2"))
    volume = {"volumes": options(tmp_path, "datasets")["volumes"]}
    name = sweep.start(backend, swept, {"sign": "a,b"}, volume, parallel=2)["name"]
    try:
        record = until(
            lambda: (r := sweep.get(name))["status"] not in ("Starting", "Running") and r,
            f"sweep {name} to end",
            timeout=240,
        )
    finally:
        if sweep.get(name)["status"] in ("Starting", "Running"):
            sweep.cancel(name)
    assert record["status"] == "Complete", record
    for trial in record["trials"]:
        assert trial["status"] == "Complete", trial
        assert saw(backend, trial["job"]) == "saw datasets ['here-a', 'here-b']"
    assert not mount.is_symlink() and not (backend.jobs_dir / LEDGER).exists()
