"""Progress: its JSON, the ETA from the recent rate (withheld while it cannot be told), and
where it is read from (report() records, epoch lines, a tqdm bar), by priority."""

import ast
import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from kale_ext import metrics, progress
from kale_ext.progress import (
    MIN_ADVANCES,
    MIN_SECONDS,
    EtaEstimator,
    Progress,
    ProgressTracker,
    bar,
    eta_text,
    of_epoch_line,
    of_record,
    of_tqdm,
    of_trainer_status,
    progress_of_lines,
    summary,
)


def test_the_module_is_stdlib_only():
    tree = ast.parse(Path(progress.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}  # fmt: skip
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module}  # fmt: skip
    assert imported <= {"__future__", "json", "math", "re", "time", "collections", "dataclasses",
                        "datetime"}  # fmt: skip
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]


def test_json_round_trip():
    p = Progress.of(45, 100, "step", "report", eta_seconds=65, updated="2026-11-27T12:00:00Z")
    data = p.to_json()
    assert data == {"percent": 45.0, "step": 45, "total": 100, "unit": "step", "eta_seconds": 65,
                    "source": "report", "updated": "2026-11-27T12:00:00Z"}  # fmt: skip
    assert Progress.from_json(json.loads(json.dumps(data))) == p
    trainer = Progress(37.0, None, None, "step", 120, "trainer", "2026-11-27T12:00:00Z")
    assert Progress.from_json(trainer.to_json()) == trainer


GOOD = Progress.of(1, 2, "step", "report", updated="2026-11-27T12:00:00Z").to_json()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"percent": 101}, "percent"),
        ({"percent": "50"}, "percent"),
        ({"percent": True}, "percent"),
        ({"step": -1}, "step"),
        ({"total": "x"}, "total"),
        ({"eta_seconds": 1.5}, "eta_seconds"),
        ({"eta_seconds": -3}, "eta_seconds"),
        ({"unit": "batch"}, "unit"),
        ({"source": "guess"}, "source"),
        ({"updated": "yesterday"}, "updated"),
    ],
)
def test_from_json_names_the_wrong_field(change, field):
    with pytest.raises(ValueError, match=rf"progress\.{field}"):
        Progress.from_json({**GOOD, **change})


def test_percent_is_capped():
    assert Progress.of(150, 100, "step", "report").percent == 100.0
    assert Progress.of(1, 3, "epoch", "report").percent == 33.3


# -- the estimator --


def feed(estimator: EtaEstimator, readings, total=100):
    for t, step in readings:
        estimator.observe(step, total, t)


@dataclass
class EtaCase:
    name: str
    readings: list  # (time, step)
    now: float
    eta: int | None


STEADY = [(t, 10 * t) for t in range(5)]  # 10 steps a second, 4 advances over 4 s
ETA_CASES = [
    EtaCase("nothing yet", [], 0, None),
    EtaCase("too few advances", [(t, t) for t in range(MIN_ADVANCES)], 2, None),  # 2 % done
    EtaCase("too short a span", [(0.1 * i, i) for i in range(10)], 0.9, None),
    EtaCase("steady rate", STEADY, 4, 6),  # 60 steps left at 10/s
    EtaCase("counts time since the last advance", STEADY, 5, 5),
    EtaCase("repeated readings are not advances", [*STEADY, (4.5, 40)], 4.6, 5),
    EtaCase("done", [*STEADY, (5, 100)], 5, 0),
    EtaCase("gone quiet", STEADY, 4 + MIN_SECONDS * 10, None),
    EtaCase("a swinging rate", [(0, 0), (1, 1), (2, 2), (3, 30), (4, 60)], 4, None),
    EtaCase("went back: starts over", [*STEADY, (5, 5)], 5, None),
    EtaCase(
        "a backlog read at once is one reading",
        [*((0, s) for s in range(1, 11)), *((t, 10 + 10 * t) for t in range(1, 5))],
        4,
        5,
    ),
]


@pytest.mark.parametrize("case", ETA_CASES, ids=lambda c: c.name)
def test_eta(case):
    estimator = EtaEstimator()
    feed(estimator, case.readings)
    assert estimator.eta(case.now) == case.eta


def test_eta_follows_the_recent_rate_not_the_first():
    estimator = EtaEstimator()
    feed(estimator, [(t, t) for t in range(0, 100)], total=1000)  # 1 step/s for 100 s
    feed(estimator, [(100 + t, 100 + 2 * t) for t in range(1, 120)], total=1000)  # then 2/s
    assert estimator.eta(219) == pytest.approx((1000 - 338) / 2, abs=2)


def steady_etas(total: int, started: float | None, seconds_per_step: float = 1.0):
    """The ETA after each advance of a job that keeps its pace from its start (time 0)."""
    estimator = EtaEstimator(started)
    etas = []
    for step in range(1, total + 1):
        now = step * seconds_per_step
        estimator.observe(step, total, now)
        etas.append(estimator.eta(now))
    return etas


@pytest.mark.parametrize("total", [5, 6, 10, 100, 1000])
def test_a_steady_job_shows_its_eta_within_its_first_fifth(total):
    etas = steady_etas(total, started=0.0, seconds_per_step=5.0)
    first = next(i for i, eta in enumerate(etas) if eta is not None)
    assert (first + 1) / total <= 0.2
    assert etas[first] == 5 * (total - first - 1)  # and it is right: a step each 5 s
    assert None not in etas[first:]


def test_without_its_start_a_steady_job_of_ten_steps_still_shows_it_by_the_second():
    assert steady_etas(10, started=None, seconds_per_step=5.0)[1] == 40


def test_once_shown_the_eta_stays_and_counts_down_through_an_uneven_pace():
    estimator = EtaEstimator()
    now, etas = 0.0, []
    for step in range(1, 101):  # steps of 0.5 s and 1.5 s in turn; one of 6 s at step 10
        now += 6.0 if step == 10 else (0.5 if step % 2 else 1.5)
        estimator.observe(step, 100, now)
        etas.append(estimator.eta(now))
    first = next(i for i, eta in enumerate(etas) if eta is not None)
    assert first < 20 and None not in etas[first:]
    changes = [b - a for a, b in zip(etas[first:], etas[first + 1 :], strict=False)]
    assert max(abs(c) for c in changes) <= 0.3 * max(etas[first:])  # never a jump


def test_a_slow_advance_moves_the_eta_a_little_and_does_not_take_it_away():
    estimator = EtaEstimator()
    feed(estimator, [(t, t) for t in range(11)])  # 1 step a second: 90 s left at 10 s
    assert estimator.eta(10) == 90
    estimator.observe(11, 100, 19)  # one step took 9 s: the window's rate says 154 s left
    assert 81 < estimator.eta(19) < 110  # 81 counted down: moved some of the way, kept


def test_a_slow_start_counts_only_until_the_jobs_own_pace_is_measured():
    estimator = EtaEstimator(started=0.0)
    estimator.observe(1, 10, 90)  # 88 s of imports on a busy machine, then 1.5 s an epoch
    assert estimator.eta(90) == 810  # timed from the start: all it knows
    estimator.observe(2, 10, 91.5)  # 1.5 s: too short to measure its pace; kept, smoothed
    assert 500 < estimator.eta(91.5) < 810
    estimator.observe(3, 10, 93)
    assert estimator.eta(93) == 10  # its own pace replaces it, not smoothed from it
    estimator.observe(4, 10, 94.5)
    assert estimator.eta(94.5) == 9


def test_the_jobs_start_does_not_count_as_a_reading_once_the_work_starts_over():
    estimator = EtaEstimator(started=0.0)
    estimator.observe(1, 10, 1)
    estimator.observe(1, 20, 2)  # another total: measured anew, not from the job's start
    estimator.observe(2, 20, 3)
    assert estimator.eta(3) is None


def test_another_total_starts_over():
    estimator = EtaEstimator()
    feed(estimator, STEADY)
    estimator.observe(41, 200, 5)
    assert estimator.eta(5) is None


# -- parsers --


@pytest.mark.parametrize(
    "record, reading",
    [
        ({"step": 45, "rank": 0, "total": 100, "loss": 1}, (45, 100, "step")),
        ({"step": 3, "rank": 0, "epoch": 2, "epochs": 10}, (2, 10, "epoch")),
        ({"step": 3, "epoch": 2, "epochs": 10}, (2, 10, "epoch")),
        ({"step": 45, "rank": 1, "total": 100}, None),  # rank 0's only
        ({"step": 45, "rank": 0}, None),  # no total
        ({"step": 45, "rank": 0, "total": 0}, None),
        ({"step": None, "rank": 0, "total": 100}, None),
        ({"step": -1, "rank": 0, "total": 100}, None),
        ({"step": 1, "rank": 0, "total": "100"}, None),
        ({"step": 1, "rank": 0, "total": float("inf")}, None),
        ({"step": 1, "rank": 0, "total": True}, None),
        ({"step": 10**400, "rank": 0, "total": 10**401}, None),  # beyond a float
    ],
)
def test_of_record(record, reading):
    assert of_record(record) == reading


@pytest.mark.parametrize(
    "line, reading",
    [
        ("Training:  45%|████▌     | 45/100 [00:01<00:01, 43.21it/s]", ("Training", 45, 100)),
        (" 10%|#         | 1/10 [00:00<00:01,  9.9it/s]", ("", 1, 10)),
        ("a:  1%|| 1/100 [00:00<?, ?it/s]\ra:  2%|| 2/100 [00:00<?, ?it/s]", ("a", 2, 100)),
        ("45it [00:01, 43.21it/s]", None),  # no total
        ("loss went up 45%|weird| text", None),
        ("x%|" * 10_000, None),  # no slow path on a long line
    ],
)
def test_of_tqdm(line, reading):
    assert of_tqdm(line) == reading


@pytest.mark.parametrize(
    "line, reading",
    [
        ("epoch 38/60", (38, 60)),
        ("Epoch 1/10", (1, 10)),
        ("[rank0] epoch: 3 / 10 loss 0.1", (3, 10)),
        ("Epoch [2/5]", (2, 5)),
        ("epoch 11/10", None),
        ("epoch 1/0", None),
        ("epochs 38/60", None),
        ("date 2026/11/27", None),
    ],
)
def test_of_epoch_line(line, reading):
    assert of_epoch_line(line) == reading


@pytest.mark.parametrize(
    "status, expected",
    [
        ({"progressPercentage": 37, "estimatedRemainingSeconds": 120,
          "lastUpdatedTime": "2026-11-27T12:00:00Z"},
         Progress(37.0, None, None, "step", 120, "trainer", "2026-11-27T12:00:00Z")),
        ({"progressPercentage": 100, "lastUpdatedTime": "2026-11-27T12:00:00Z"},
         Progress(100.0, None, None, "step", None, "trainer", "2026-11-27T12:00:00Z")),
        ({"progressPercentage": 50, "estimatedRemainingSeconds": -1,
          "lastUpdatedTime": "2026-11-27T12:00:00Z"},
         Progress(50.0, None, None, "step", None, "trainer", "2026-11-27T12:00:00Z")),
        ({"progressPercentage": 101}, None),
        ({"progressPercentage": "50"}, None),
        ({"metrics": []}, None),
        (None, None),
    ],
)  # fmt: skip
def test_of_trainer_status(status, expected):
    assert of_trainer_status(status) == expected


def test_a_trainer_status_without_a_valid_time_is_read_now():
    found = of_trainer_status({"progressPercentage": 5, "lastUpdatedTime": "soon"})
    assert Progress.from_json(found.to_json()) == found and found.updated.endswith("Z")


def metric(**record) -> str:
    return metrics.PREFIX + json.dumps({"rank": 0, **record})


@dataclass
class TrackCase:
    name: str
    batches: list  # lists of lines, one per feed
    expected: tuple | None  # (step, total, unit, source)


TRACK_CASES = [
    TrackCase("no progress at all", [["hello", metric(step=1, loss=0.5)]], None),
    TrackCase("report step/total", [[metric(step=5, total=20, loss=1)]], (5, 20, "step", "report")),
    TrackCase(
        "the last report of a batch",
        [[metric(step=s, total=20) for s in range(1, 8)]],
        (7, 20, "step", "report"),
    ),
    TrackCase("report epochs", [[metric(step=1, epoch=3, epochs=10)]], (3, 10, "epoch", "report")),
    TrackCase("an epoch line", [["Epoch 3/10"]], (3, 10, "epoch", "epoch-line")),
    TrackCase("a tqdm bar", [[" 30%|###   | 3/10 [00:01<00:02]"]], (3, 10, "step", "tqdm")),
    TrackCase(
        "report wins over inference, even later",
        [[metric(step=5, total=20)], ["Epoch 9/10", " 90%|##| 9/10 ["]],
        (5, 20, "step", "report"),
    ),
    TrackCase(
        "an epoch line wins over a tqdm bar",
        [["Epoch 1/4", " 50%|##| 5/10 ["]],
        (1, 4, "epoch", "epoch-line"),
    ),
    TrackCase(
        "a bar per epoch is ambiguous",
        [[" 50%|##| 5/10 ["], [" 100%|##| 10/10 [", "  0%|| 0/10 ["]],
        None,
    ),
    TrackCase(
        "a second bar is ambiguous",
        [["train: 50%|##| 5/10 ["], ["eval: 50%|##| 1/2 ["]],
        None,
    ),
    TrackCase(
        "epoch lines still count once tqdm is ambiguous",
        [["a: 50%|##| 5/10 [", "b: 50%|##| 1/2 [", "Epoch 2/3"]],
        (2, 3, "epoch", "epoch-line"),
    ),
    TrackCase("a broken report line", [['KALE_METRIC {"total": ']], None),
    TrackCase("a report nested too deep", [['KALE_METRIC {"total": ' + "[" * 10**6]], None),
]


@pytest.mark.parametrize("case", TRACK_CASES, ids=lambda c: c.name)
def test_tracker(case):
    tracker = ProgressTracker()
    got = None
    for batch in case.batches:
        got = tracker.feed(batch)
    assert (got and (got.step, got.total, got.unit, got.source)) == case.expected


def test_tracker_gives_an_eta_after_a_few_advances():
    tracker = ProgressTracker()
    seen = [tracker.feed([metric(step=s, total=10)], now=float(s)) for s in range(1, 11)]
    etas = [p.eta_seconds for p in seen]
    assert etas[:2] == [None] * 2  # not from one reading, nor from 1 s
    assert etas[2:] == [10 - s for s in range(3, 11)]  # 1 step a second, to the end
    assert seen[-1].percent == 100.0


def test_tracker_measures_from_the_jobs_start():
    tracker = ProgressTracker(started=0.0)
    seen = [tracker.feed([metric(epoch=e, epochs=5)], now=10.0 * e) for e in range(1, 6)]
    assert [p.eta_seconds for p in seen] == [40, 30, 20, 10, 0]


def test_tracker_keeps_updated_from_its_last_change():
    tracker = ProgressTracker()
    first = tracker.feed([metric(step=1, total=10)])
    assert tracker.feed(["nothing new"]).updated == first.updated


def test_progress_of_lines_is_the_seam_for_other_backends():
    got = progress_of_lines(["x", metric(step=2, total=4)])
    assert (got.percent, got.eta_seconds, got.source) == (50.0, None, "report")
    assert progress_of_lines([]) is None


def test_a_long_log_is_read_cheaply():
    lines = [metric(step=s, total=100_000, loss=0.5) for s in range(100_000)]
    start = time.process_time()
    got = ProgressTracker().feed(lines)
    assert got.step == 99_999
    assert time.process_time() - start < 1.0  # one JSON parse per feed, not per line


@pytest.mark.parametrize(
    "seconds, text",
    [(None, "-"), (0, "0s"), (42, "42s"), (185, "3m 05s"), (3720, "1h 02m"), (183600, "2d 03h")],
)
def test_eta_text(seconds, text):
    assert eta_text(seconds) == text


def test_bar_and_summary():
    assert bar(50, 10) == "[#####-----]"
    assert bar(0, 4) == "[----]" and bar(100, 4) == "[####]"
    p = Progress.of(45, 100, "step", "report", eta_seconds=65)
    assert summary(p) == "45% (45/100 steps), ETA 1m 05s"
    assert summary(Progress(37.0, None, None, "step", None, "trainer", "")) == "37%, ETA -"
