"""A job's lineage and last checkpoint as views read and word them (kale_ext/lineage.py): a
reported checkpoint_step read as untrusted input, its age, and the lineage's words."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from kale_ext.lineage import (
    Checkpoint,
    checkpoint_text,
    lineage_text,
    of_trainer_status,
    reported_step,
    step_of,
)

NOW = datetime(2026, 12, 6, 12, 0, 0, tzinfo=timezone.utc)
PREFIX = "KALE_METRIC "


def line(record: dict) -> str:
    return PREFIX + json.dumps(record)


@pytest.mark.parametrize(
    ("value", "step"),
    [(12, 12), (12.0, 12), (2.5, 2.5), ("12", 12), (0, 0), (-1, None), (True, None),
     (float("nan"), None), (float("inf"), None), ("twelve", None), (None, None), (10**16, None),
     ([1], None)],
)  # fmt: skip
def test_a_step_is_a_number_from_zero_to_its_bound(value, step):
    assert step_of(value) == step


def test_the_step_of_rank_0s_report_line_only():
    assert reported_step(line({"step": None, "rank": 0, "checkpoint_step": 12}), PREFIX) == 12
    assert reported_step(line({"checkpoint_step": 3}), PREFIX) == 3  # no rank: rank 0's
    assert reported_step(line({"rank": 1, "checkpoint_step": 12}), PREFIX) is None
    assert reported_step(line({"rank": 0, "loss": 0.5}), PREFIX) is None
    assert reported_step(line({"rank": 0, "checkpoint_step": "x"}), PREFIX) is None
    assert reported_step('KALE_METRIC {"checkpoint_step": ', PREFIX) is None  # cut short
    assert reported_step("KALE_METRIC " + "[" * 5000 + '"checkpoint_step"', PREFIX) is None
    assert reported_step('print {"checkpoint_step": 12}', PREFIX) is None
    assert reported_step(line(["checkpoint_step"]), PREFIX) is None  # not an object


def test_a_checkpoint_says_its_step_and_age():
    saved = Checkpoint(12, "2026-12-06T11:57:00Z")
    assert checkpoint_text(saved, NOW) == "checkpoint: step 12, 3 min ago"
    assert checkpoint_text(Checkpoint(4, "2026-12-06T11:59:58Z"), NOW) == (
        "checkpoint: step 4, just now"
    )
    assert checkpoint_text(Checkpoint(4, "2026-12-06T09:00:00Z"), NOW) == (
        "checkpoint: step 4, 3 h ago"
    )
    assert checkpoint_text(Checkpoint(4, "2026-12-01T12:00:00Z"), NOW) == (
        "checkpoint: step 4, 5 days ago"
    )
    assert checkpoint_text(Checkpoint(4, "2026-12-06T12:00:40Z"), NOW) == (
        "checkpoint: step 4, just now")  # a clock ahead: never a negative age  # fmt: skip
    assert Checkpoint.from_json(saved.to_json()) == saved


def test_a_clusters_checkpoint_is_as_of_the_trainers_last_status():
    found = of_trainer_status({"checkpoint_step": "12", "loss": "0.3"}, "2026-12-06T11:59:00Z")
    assert found == Checkpoint(12, "2026-12-06T11:59:00Z", exact=False)
    assert checkpoint_text(found, NOW) == "checkpoint: step 12, as of 1 min ago"
    assert of_trainer_status({"loss": "0.3"}, "2026-12-06T11:59:00Z") is None
    assert of_trainer_status({"checkpoint_step": "12"}, None) is None
    assert of_trainer_status({"checkpoint_step": "-3"}, "2026-12-06T11:59:00Z") is None
    assert of_trainer_status(None, "2026-12-06T11:59:00Z") is None


@pytest.mark.parametrize(
    "data",
    [None, [], {}, {"step": 1}, {"step": "x", "time": "2026-12-06T11:59:00Z"},
     {"step": 1, "time": "yesterday"}, {"step": -1, "time": "2026-12-06T11:59:00Z"}],
)  # fmt: skip
def test_a_kept_checkpoint_that_is_not_one_is_none(data):
    assert Checkpoint.from_json(data) is None


def test_the_lineage_in_words():
    assert lineage_text("first", "first", None) is None  # a lineage of its own
    assert lineage_text("second", "first", "first", 12) == (
        "resumed from first (lineage first), from step 12"
    )
    assert lineage_text("third", "first", "second", None) == (
        "resumed from second (lineage first)"
    )  # no checkpoint reported: no step
    assert lineage_text("shared", "first", None) == "lineage first"  # fmt: skip
