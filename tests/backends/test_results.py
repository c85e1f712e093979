"""Reading back what a job gave: output files loaded by their ending (never unpickled unsafely),
the saved value's record checked as untrusted, and where a cluster job's outputs volume is seen
from here (or plainly why not)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas
import pytest
import torch

from kale_ext.backends.base import Failure, JobInfo, JobOutputs, Status
from kale_ext.backends.results import (
    CLAIMS_ENV,
    MAX_INFO,
    listed,
    load_file,
    outputs_folder,
    read_info,
    result_of,
    saved_value,
    summary,
)
from kale_ext.compile.resultsave import FOLDER, MAX_BYTES, MAX_BYTES_ENV, _kale_ext_keep
from kale_ext.errors import JobFailed, KaleExtError, NoResult
from tests.harness.kube_fixtures import backend, kube, kubeconfig, make_spec  # noqa: F401


class Opaque:
    pass


def _write(path, data) -> None:
    suffix = path.suffix
    if suffix == ".pt":
        torch.save(data, path)
    elif suffix == ".npy":
        np.save(path, data)
    elif suffix == ".npz":
        np.savez(path, **data)
    else:
        path.write_text(data)


@dataclass
class File:
    name: str
    data: object
    expect: object  # the loaded value, or a check


FILES = [
    File("m.json", '{"acc": 0.9}', {"acc": 0.9}),
    File("h.jsonl", '{"step": 1}\n\n{"step": 2}\n', [{"step": 1}, {"step": 2}]),
    File("notes.txt", "done\n", "done\n"),
    File("run.log", "a\nb\n", "a\nb\n"),
    File("w.npy", np.arange(3.0), lambda v: v.tolist() == [0.0, 1.0, 2.0]),
    File("arrays.npz", {"a": np.ones(2)}, lambda v: list(v) == ["a"] and v["a"].sum() == 2),
    File("model.pt", {"w": torch.ones(2)}, lambda v: torch.equal(v["w"], torch.ones(2))),
    File(
        "h.csv",
        "epoch,loss\n1,0.5\n2,0.25\n",
        lambda v: isinstance(v, pandas.DataFrame) and v["loss"].tolist() == [0.5, 0.25],
    ),
]


@pytest.mark.parametrize("case", FILES, ids=[f.name for f in FILES])
def test_output_files_load_by_their_ending(case, tmp_path):
    path = tmp_path / case.name
    _write(path, case.data)
    value = load_file(path)
    assert case.expect(value) if callable(case.expect) else value == case.expect


def test_a_csv_without_pandas_is_a_list_of_dicts(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    path = tmp_path / "h.csv"
    path.write_text("epoch,loss\n1,0.5\n")
    assert load_file(path) == [{"epoch": "1", "loss": "0.5"}]


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("model.pt", Opaque(), r"weights_only=True\): Unsupported global: .*Opaque"),
        ("a.pkl", "x", "kale_ext does not load .pkl files"),
        ("plain", "x", "files without an ending"),
        ("w.npy", np.array([Opaque()], dtype=object), "Object arrays cannot be loaded"),
    ],
    ids=["pickled-object", "pickle", "no-ending", "object-array"],
)
def test_a_file_that_would_run_code_is_not_loaded(name, data, says, tmp_path):
    path = tmp_path / name
    _write(path, data)
    with pytest.raises((KaleExtError, ValueError), match=says):
        load_file(path)


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ("not json", "its record is unreadable"),
        ('{"saved": "yes", "format": "json", "size": 1}', "a field has a wrong type"),
        ('{"saved": true, "format": "pickle", "size": 1}', "a field has a wrong type"),
        ("[1]", "its record is unreadable"),
        ('{"saved": true, "format": "json", "size": 1, "pad": "' + "x" * MAX_INFO + '"}',
         "its record is unreadable"),
    ],
    ids=["not-json", "saved-not-bool", "unknown-format", "not-an-object", "too-large"],
)  # fmt: skip
def test_a_record_the_job_wrote_is_read_as_untrusted(record, says, tmp_path):
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "info.json").write_text(record)
    info = read_info(tmp_path)
    assert info["saved"] is False and says in info["reason"]


def test_no_record_is_none_and_node_0s_folder_is_looked_in(tmp_path, monkeypatch):
    assert read_info(tmp_path) is None
    monkeypatch.setenv("KALE_EXT_OUTPUT_DIR", str(tmp_path / "node-0"))  # nodes kept apart
    monkeypatch.setenv("RANK", "0")
    _kale_ext_keep({"a": 1}, FOLDER, MAX_BYTES, MAX_BYTES_ENV)
    assert read_info(tmp_path)["saved"] is True


def test_the_listing_leaves_out_the_saved_value_and_follows_no_link(tmp_path):
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "info.json").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("abc")
    (tmp_path / "elsewhere").symlink_to("/")
    assert [(f.path, f.size, f.link) for f in listed(tmp_path)] == [
        ("elsewhere", 0, "/"),
        ("sub/a.txt", 3, None),
    ]


# -- a cluster job's outputs volume, seen from here ----------------------------------------------


def test_a_cluster_job_without_an_outputs_volume_says_so(backend, kube):  # noqa: F811
    backend.submit(make_spec())
    with pytest.raises(NoResult, match="kept no outputs to read back: no outputs volume"):
        outputs_folder(backend, "fit")


def test_a_claim_not_mounted_here_is_named_with_how_to_reach_it(backend, kube, monkeypatch):  # noqa: F811
    monkeypatch.delenv(CLAIMS_ENV, raising=False)
    backend.submit(make_spec({"outputs": "pvc:results:/out"}))
    with pytest.raises(NoResult) as e:
        saved_value(backend, "fit")
    assert str(e.value) == (
        "job fit's outputs are on PersistentVolumeClaim results (/out/fit in the job), which is "
        "not mounted at /out here: mount the claim in this notebook server at /out, or say where it "
        f"is mounted with {CLAIMS_ENV}=results=/folder"
    )


def test_a_claim_mounted_here_is_read(backend, kube, monkeypatch, tmp_path):  # noqa: F811
    backend.submit(make_spec({"outputs": "pvc:results:/out"}))
    monkeypatch.setenv(CLAIMS_ENV, f"other=/x, results={tmp_path}")
    assert outputs_folder(backend, "fit") == tmp_path / "fit"
    with pytest.raises(NoResult, match=r"^job fit: the job's function returned nothing \(None\)"):
        saved_value(backend, "fit")
    (tmp_path / "fit" / FOLDER).mkdir(parents=True)
    (tmp_path / "fit" / FOLDER / "info.json").write_text(
        json.dumps({"saved": True, "format": "json", "size": 8, "reason": None, "type": "dict"})
    )
    (tmp_path / "fit" / FOLDER / "value.json").write_text('{"a": 1}')
    assert saved_value(backend, "fit") == {"a": 1}


class _Here:
    """A backend whose jobs' outputs are in one folder on this machine."""

    def __init__(self, folder):
        self.folder = folder

    def outputs_place(self, name: str) -> JobOutputs:
        return JobOutputs(str(self.folder))


def test_a_job_that_saved_files_but_no_value_names_them_and_how_to_load_one(tmp_path):
    """The README's example saves digits_model.pt and returns nothing: `.result()` says where
    to look instead."""
    (tmp_path / "digits_model.pt").write_bytes(b"w")
    with pytest.raises(NoResult) as e:
        saved_value(_Here(tmp_path), "fit")
    assert str(e.value) == (
        f"job fit: the job's function returned nothing (None) (none is in {tmp_path}); it saved "
        'digits_model.pt: load it with get_job("fit").outputs.load("digits_model.pt")'
    )
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "scores.json").write_text("{}")
    (tmp_path / FOLDER).mkdir()  # a value that could not be saved: its record says why
    (tmp_path / FOLDER / "info.json").write_text(
        json.dumps({"saved": False, "size": 0, "reason": "a Line is not JSON or torch data"})
    )
    with pytest.raises(NoResult) as e:
        saved_value(_Here(tmp_path), "fit")
    assert str(e.value) == (
        "job fit: a Line is not JSON or torch data; it saved digits_model.pt, eval/scores.json: "
        'load one with get_job("fit").outputs.load("digits_model.pt")'
    )


# -- a job that ended without a value -------------------------------------------------------------

WHERE = "node 1, rank 1: cell 3 (\"training\"), line 2: KeyError: 'label'"


@pytest.mark.parametrize(
    ("status", "reason", "failure", "raised", "result"),
    [
        ("Failed", "a rank failed", Failure(WHERE, cell_index=2, line=2),
         f"job fit failed: {WHERE}", "the job failed: it returned no value"),
        ("Failed", "stopped by alice at 2026-11-27T10:00:00Z", None,
         "job fit stopped: stopped by alice at 2026-11-27T10:00:00Z",
         "the job stopped: it returned no value"),
        ("Failed", "stopped early: accuracy 0.1 at step 3", None,
         "job fit stopped early: stopped early: accuracy 0.1 at step 3",
         "the job stopped early: it returned no value"),
        ("Unreadable", "job.json: not JSON", None,
         "job fit: its record cannot be read: job.json: not JSON",
         "its record cannot be read (job.json: not JSON), so neither can its value"),
    ],
    ids=["failed", "stopped", "stopped-early", "unreadable"],
)  # fmt: skip
def test_a_job_that_ended_without_a_value_says_how(status, reason, failure, raised, result):
    info = JobInfo("fit", Status(status), "local", reason=reason, failure=failure)
    with pytest.raises(JobFailed) as e:
        result_of(None, info)  # no backend asked: the job's own record says it
    assert str(e.value) == raised and e.value.failure is failure
    assert summary(None, info) == {"saved": False, "format": None, "size": 0, "reason": result}


@pytest.mark.parametrize("status", ["Created", "Queued", "Running"])
def test_no_result_until_the_job_ends(status):
    assert summary(None, JobInfo("fit", Status(status), "local")) is None
