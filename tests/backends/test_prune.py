"""Which finished jobs a prune removes: one rule (state and age) for every backend, ages and
statuses parsed with bounds and refused naming the field."""

from datetime import datetime, timedelta, timezone

import pytest

from kale_ext.backends.base import JobInfo, Status
from kale_ext.backends.prune import (
    AUTO_EVERY_SECONDS,
    MAX_AGE_SECONDS,
    STAMP,
    auto_prune,
    kind_of,
    parse_age,
    parse_statuses,
    prune,
    select,
)
from kale_ext.errors import BackendError, ConfigError

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)


def ago(seconds: float) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


TEN_DAYS_AGO = ago(10 * 86400)


def job(name, status, finished=None, reason=None, created=TEN_DAYS_AGO):
    return JobInfo(name, status, "test", reason=reason, created=created, finished=finished)


@pytest.mark.parametrize(
    "text, seconds",
    [("0s", 0), ("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("2w", 1209600),
     ("3650d", MAX_AGE_SECONDS), (" 1d ", 86400)],
)  # fmt: skip
def test_ages(text, seconds):
    assert parse_age(text) == seconds


@pytest.mark.parametrize(
    "text, said",
    [("7", "not an age"), ("d", "not an age"), ("-1d", "not an age"), ("1.5d", "not an age"),
     ("7y", "not an age"), ("3651d", "more than the most, 3650d"), ("522w", "more than the most"),
     (7, "must be an age"), (None, "must be an age"), ("9" * 13 + "s", "not an age")],
)  # fmt: skip
def test_bad_ages_name_the_field(text, said):
    with pytest.raises(ConfigError) as e:
        parse_age(text, "older_than")
    assert e.value.field == "older_than" and said in e.value.message


def test_statuses():
    assert parse_statuses("failed, Complete") == ("complete", "failed")
    assert parse_statuses(["stopped"]) == ("stopped",)
    for bad in ("", [], "running", ["queued"], [3], "complete,nope", {"a": 1}):
        with pytest.raises(ConfigError) as e:
            parse_statuses(bad, "statuses")
        assert e.value.field == "statuses"


def test_kinds_of_finished_jobs_and_never_an_unfinished_one():
    assert kind_of(job("a", Status.COMPLETE)) == "complete"
    assert kind_of(job("b", Status.FAILED, reason="node 0 exited with 1")) == "failed"
    for reason in ("stopped by ann at 2026-12-01T00:00:00Z", "stopped early: loss", "cancelled "
                   "with its sweep s1"):  # fmt: skip
        assert kind_of(job("c", Status.FAILED, reason=reason)) == "stopped"
    for status in (Status.CREATED, Status.QUEUED, Status.RUNNING, Status.UNREADABLE):
        assert kind_of(job("d", status)) is None


def test_select_by_state_and_age_oldest_first():
    jobs = [
        job("fresh", Status.COMPLETE, ago(60)),
        job("old", Status.COMPLETE, ago(8 * 86400)),
        job("older-failed", Status.FAILED, ago(9 * 86400), "exit 1"),
        job("stopped", Status.FAILED, ago(9 * 86400), "stopped by ann at x"),
        job("running", Status.RUNNING),
        job("queued", Status.QUEUED),
        job("no-end-time", Status.COMPLETE, None),  # its age counts from its creation
        job("no-times", Status.COMPLETE, None, created=None),  # never: its age is unknown
    ]
    week = parse_age("7d")
    chosen = select(jobs, week, ("complete", "failed"), NOW)
    assert [(i.name, round(age)) for i, age in chosen] == [
        ("no-end-time", 10 * 86400), ("older-failed", 9 * 86400), ("old", 8 * 86400)
    ]  # fmt: skip
    everything = [i.name for i, _ in select(jobs, 0, ("complete", "failed", "stopped"), NOW)]
    assert "running" not in everything and "queued" not in everything
    assert {"fresh", "stopped"} <= set(everything) and "no-times" not in everything


class Recording:
    """A backend of listed jobs whose prune_job records what it was asked (and refuses one
    that started again meanwhile, as a real backend's check under its lock does)."""

    name = "test"

    def __init__(self, jobs, again=()):
        self.jobs, self.again, self.asked = jobs, set(again), []

    def list_jobs(self):
        return self.jobs

    def prune_job(self, name, outputs=False):
        self.asked.append((name, outputs))
        if name in self.again:
            raise BackendError(f"job {name} is Running: only a finished job is pruned", 409)
        return "kept its outputs"


def test_a_dry_run_asks_nothing_and_a_refusal_leaves_the_job():
    jobs = [job("a", Status.COMPLETE, ago(100)), job("b", Status.FAILED, ago(200), "x")]
    backend = Recording(jobs, again={"b"})
    listed = prune(backend, 0, dry_run=True, now=NOW)
    assert [(p.name, p.deleted) for p in listed] == [("b", False), ("a", False)]
    assert backend.asked == []
    done = prune(backend, 0, outputs=True, now=NOW)
    assert backend.asked == [("b", True), ("a", True)]
    assert [(p.name, p.deleted, p.note) for p in done] == [
        ("b", False, "left: job b is Running: only a finished job is pruned"),
        ("a", True, "kept its outputs"),
    ]


def test_a_submit_prunes_at_most_once_an_hour_and_only_when_asked(tmp_path):
    jobs = [job("week-old", Status.COMPLETE, ago(8 * 86400)), job("new", Status.FAILED, ago(60))]
    backend = Recording(jobs)
    backend.jobs_dir = tmp_path  # the local backend's: the stamp goes there
    now = NOW.timestamp()
    assert auto_prune(backend, None, now) == [] and not (tmp_path / STAMP).exists()
    said = auto_prune(backend, 7, now)
    assert backend.asked == [("week-old", False)]  # outputs kept
    assert said == [
        "pruned 1 job finished more than 7 days ago (keep_finished_days; their outputs "
        "stay): week-old"
    ]
    assert auto_prune(backend, 7, now + AUTO_EVERY_SECONDS - 1) == []
    assert backend.asked == [("week-old", False)]  # within the hour: one stat, nothing listed
    auto_prune(backend, 7, now + AUTO_EVERY_SECONDS)
    assert len(backend.asked) == 2


def test_a_failing_prune_is_a_warning_never_a_failed_submit(tmp_path):
    class Unreachable(Recording):
        def list_jobs(self):
            raise BackendError("the cluster does not answer", 503)

    backend = Unreachable([])
    backend.jobs_dir = tmp_path
    [said] = auto_prune(backend, 3, NOW.timestamp())
    assert said == (
        "finished jobs older than 3 days could not be pruned (keep_finished_days): the "
        "cluster does not answer"
    )
