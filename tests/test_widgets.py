"""The job monitor without a browser: the model's logic, the text and widget views, and the
background polling against a scripted backend."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from kale_ext.backends.base import BackendError, JobInfo, LogLine, NotFound, Status
from kale_ext.widgets import (
    CANCELLED,
    CANCELLING,
    DELETED,
    MAX_ERRORS,
    JobMonitor,
    MonitorModel,
    TextView,
    format_elapsed,
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
