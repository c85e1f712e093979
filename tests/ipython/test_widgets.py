"""The job monitor without a browser: the model's logic, the text and widget views, and the
background polling against a scripted backend."""

from __future__ import annotations

import io
import json
import math
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from kale_ext.backends.base import BackendError, JobInfo, LogLine, NotFound, Status
from kale_ext.ipython.widgets import (
    CANCELLED,
    CANCELLING,
    DELETED,
    MAX_ERRORS,
    JobMonitor,
    MonitorModel,
    TextView,
    describe_metric,
    downsample,
    format_elapsed,
    format_value,
    metric_svg,
    widgets_can_render,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def info(status: Status, reason=None, *, created="2026-01-01T12:00:00Z", finished=None, nodes=1):
    return JobInfo(
        name="job",
        status=status,
        backend="fake",
        num_nodes=nodes,
        reason=reason,
        created=created,
        finished=finished,
    )


def line(node: int, text: str, offset: int, rank: int | None = None) -> LogLine:
    return LogLine(node, text, node if rank is None else rank, offset)


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


def metric(node: int, offset: int, line_rank: int | None = None, **record) -> LogLine:
    """A line `report()` printed; ``line_rank`` is the rank the log line carries."""
    return line(node, "KALE_METRIC " + json.dumps(record), offset, line_rank)


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


def test_downsample_keeps_the_ends_and_each_buckets_extremes():
    points = [(i, math.sin(i / 50)) for i in range(5000)]
    out = downsample(points, 100)
    assert len(out) <= 202 and out[0] == points[0] and out[-1] == points[-1]
    assert [p[0] for p in out] == sorted({p[0] for p in out})
    assert min(v for _, v in out) == min(v for _, v in points)
    assert max(v for _, v in out) == max(v for _, v in points)
    assert downsample(points[:10], 10) == points[:10]
    assert len(downsample([(4, float(i)) for i in range(100)], 5)) <= 12  # all at one step


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.312345, "0.3123"), (2.0, "2"), (1234.5678, "1235"), (0, "0"), (0.00012, "1.2e-4"),
     (3e7, "3e+7"), (float("nan"), "nan"), (float("-inf"), "-inf")],
)  # fmt: skip
def test_format_value(value, text):
    assert format_value(value) == text


def test_metric_svg_draws_a_line_per_rank():
    series = {0: [(1, 1.2), (2, 0.4)], 1: [(1, 1.1), (2, 0.5)]}
    latest = {0: (2, 0.4), 1: (2, 0.5)}
    svg = metric_svg("loss", series, latest)
    label = "loss, latest: rank 0 0.4 at step 2, rank 1 0.5 at step 2"
    assert describe_metric("loss", latest) == label
    assert f'role="img" aria-label="{label}"' in svg
    assert svg.count("<path ") == 2 and svg.count("<circle ") == 2
    assert 'data-rank="0"' in svg and 'data-rank="1"' in svg
    assert "var(--jp-brand-color1, #1976d2)" in svg and "var(--jp-warn-color1" in svg
    assert "rank 1 <b>0.5</b> step 2" in svg
    # a single value: a dot, no line
    one = metric_svg("accuracy", {0: [(2, 0.97)]}, {0: (2, 0.97)})
    assert "<path " not in one and one.count("<circle ") == 1
    # names are escaped
    assert "&lt;b&gt;" in metric_svg("<b>", {}, {})


def test_metric_svg_of_thousands_of_points_stays_small():
    series = {r: [(i, 1 / (i + 1 + r)) for i in range(20_000)] for r in range(2)}
    svg = metric_svg("loss", series, {r: series[r][-1] for r in series})
    assert len(svg) < 20_000
    for path in svg.split("<path ")[1:]:
        assert path.count("L") <= 2 * 114 + 2


def test_text_view_prints_the_latest_metrics_now_and_then():
    stream, clock = io.StringIO(), [0.0]
    view = TextView(stream, metrics_every=10, clock=lambda: clock[0])
    m = MonitorModel("job", now=T0)
    m.on_info(info(Status.RUNNING), at(1))
    view.update(m, None, m.on_lines([metric(0, 1, step=1, loss=0.9)]))
    clock[0] = 5
    view.update(m, None, m.on_lines([metric(0, 2, step=2, loss=0.5)]))  # too soon
    view.tick(m)
    clock[0] = 11
    view.tick(m)  # due: printed by the tick
    view.tick(m)  # nothing new
    clock[0] = 12
    m.on_lines([metric(0, 3, step=3, loss=0.25)])
    view.update(m, m.on_info(info(Status.COMPLETE), at(12)), [])  # the end: printed at once
    assert stream.getvalue().splitlines() == [
        "[job] metrics: loss: rank 0 0.9 (step 1)",
        "[job] metrics: loss: rank 0 0.5 (step 2)",
        "[job] metrics: loss: rank 0 0.25 (step 3)",
        "[job] Complete (0:12)",
    ]


# ---------------------------------------------------------------------------------------------
# A scripted backend, and the monitor that polls it


@dataclass
class Step:
    status: Status
    lines: tuple[tuple[int, str], ...] = ()
    reason: str | None = None


class ScriptedBackend:
    """Each get_job moves one step on; logs honour offsets like a real backend."""

    name = "fake"

    def __init__(self, steps, nodes=1, fail_with=None):
        self.steps = list(steps)
        self.nodes = nodes
        self.i = -1
        self.written: dict[int, list[tuple[str, int]]] = {k: [] for k in range(nodes)}
        self.deleted = threading.Event()
        self.fail_with = fail_with
        self.polls = 0

    def get_job(self, name):
        self.polls += 1
        if self.fail_with is not None:
            raise self.fail_with
        if self.deleted.is_set():
            raise NotFound(f"no job named {name}")
        self.i = min(self.i + 1, len(self.steps) - 1)
        step = self.steps[self.i]
        for node, text in step.lines:
            end = (self.written[node][-1][1] if self.written[node] else 0) + len(text) + 1
            self.written[node].append((text, end))
        finished = "2026-01-01T12:00:10Z" if step.status.finished else None
        return info(step.status, step.reason, finished=finished, nodes=self.nodes)

    def logs(self, name, node=None, follow=False, tail=None, offsets=None):
        for k in range(self.nodes):
            for text, end in self.written[k]:
                if end > (offsets or {}).get(k, 0):
                    yield LogLine(k, text, k, end)

    def delete(self, name):
        self.deleted.set()


SCRIPT = [
    Step(Status.CREATED),
    Step(Status.RUNNING, ((0, "epoch 1"), (1, "epoch 1"))),
    Step(Status.RUNNING, ((0, "epoch 2"),)),
    Step(Status.COMPLETE, ((1, "done"),)),
]


def test_polling_feeds_the_text_view(capsys):
    backend = ScriptedBackend(SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", interval=0.01)
    assert monitor.wait(10) == "Complete"
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "[job] submitted to the fake backend: 2 node(s) × 1 process(es); logs follow "
        "(cancel: %kale_delete job)"
    )
    assert [o.split(" (")[0] for o in out[1:]] == [
        "[job] Created",
        "[job] Running",
        "[rank 0] epoch 1",
        "[rank 1] epoch 1",
        "[rank 0] epoch 2",
        "[rank 1] done",
        "[job] Complete",
    ]
    assert monitor.model.offsets == {0: 16, 1: 13}  # every line read once
    assert repr(monitor) == "<JobMonitor job: Complete>"


def test_poll_without_a_thread():
    backend = ScriptedBackend(SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", start=False)
    results = [monitor.poll() for _ in range(4)]
    assert results == [True, True, True, False] and monitor.status == "Complete"


def test_repeated_backend_errors_stop_the_monitor(capsys):
    backend = ScriptedBackend(SCRIPT, fail_with=BackendError("the API server is unreachable", 503))
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.wait(10)
    assert backend.polls == MAX_ERRORS
    assert monitor.model.error == "the API server is unreachable"
    assert "[job] the API server is unreachable" in capsys.readouterr().out


def test_an_unexpected_exception_is_shown_not_raised():
    class Broken(ScriptedBackend):
        def logs(self, *a, **k):
            raise RuntimeError("boom")

    monitor = JobMonitor(Broken(SCRIPT), "job", view="text", interval=0.01)
    monitor.wait(10)
    assert monitor.model.error == "the monitor stopped: RuntimeError: boom"


def test_cancel_deletes_in_the_background(capsys):
    backend = ScriptedBackend([Step(Status.RUNNING, ((0, "working"),))])
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.cancel()
    assert backend.deleted.wait(5)
    assert monitor.wait(10) == CANCELLED
    assert "[job] Cancelled" in capsys.readouterr().out


def test_stop_leaves_the_job_running():
    backend = ScriptedBackend([Step(Status.RUNNING)])
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.stop()
    assert monitor.wait(5) == "Running" and not backend.deleted.is_set()


def test_text_view_prints_to_its_stream():
    stream = io.StringIO()
    view = TextView(stream)
    model = MonitorModel("job", backend="local", now=T0)
    view.display(model)
    assert stream.getvalue().startswith("[job] Created (")


# ---------------------------------------------------------------------------------------------
# The widget view (ipywidgets without a front end: the models exist, nothing renders)


def test_widget_view_follows_the_job():
    backend = ScriptedBackend(SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="widget", start=False)
    view = monitor.view
    assert "kale-ext-monitor" in view.widget._dom_classes
    assert view.tabs.titles == ("all nodes", "node 0", "node 1")
    assert 'data-status="Created"' in view.badge.value and not view.button.disabled
    while monitor.poll():
        pass
    assert 'data-status="Complete"' in view.badge.value and "#2e7d32" in view.badge.value
    assert (
        "[rank 0] epoch 1\n[rank 1] epoch 1\n[rank 0] epoch 2\n[rank 1] done"
        in view.logs[None].value
    )
    assert "[rank 1] done" in view.logs[1].value and "rank 1" not in view.logs[0].value
    assert view.button.disabled
    assert view.clock.value == "<span>0:10</span>"  # created 12:00:00, finished 12:00:10


def test_widget_display_has_a_plain_text_stand_in():
    monitor = JobMonitor(ScriptedBackend(SCRIPT), "job", view="widget", start=False)
    data = monitor.view.bundle(monitor.model)
    assert (
        data["application/vnd.jupyter.widget-view+json"]["model_id"] == monitor.view.widget.model_id
    )
    assert data["text/plain"].startswith("[job] Created (0:")
    assert "`%kale_logs job` prints the logs" in data["text/plain"]


METRICS_SCRIPT = [
    Step(Status.RUNNING, ((0, "epoch 1"),)),
    Step(
        Status.RUNNING,
        (
            (0, 'KALE_METRIC {"step": 1, "rank": 0, "loss": 0.9}'),
            (1, 'KALE_METRIC {"step": 1, "rank": 1, "loss": 0.95}'),
        ),
    ),
    Step(
        Status.COMPLETE,
        (
            (0, 'KALE_METRIC {"step": 2, "rank": 0, "loss": 0.4}'),
            (1, 'KALE_METRIC {"step": 2, "rank": 1, "loss": 0.5}'),
            (0, 'KALE_METRIC {"step": 2, "rank": 0, "accuracy": 0.97}'),
        ),
    ),
]


def test_widget_plots_the_metrics_live():
    backend = ScriptedBackend(METRICS_SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="widget", start=False)
    view = monitor.view
    assert view.metrics in view.widget.children and view.metrics.layout.display == "none"
    monitor.poll()
    assert view.charts == {}
    monitor.poll()
    loss = view.charts["loss"]
    assert view.metrics.children == (loss,) and view.metrics.layout.display == "flex"
    assert 'aria-label="loss, latest: rank 0 0.9 at step 1, rank 1 0.95 at step 1"' in loss.value
    assert "<path " not in loss.value  # one step so far: dots
    while monitor.poll():
        pass
    assert view.metrics.children == (loss, view.charts["accuracy"])
    assert loss.value.count("<path ") == 2
    assert "rank 0 <b>0.97</b> step 2" in view.charts["accuracy"].value
    assert "KALE_METRIC" not in view.logs[None].value and "epoch 1" in view.logs[None].value


def test_text_monitor_prints_the_metrics(capsys):
    backend = ScriptedBackend(METRICS_SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", interval=0.01)
    assert monitor.wait(10) == "Complete"
    out = capsys.readouterr().out
    assert "KALE_METRIC" not in out
    assert out.splitlines()[-2] == (
        "[job] metrics: loss: rank 0 0.4 (step 2), rank 1 0.5 (step 2) · "
        "accuracy: rank 0 0.97 (step 2)"
    )


def test_widget_cancel_button():
    backend = ScriptedBackend([Step(Status.RUNNING, ((0, "<b>not html</b>"),))])
    monitor = JobMonitor(backend, "job", view="widget", start=False)
    monitor.poll()
    view = monitor.view
    assert "&lt;b&gt;not html&lt;/b&gt;" in view.logs[0].value  # escaped
    assert view.tabs is None  # one node: no tabs
    view.button.click()
    assert backend.deleted.wait(5)
    for _ in range(100):
        if monitor.status == CANCELLED:
            break
        backend.deleted.wait(0.05)
    monitor.poll()
    assert monitor.status == CANCELLED and view.button.disabled
    assert 'data-status="Cancelled"' in view.badge.value


def test_widget_shows_a_reason_and_an_error():
    backend = ScriptedBackend([Step(Status.QUEUED, reason="waiting for quota")])
    monitor = JobMonitor(backend, "job", view="widget", start=False)
    monitor.poll()
    assert "waiting for quota" in monitor.view.reason.value


def test_bad_view_name():
    with pytest.raises(ValueError):
        JobMonitor(ScriptedBackend(SCRIPT), "job", view="gui", start=False)


class _Shell:
    kernel = object()


def test_widgets_can_render(monkeypatch):
    monkeypatch.delenv("KALE_EXT_MONITOR", raising=False)
    assert widgets_can_render(_Shell()) is True  # a kernel: comms exist
    assert widgets_can_render(object()) is False  # a terminal shell: no kernel
    monkeypatch.setenv("KALE_EXT_MONITOR", "text")
    assert widgets_can_render(_Shell()) is False
    monkeypatch.setenv("KALE_EXT_MONITOR", "widget")
    assert widgets_can_render(object()) is True
