"""Rank 0's return value saved by the compiled module: plain data as JSON, tensors by torch.save
(read back with weights_only=True), anything else refused with a reason the log and the job's
record both carry; too large refused; other ranks write nothing."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from kale_ext.backends.results import load_file, read_info
from kale_ext.compile import resultsave
from kale_ext.compile.resultsave import FOLDER, MAX_BYTES, MAX_BYTES_ENV, _kale_ext_keep


@pytest.fixture
def out(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    return tmp_path


def keep(value) -> None:
    _kale_ext_keep(value, FOLDER, MAX_BYTES, MAX_BYTES_ENV)


@dataclass
class Saved:
    id: str
    value: object
    fmt: str


SAVED = [
    Saved("dict", {"loss": 0.25, "tags": ["a", None], "ok": True, "n": 3}, "json"),
    Saved("list", [1, 2.5, "x"], "json"),
    Saved("number", 0.875, "json"),
    Saved("tensor", torch.arange(4.0), "torch"),
    Saved("dict-of-tensors", {"w": torch.ones(2, 2), "step": 3, "shape": (2, 2)}, "torch"),
    Saved("state-dict", torch.nn.Linear(2, 1).state_dict(), "torch"),
    Saved("tuple", (1, "a"), "torch"),  # JSON would give back a list
    # what NumPy's reductions return: saved as the Python value .item() gives
    Saved(
        "numpy-scalars", {"correct": np.int64(7), "acc": np.float32(0.5), "ok": np.bool_(1)}, "json"
    ),
    Saved("numpy-float64", np.float64(0.25), "json"),
]


@pytest.mark.parametrize("case", SAVED, ids=[c.id for c in SAVED])
def test_a_value_comes_back_as_it_was_returned(case, out, capsys):
    keep(case.value)
    info = read_info(out)
    assert info["saved"] and info["format"] == case.fmt and info["reason"] is None
    assert info["type"] == type(case.value).__name__
    name = resultsave.VALUE_JSON if case.fmt == "json" else resultsave.VALUE_TORCH
    path = out / FOLDER / name
    assert info["size"] == path.stat().st_size
    back = load_file(path)
    if case.fmt == "json":
        assert back == case.value
    else:
        assert type(back) is type(case.value)
        flat = case.value.values() if isinstance(case.value, dict) else [case.value]
        again = back.values() if isinstance(back, dict) else [back]
        for a, b in zip(flat, again, strict=True):
            assert torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
    assert (
        f"return value ({type(case.value).__name__}) is saved: {case.fmt}"
        in capsys.readouterr().out
    )
    assert sorted(p.name for p in (out / FOLDER).iterdir()) == sorted([name, "info.json"])


class Opaque:
    pass


@dataclass
class Refused:
    id: str
    value: object
    says: str
    bound: int | None = None


REFUSED = [
    Refused("module", torch.nn.Linear(2, 1), "Linear cannot be saved safely: return plain data"),
    Refused("object", Opaque(), "Opaque cannot be saved safely"),
    Refused("numpy-array", np.arange(3), "ndarray cannot be saved safely"),
    Refused("numpy-array-in-a-dict", {"pred": np.arange(3)}, "torch.from_numpy(a))"),
    Refused(
        "object-in-a-dict", {"model": Opaque()}, "dict of a tests.compile.test_resultsave.Opaque"
    ),
    Refused("json-too-large", list(range(1000)), "list larger than the 1000 bytes", 1000),
    Refused("tensor-too-large", torch.zeros(1000), "its tensors hold 4000 bytes, more than", 1000),
    Refused("a-slice-saves-its-tensor", torch.zeros(1000)[:2], ".clone() it", 1000),
    Refused("torch-file-too-large", {"a": "x" * 2000, "t": torch.zeros(1)}, "larger than", 1000),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c.id for c in REFUSED])
def test_a_value_that_cannot_be_saved_is_refused_saying_why(case, out, capsys, monkeypatch):
    if case.bound is not None:
        monkeypatch.setenv(MAX_BYTES_ENV, str(case.bound))
    keep(case.value)  # never raises: the job that returned it still succeeds
    info = read_info(out)
    assert (info["saved"], info["format"], info["size"]) == (False, None, 0)
    assert case.says in info["reason"]
    assert sorted(p.name for p in (out / FOLDER).iterdir()) == ["info.json"]  # nothing half-done
    logged = capsys.readouterr().out
    if case.value is not None:
        assert f"kale_ext: the job's return value is not saved: {info['reason']}" in logged
    if case.bound is not None:
        assert f"--env {MAX_BYTES_ENV}=BYTES" in info["reason"]


def test_a_job_that_did_not_load_torch_saves_plain_data_only(out, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch")
    keep((1, 2))
    assert "the job did not load torch" in read_info(out)["reason"]


def test_a_new_value_replaces_an_earlier_one(out):
    keep(torch.ones(1))
    keep({"a": 1})
    assert sorted(p.name for p in (out / FOLDER).iterdir()) == ["info.json", "value.json"]


@pytest.mark.parametrize(
    ("env", "value"),
    [({"RANK": "1"}, {"a": 1}), ({"KALE_EXT_OUTPUT_DIR": ""}, {"a": 1}), ({}, None)],
    ids=["another-rank", "run-by-hand", "nothing-returned"],
)
def test_only_rank_0_of_a_job_that_returned_a_value_writes(env, value, out, monkeypatch, capsys):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    keep(value)
    assert not (out / FOLDER).exists()  # a job's outputs stay its own files
    assert capsys.readouterr().out == ""


def test_an_unwritable_folder_leaves_the_job_alone(out, capsys):
    (out / FOLDER).write_text("a file where the folder goes")
    keep({"a": 1})  # no exception
    assert "could not be saved" in capsys.readouterr().out


def test_the_module_names_the_files_the_reader_reads():
    import inspect

    source = inspect.getsource(_kale_ext_keep)
    for name in (resultsave.VALUE_JSON, resultsave.VALUE_TORCH, resultsave.INFO):
        assert f'"{name}"' in source


@pytest.mark.parametrize(
    ("text", "ok"),
    [("0", True), ("1048576", True), (str(resultsave.CEILING), True),
     (str(resultsave.CEILING + 1), False), ("-1", False), ("1Mi", False), ("1e6", False)],
)  # fmt: skip
def test_the_bound_a_job_may_set(text, ok):
    why = resultsave.check_bound(text)
    assert (why is None) == ok
    if not ok:
        assert "whole number of bytes" in why


def test_the_record_is_json_a_reader_can_trust(out):
    keep({"a": 1})
    assert set(json.loads((out / FOLDER / "info.json").read_text())) == {
        "saved", "format", "size", "reason", "type"
    }  # fmt: skip


def test_an_ordered_dict_of_tensors_keeps_its_order(out):
    value = OrderedDict([("b", torch.ones(1)), ("a", torch.zeros(1))])
    keep(value)
    assert list(load_file(out / FOLDER / resultsave.VALUE_TORCH)) == ["b", "a"]


@pytest.mark.parametrize(
    ("value", "error"),
    [("1000", None), ("0", None), ("1Mi", "whole number of bytes"),
     (str(resultsave.CEILING * 2), "whole number of bytes")],
)  # fmt: skip
def test_a_jobs_bound_is_checked_at_submit_naming_the_variable(value, error):
    from kale_ext.errors import ConfigError
    from tests.harness.kube_fixtures import make_spec

    if error is None:
        spec = make_spec({"env": {MAX_BYTES_ENV: value}})
        assert {e.name: e.value for e in spec.config.env}[MAX_BYTES_ENV] == value
        return
    with pytest.raises(ConfigError, match=error) as e:
        make_spec({"env": {MAX_BYTES_ENV: value}})
    assert e.value.field == f"env.{MAX_BYTES_ENV}"
