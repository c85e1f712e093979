"""A failure's one line keeps the exception's type and its cause, on recorded texts of the
errors distributed training meets (tests/backends/recorded/exceptions: each as a rank prints
it, our headline first, and as the error record's py_callstack holds it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kale_ext.backends.failure import from_record
from kale_ext.backends.headline import MAX_CHARS, headline, informative, last_exception

RECORDED = Path(__file__).parent / "recorded" / "exceptions"

CASES = {
    "xgboost_tracker_bind": "xgboost.core.XGBoostError: Failed to bind socket. system error:"
    "Address already in use",
    "nccl_system_error": "torch.distributed.DistBackendError: socketStartConnect: Connect to "
    "10.244.1.7<43215> failed : Software caused connection abort",
    "nccl_unhandled_cuda": "torch.distributed.DistBackendError: Cuda failure 'out of memory'",
    "gloo_connection_refused": "torch.distributed.DistNetworkError: The client socket has "
    "failed to connect to [train-node-0-0.train:29500] (errno: 111 - Connection refused).",
    "gloo_pair": "RuntimeError: Connection closed by peer [10.244.2.9]:36417",
    "cuda_oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
    "has a total capacity of 15.77 GiB of which 1.02 GiB is free. Process 2231 has 14.74 GiB "
    "memory in use. Of the allocated memory 13.92 GiB is allocated by PyTorch, and 312.40 MiB "
    "is reserved by PyTorch but unallocated.",
    "cuda_device_assert": "RuntimeError: CUDA error: device-side assert triggered",
    "pydantic_validation": "pydantic_core._pydantic_core.ValidationError: 2 validation errors "
    "for TrainConfig: lr: Input should be a valid number, unable to parse string as a number "
    "[type=float_parsing, input_value='fast', input_type=str]",
}


def test_every_recording_has_a_case():
    assert sorted(p.stem for p in RECORDED.glob("*.txt")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_headline_is_the_cause(name):
    text = (RECORDED / f"{name}.txt").read_text()
    assert headline(last_exception(text)) == CASES[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_failure_record_gets_the_cause_in_its_summary(name):
    """What the job's views show: the record's headline (the first line only, as the compiled
    module wrote it) with its exception's most informative line instead."""
    stack = (RECORDED / f"{name}.txt").read_text()
    first = stack.splitlines()[0]  # `cell 3 ("training"), line 14: Type: first line`
    where, _, exception = first.partition(": ")
    record = {
        "message": {"message": first, "extraInfo": {"py_callstack": stack, "timestamp": "1"}},
        "kale_ext": {"headline": first, "exception": exception, "rank": 1, "node": 0},
    }
    found = from_record(json.loads(json.dumps(record)), node=0)
    assert (found.headline, found.exception) == (f"{where}: {CASES[name]}", CASES[name])


@pytest.mark.parametrize(
    "exception, expected",
    [
        ("KeyError: 'label'", "KeyError: 'label'"),
        ("ValueError: bad value\nmore about it", "ValueError: bad value"),
        ("SystemExit: 3", "SystemExit: 3"),
        ("StopIteration", "StopIteration"),
        ("RuntimeError: " + "x" * 500, "RuntimeError: " + "x" * (MAX_CHARS - 17) + "..."),
        ("no type here\nsecond", "no type here"),
    ],
)
def test_plain_exceptions_keep_their_first_line(exception, expected):
    assert headline(exception) == expected


def test_torchs_own_record_is_one_line():
    record = {"message": {"message": "RuntimeError: [a.cc:1] boom\nStack trace:\n  [bt] (0) x"}}
    assert from_record(record, node=2).exception == "RuntimeError: boom"


def test_a_message_of_locations_only_is_kept_as_it_is():
    assert informative("[07:57:27] /src/result.cc:83:") == "[07:57:27] /src/result.cc:83:"


def test_no_frames_no_exception():
    assert last_exception("cell 1: SystemExit: 3\n") is None
