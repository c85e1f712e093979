"""The monitor's state model: status changes, logs per node with a cap, metrics per name and
rank, elapsed time and the cancel state, each at a given time."""

from __future__ import annotations

import math

import pytest

from kale_ext.backends.base import LogLine, Status
from kale_ext.ipython.monitor import (
    CANCELLED,
    CANCELLING,
    DELETED,
    MonitorModel,
    format_elapsed,
)
from kale_ext.metrics import MAX_POINTS
from tests.harness.monitor import T0, at, info, line, metric


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0:00"), (7.9, "0:07"), (59, "0:59"), (60, "1:00"), (754, "12:34"), (3723, "1:02:03"),
     (36000, "10:00:00"), (-5, "0:00")],
)  # fmt: skip
def test_format_elapsed(seconds, text):
    assert format_elapsed(seconds) == text


# ---------------------------------------------------------------------------------------------
# The model


def test_status_changes_are_recorded_once():
    m = MonitorModel("job", now=T0)
    assert m.on_info(info(Status.CREATED), at(0)) is not None
    assert m.on_info(info(Status.CREATED), at(1)) is None
    assert (
        m.on_info(info(Status.QUEUED, "waiting for a queue"), at(2)).reason == "waiting for a queue"
    )
    assert m.on_info(info(Status.RUNNING), at(3)).status == "Running"
    assert not m.finished
    done = info(Status.COMPLETE, created="2026-01-01T12:00:00Z", finished="2026-01-01T12:01:05Z")
    assert m.on_info(done, at(70)).status == "Complete"
    assert m.finished
    assert [c.status for c in m.changes] == ["Created", "Queued", "Running", "Complete"]
    assert m.on_info(info(Status.RUNNING), at(80)) is None  # nothing after the end
    assert m.elapsed(at(500)) == "1:05"  # from the job's own created/finished times
    assert m.summary(at(500)) == "[job] Complete (1:05)"


def test_elapsed_runs_while_the_job_runs():
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.RUNNING, created=None), at(1))
    assert m.elapsed(at(75)) == "1:15"
    m.on_info(info(Status.FAILED, "node 1 exited with code 1", created=None), at(90))
    assert (
        m.elapsed(at(1000)) == "1:30"
        and m.summary() == "[job] Failed: node 1 exited with code 1 (1:30)"
    )


def test_log_lines_are_buffered_per_node_with_a_cap():
    m = MonitorModel("job", nodes=2, max_lines=3, now=T0)
    shown = m.on_lines([line(0, f"a{i}", 10 * (i + 1)) for i in range(5)] + [line(1, "b0", 7)])
    assert shown == [f"[rank 0] a{i}" for i in range(5)] + ["[rank 1] b0"]
    assert m.node_text(0) == "… 2 earlier line(s) not shown\n[rank 0] a2\n[rank 0] a3\n[rank 0] a4"
    assert m.node_text(1) == "[rank 1] b0"
    assert m.node_text(None) == (
        "… 3 earlier line(s) not shown\n[rank 0] a3\n[rank 0] a4\n[rank 1] b0"
    )
    assert m.offsets == {0: 50, 1: 7}
    assert m.node_text(5) == ""


def test_lines_without_a_rank_show_their_node():
    m = MonitorModel("job", nodes=1, procs_per_node=2, now=T0)
    assert m.on_lines([LogLine(0, "pip output", None, 11)]) == ["[node 0] pip output"]


def test_the_shape_says_where_the_processes_per_node_come_from():
    m = MonitorModel("job", nodes=2, now=T0)
    assert m.shape == "2 nodes × 1 process"
    job = info(Status.RUNNING, nodes=2)
    job.procs_per_node, job.procs_why = 4, "the runtime's choice: 4 CPUs per node"
    m.on_info(job, at(1))
    assert m.shape == "2 nodes × 4 processes (the runtime's choice: 4 CPUs per node)"


def test_max_lines_must_be_positive():
    with pytest.raises(ValueError):
        MonitorModel("job", max_lines=0)


def test_cancel_state_machine():
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.RUNNING), at(1))
    assert m.request_cancel(at(2)) is True
    assert m.status == CANCELLING and m.request_cancel(at(3)) is False  # not twice
    assert m.on_info(info(Status.RUNNING), at(3)) is None  # keeps showing Cancelling
    assert m.cancel_finished(True, now=at(4)).status == CANCELLED
    assert m.finished and m.on_gone(at(5)) is None
    assert m.elapsed(at(100)) == "0:04"
    assert [c.status for c in m.changes] == ["Running", CANCELLING, CANCELLED]


def test_cancel_after_the_end_does_nothing():
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.COMPLETE, finished="2026-01-01T12:00:09Z"), at(9))
    assert m.request_cancel(at(10)) is False and m.status == "Complete"


def test_cancel_that_fails_restores_the_status_and_may_be_retried():
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.QUEUED, "no capacity"), at(1))
    m.request_cancel(at(2))
    change = m.cancel_finished(False, "forbidden", at(3))
    assert (change.status, change.reason) == ("Queued", "no capacity")
    assert m.error == "cancel failed: forbidden" and not m.finished
    assert m.request_cancel(at(4)) is True


def test_a_job_deleted_elsewhere_and_one_cancelled_here():
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.RUNNING), at(1))
    assert m.on_gone(at(2)).status == DELETED
    c = MonitorModel("job", now=T0)
    c.request_cancel(at(1))
    assert c.on_gone(at(2)).status == CANCELLED
    assert c.cancel_finished(True, now=at(3)) is None  # already shown as cancelled


def test_backend_errors_are_shown_and_cleared():
    m = MonitorModel("job", now=T0)
    m.on_error("connection refused")
    assert m.error == "connection refused"
    m.on_info(info(Status.RUNNING), at(1))
    assert m.error is None


# ---------------------------------------------------------------------------------------------
# Metrics (`report()` lines)


def test_metric_lines_become_series_per_metric_and_rank():
    m = MonitorModel("job", nodes=2, now=T0)
    shown = m.on_lines(
        [
            line(0, "epoch 1 loss 0.900", 10),
            metric(0, 20, step=1, rank=0, loss=0.9),
            metric(1, 15, step=1, rank=1, loss=0.95),
            metric(1, 30, step=2, rank=1, loss=0.5),
            metric(0, 40, step=2, rank=0, loss=0.4, accuracy=0.97),
            line(0, "KALE_METRIC {broken", 50),
        ]
    )
    assert shown == ["[rank 0] epoch 1 loss 0.900"]  # the metrics lines are plotted, not shown
    assert m.node_text(None) == "[rank 0] epoch 1 loss 0.900"
    assert m.offsets == {0: 50, 1: 30}  # read once, shown or not
    assert m.metric_lines == 5
    assert list(m.metrics) == ["loss", "accuracy"]
    assert m.metrics["loss"] == {0: [(1, 0.9), (2, 0.4)], 1: [(1, 0.95), (2, 0.5)]}
    assert m.metrics["accuracy"] == {0: [(2, 0.97)]}
    assert m.latest["loss"] == {0: (2, 0.4), 1: (2, 0.5)}
    assert m.metrics_text() == (
        "loss: rank 0 0.4 (step 2), rank 1 0.5 (step 2) · accuracy: rank 0 0.97 (step 2)"
    )
    assert m.metrics_version == 4 and m.metric_versions == {"loss": 4, "accuracy": 1}


def test_metric_lines_can_be_shown_too():
    m = MonitorModel("job", show_metric_lines=True, now=T0)
    shown = m.on_lines([metric(0, 5, step=1, loss=1.0)])
    assert shown == ['[rank 0] KALE_METRIC {"step": 1, "loss": 1.0}']
    assert m.metrics["loss"] == {0: [(1, 1.0)]}


def test_metric_records_rank_step_and_bad_values():
    m = MonitorModel("job", nodes=3, now=T0)
    m.on_lines(
        [
            metric(1, 1, line_rank=3, loss=1),  # the line's rank (a procs_per_node prefix)
            LogLine(2, 'KALE_METRIC {"loss": 2}', None, 1),  # no rank at all: the node
            metric(0, 1, line_rank=0, rank=5, loss=3),  # the record's own rank wins
            metric(0, 2, step="one", rank=-1, loss=4, note="text", ok=True, nested={"a": 1}),
        ]
    )
    assert sorted(m.metrics["loss"]) == [0, 2, 3, 5]
    assert list(m.metrics) == ["loss"]  # strings, booleans and objects are not metrics
    # no step: the one after the series' last
    m.on_metric({"loss": 7}, rank=0)
    assert [s for s, _ in m.metrics["loss"][0]] == [0, 1]
    assert m.on_metric({"step": 1}, rank=0) == []


def test_a_checkpoints_step_is_not_plotted():
    m = MonitorModel("job", now=T0)
    m.on_lines(
        [
            metric(0, 10, step=1, rank=0, loss=0.9),
            metric(0, 20, step=1, rank=0, checkpoint_step=1),  # checkpoint.save()'s report
        ]
    )
    assert list(m.metrics) == ["loss"]  # its checkpoint shows in the progress line instead
    assert m.metrics_text() == "loss: rank 0 0.9 (step 1)"


def test_metric_steps_are_sorted_and_a_repeated_step_replaced():
    m = MonitorModel("job", now=T0)
    for step, value in [(1, 1.0), (3, 3.0), (2, 2.0), (3, 2.5)]:
        m.on_metric({"step": step, "loss": value})
    assert m.metrics["loss"][0] == [(1, 1.0), (2, 2.0), (3, 2.5)]
    assert m.latest["loss"][0] == (3, 2.5)


def test_a_non_finite_value_is_the_latest_but_not_plotted():
    m = MonitorModel("job", now=T0)
    m.on_lines([metric(0, 1, step=1, loss=1.0), line(0, 'KALE_METRIC {"step": 2, "loss": NaN}', 2)])
    assert m.metrics["loss"][0] == [(1, 1.0)]
    s, v = m.latest["loss"][0]
    assert s == 2 and math.isnan(v)
    assert m.metrics_text() == "loss: rank 0 nan (step 2)"


def test_metrics_stay_bounded_and_keep_their_spikes():
    m = MonitorModel("job", max_points=100, now=T0)
    for step in range(5000):
        m.on_metric({"step": step, "loss": 99.0 if step == 3333 else 1.0})
    points = m.metrics["loss"][0]
    assert len(points) <= 100
    assert points[0] == (0, 1.0) and points[-1] == (4999, 1.0)
    assert (3333, 99.0) in points
    with pytest.raises(ValueError):
        MonitorModel("job", max_points=2)


def test_the_default_cap_is_the_one_the_panel_uses_too():
    m = MonitorModel("job", now=T0)
    for step in range(3 * MAX_POINTS):
        m.on_metric({"step": step, "loss": 1 / (step + 1)})
    points = m.metrics["loss"][0]
    assert MAX_POINTS // 4 <= len(points) <= MAX_POINTS
    assert points[0] == (0, 1.0) and points[-1][0] == 3 * MAX_POINTS - 1


# ---------------------------------------------------------------------------------------------
# Stalled and failed jobs


def test_a_stalled_job_shows_stalled_until_it_writes_again():
    m = MonitorModel("job", now=T0)
    quiet = info(Status.RUNNING)
    quiet.stalled_after = 600
    assert m.on_info(quiet, at(1)).status == "Stalled (no output for 10 min)"
    assert not m.finished and m.color == "#b26a00"
    assert m.on_info(info(Status.RUNNING), at(2)).status == "Running"


def test_a_failed_job_says_where_and_why():
    from kale_ext.backends.base import Failure

    failure = Failure(
        """node 1, rank 1: cell 4 ("training"), line 3: KeyError: 'label'""",
        node=1,
        rank=1,
        exception="KeyError: 'label'",
        cell_index=3,
        cell_label="training",
        line=3,
        exit_code=1,
        log_tail=["[rank 1] KeyError: 'label'"],
    )
    failed = info(Status.FAILED, failure.summary)
    failed.failure = failure
    m = MonitorModel("job", now=T0)
    assert m.failure_text() == ""
    m.on_info(failed, at(5))
    assert m.failure_text().splitlines() == [
        "failed first  node 1, rank 1",
        'where         cell 4 ("training"), line 3',
        "error         KeyError: 'label'",
        "ended         exit code 1",
    ]  # the last lines are in the monitor's logs already


def test_progress_shows_while_the_job_runs_and_is_kept_after():
    from kale_ext.progress import Progress

    half = Progress.of(45, 100, "step", "report", eta_seconds=65)
    m = MonitorModel("job", now=T0)
    queued = info(Status.QUEUED)
    queued.progress = half
    m.on_info(queued, at(1))
    assert m.progress is half and m.progress_shown is None and m.progress_text() == ""
    running = info(Status.RUNNING)
    running.progress = half
    m.on_info(running, at(2))
    assert m.progress_text() == "45% (45/100 steps), ETA 1m 05s"
    m.on_info(info(Status.RUNNING), at(3))  # a read without progress keeps the last
    assert m.progress_shown is half
    m.on_info(info(Status.COMPLETE), at(4))
    assert m.progress is half and m.progress_shown is None  # its state, not a stale bar


def test_a_running_jobs_last_checkpoint_follows_its_progress():
    from kale_ext.lineage import Checkpoint
    from kale_ext.progress import Progress, utc_now

    m = MonitorModel("job", now=T0)
    running = info(Status.RUNNING)
    running.checkpoint = Checkpoint(12, utc_now())
    m.on_info(running, at(1))
    assert m.progress_text() == "checkpoint: step 12, just now"
    running.progress = Progress.of(45, 100, "step", "report", eta_seconds=65)
    m.on_info(running, at(2))
    assert m.progress_text() == "45% (45/100 steps), ETA 1m 05s · checkpoint: step 12, just now"
    m.on_info(info(Status.FAILED), at(3))
    assert m.checkpoint is not None and m.progress_text() == ""  # ended: its state
