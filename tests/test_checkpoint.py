"""kale_ext/checkpoint.py: the in-job checkpoints (the code a compiled job carries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kale_ext import checkpoint
from kale_ext.checkpoint import (
    DIR_ENV,
    KEEP_ENV,
    MANIFEST,
    RESTART_ENV,
    RUN_ENV,
    SETTINGS,
    _kale_ext_checkpoint,
)


def api(folder, reports=None, **env):
    """The namespace a job gets, on ``folder`` (None: not set), its reports kept in ``reports``."""
    environ = {**({DIR_ENV: str(folder)} if folder is not None else {}), **env}
    sent = reports if reports is not None else []
    return _kale_ext_checkpoint(environ, SETTINGS, lambda **r: sent.append(r))


def saved_files(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("step-"))


@pytest.fixture
def no_torch(monkeypatch):
    """A job that never imported torch: plain values go as JSON."""
    monkeypatch.setitem(sys.modules, "torch", None)


def test_first_run_has_no_checkpoint(tmp_path):
    assert api(tmp_path / "ckpt").latest() is None


def test_save_then_latest_gives_the_tensors_back_on_the_cpu(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2)
    reports: list[dict] = []
    first = api(tmp_path, reports)
    path = first.save({"model": model.state_dict(), "epoch": 4, "name": "digits"}, step=4)
    assert path == str(tmp_path / "step-000000004.pt")
    state = api(tmp_path).latest()  # a later job of the lineage
    assert state["epoch"] == 4 and state["name"] == "digits"
    for key, value in model.state_dict().items():
        assert torch.equal(state["model"][key], value) and state["model"][key].device.type == "cpu"
    assert reports == [{"step": 4, "checkpoint_step": 4}]


def test_the_manifest_says_step_file_and_time(tmp_path, no_torch):
    api(tmp_path).save({"epoch": 7}, step=7)
    entry = json.loads((tmp_path / MANIFEST).read_text())
    assert entry["step"] == 7 and entry["file"] == "step-000000007.json"
    assert entry["time"].endswith("Z") and entry["unix_time"] > 0
    assert [s["step"] for s in entry["saved"]] == [7]


def test_only_the_last_k_are_kept(tmp_path, no_torch):
    job = api(tmp_path)
    for step in range(5):
        job.save({"epoch": step}, step=step)
    assert saved_files(tmp_path) == ["step-000000003.json", "step-000000004.json"]
    three = api(tmp_path, **{KEEP_ENV: "3"})
    three.save({"epoch": 5}, step=5)
    three.save({"epoch": 6}, step=6)
    assert [int(n[5:14]) for n in saved_files(tmp_path)] == [4, 5, 6]
    assert api(tmp_path).latest() == {"epoch": 6}


def test_a_run_resumes_from_an_earlier_runs_save_however_late_a_rank_asks(tmp_path, no_torch):
    first = api(tmp_path, **{RUN_ENV: "first"})
    for step in range(3):
        first.save({"epoch": step}, step=step)
    second = api(tmp_path, **{RUN_ENV: "second"})  # a job resumed from it: rank 0
    assert second.latest() == {"epoch": 2}
    for step in range(3, 6):
        second.save({"epoch": step}, step=step)
    late = api(tmp_path, RANK="1", **{RUN_ENV: "second"})  # its rank 1, starting only now
    assert late.latest() == {"epoch": 2} and second.latest() == {"epoch": 2}
    # the last 2 kept, and the one the running job resumed from
    assert saved_files(tmp_path) == [f"step-00000000{n}.json" for n in (2, 4, 5)]
    assert api(tmp_path, **{RUN_ENV: "third"}).latest() == {"epoch": 5}
    api(tmp_path, **{RUN_ENV: "third"}).save({"epoch": 6}, step=6)
    assert saved_files(tmp_path) == [f"step-00000000{n}.json" for n in (5, 6)]


def test_a_restarted_attempt_resumes_from_the_attempt_before(tmp_path, no_torch):
    api(tmp_path, **{RUN_ENV: "job"}).save({"epoch": 1}, step=1)
    assert api(tmp_path, **{RUN_ENV: "job"}).latest() is None  # its own attempt's: not a start
    assert api(tmp_path, **{RUN_ENV: "job", RESTART_ENV: "1"}).latest() == {"epoch": 1}


def test_kept_by_the_order_of_saves_not_by_step(tmp_path, no_torch):
    """A lineage that counts again from 0 keeps its newest saves, not the highest steps."""
    job = api(tmp_path)
    job.save({"at": 10}, step=10)
    job.save({"at": 0}, step=0)
    job.save({"at": 1}, step=1)
    assert saved_files(tmp_path) == ["step-000000000.json", "step-000000001.json"]
    assert api(tmp_path).latest() == {"at": 1}


def test_other_files_in_the_folder_are_left_alone(tmp_path, no_torch):
    """A Trainer's own checkpoint folders may share it (checkpoint-500/)."""
    (tmp_path / "checkpoint-500").mkdir()
    (tmp_path / "notes.txt").write_text("mine")
    job = api(tmp_path)
    for step in range(4):
        job.save({"epoch": step}, step=step)
    assert (tmp_path / "checkpoint-500").is_dir() and (tmp_path / "notes.txt").exists()


def test_a_save_that_fails_midway_leaves_the_previous_one_latest(tmp_path):
    torch = pytest.importorskip("torch")
    job = api(tmp_path)
    job.save({"w": torch.ones(2)}, step=1)
    with pytest.raises(OSError, match="disk full"):  # its file is open, and fails
        job.save({"w": torch.zeros(2), "then": Unwritable()}, step=2)
    assert torch.equal(api(tmp_path).latest()["w"], torch.ones(2))
    assert sorted(os.listdir(tmp_path)) == [MANIFEST, "step-000000001.pt"]  # no half file


class Unwritable:
    """What fails a save midway (a full disk)."""

    def __reduce__(self):
        raise OSError("disk full")


def test_a_killed_save_leaves_the_previous_one_latest_and_its_leftover_goes(tmp_path, no_torch):
    job = api(tmp_path)
    job.save({"epoch": 1}, step=1)
    # what a process killed while writing step 2 leaves: its temporary file, the manifest as it was
    leftover = tmp_path / f".step-000000002.json.tmp-{os.getpid() + 1}"
    leftover.write_text('{"epo')
    assert api(tmp_path).latest() == {"epoch": 1}
    fresh = tmp_path / ".step-000000003.json.tmp-1"  # another writer's, under way
    fresh.write_text("{")
    manifest = tmp_path / f".{MANIFEST}.tmp-7"  # one killed as it wrote the manifest
    manifest.write_text("{")
    old = os.stat(leftover).st_mtime - SETTINGS["stale_seconds"] - 1
    os.utime(leftover, (old, old))
    os.utime(manifest, (old, old))
    job.save({"epoch": 2}, step=2)
    assert not leftover.exists() and not manifest.exists() and fresh.exists()


def test_loading_runs_no_code_weights_only(tmp_path):
    pytest.importorskip("torch")
    import torch

    api(tmp_path).save({"epoch": 1}, step=1)
    ran = tmp_path / "ran"
    torch.save({"evil": Evil(str(ran))}, tmp_path / "step-000000001.pt")  # a file replaced
    with pytest.raises(RuntimeError, match="weights_only"):
        api(tmp_path).latest()
    assert not ran.exists()


class Evil:
    """Unpickled, it makes a folder: code a checkpoint must never run."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_a_manifest_that_is_not_one_is_an_error_naming_it(tmp_path):
    (tmp_path / MANIFEST).write_text('{"file": "../../etc/passwd", "saved": []}')
    with pytest.raises(RuntimeError, match=f"{MANIFEST} is not a checkpoint manifest"):
        api(tmp_path).latest()


def test_without_a_folder_nothing_is_kept_and_it_says_so_once(capsys):
    job = api(None)
    assert job.latest() is None and job.save({"a": 1}, step=1) is None
    assert capsys.readouterr().err.count(DIR_ENV) == 1


def test_only_rank_0_writes(tmp_path, no_torch):
    reports: list[dict] = []
    assert api(tmp_path, reports, RANK="1").save({"a": 1}, step=1) is None
    assert not tmp_path.joinpath(MANIFEST).exists() and reports == []


@pytest.mark.parametrize(
    ("state", "step", "error"),
    [([1], 1, "must be a dict"), ({}, -1, "whole number"), ({}, 1.5, "whole number"),
     ({}, True, "whole number")],
)  # fmt: skip
def test_save_refuses_what_is_not_a_state_or_a_step(tmp_path, state, step, error):
    with pytest.raises((TypeError, ValueError), match=error):
        api(tmp_path).save(state, step=step)


def test_without_torch_a_value_json_cannot_hold_is_refused(tmp_path, no_torch):
    with pytest.raises(TypeError, match="plain values only"):
        api(tmp_path).save({"a": object()}, step=1)


@pytest.mark.parametrize("keep", ["0", "101", "two"])
def test_a_keep_out_of_bounds_is_refused(tmp_path, keep):
    with pytest.raises(ValueError, match=KEEP_ENV):
        api(tmp_path, **{KEEP_ENV: keep})


def test_the_module_api_reads_the_environment(tmp_path, monkeypatch, no_torch):
    monkeypatch.setenv(DIR_ENV, str(tmp_path))
    monkeypatch.setattr(checkpoint, "_made", {})
    assert checkpoint.latest() is None
    checkpoint.save({"epoch": 2}, step=2)
    assert checkpoint.latest() == {"epoch": 2}


def test_on_stop_runs_its_handlers_on_sigterm_and_exits(tmp_path):
    """What a Stop does to a node: SIGTERM; the handler saves, the process ends 128 + 15."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.modules["torch"] = None
        from kale_ext.checkpoint import _kale_ext_checkpoint, SETTINGS
        ck = _kale_ext_checkpoint({{"{DIR_ENV}": {str(tmp_path)!r}}}, SETTINGS,
                                  lambda **r: None)
        epoch = 3
        ck.on_stop(lambda: ck.save({{"epoch": epoch}}, step=epoch))
        os.kill(os.getpid(), signal.SIGTERM)
        print("not reached")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 128 + 15, done.stderr
    assert "not reached" not in done.stdout and "1 on_stop handler" in done.stderr
    assert api(tmp_path).latest() == {"epoch": 3}


def test_on_stop_needs_a_callable(tmp_path):
    with pytest.raises(TypeError, match="not callable"):
        api(tmp_path).on_stop(None)
