"""The monitor's views: the text view's output, and the widget view (ipywidgets without a front
end: the models exist, nothing renders) following a job that a scripted backend plays."""

from __future__ import annotations

import io
import threading

from kale_ext.backends.base import Status
from kale_ext.ipython.monitor import CANCELLED, MonitorModel
from kale_ext.ipython.views import TextView, widgets_can_render
from kale_ext.ipython.widgets import JobMonitor
from tests.harness.monitor import (
    METRICS_SCRIPT,
    SCRIPT,
    T0,
    ScriptedBackend,
    Step,
    at,
    info,
    metric,
)


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
    assert view.button.button_style == "danger" and view.button.tooltip == "Delete the job"
    while monitor.poll():
        pass
    assert 'data-status="Complete"' in view.badge.value and "#2e7d32" in view.badge.value
    assert (
        "[rank 0] epoch 1\n[rank 1] epoch 1\n[rank 0] epoch 2\n[rank 1] done"
        in view.logs[None].value
    )
    assert "[rank 1] done" in view.logs[1].value and "rank 1" not in view.logs[0].value
    # ended: the button is disabled, no longer drawn as a live (danger) one, and says why
    assert view.button.disabled and view.button.button_style == ""
    assert view.button.tooltip == "The job has ended (Complete): nothing to cancel"
    assert view.clock.value == "<span>0:10</span>"  # created 12:00:00, finished 12:00:10


def test_widget_display_has_a_plain_text_stand_in():
    monitor = JobMonitor(ScriptedBackend(SCRIPT), "job", view="widget", start=False)
    data = monitor.view.bundle(monitor.model)
    assert (
        data["application/vnd.jupyter.widget-view+json"]["model_id"] == monitor.view.widget.model_id
    )
    assert data["text/plain"].startswith("[job] Created (0:")
    assert "`%kale_logs job` prints the logs" in data["text/plain"]


def test_widget_plots_the_metrics_live():
    backend = ScriptedBackend(METRICS_SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="widget", start=False)
    view = monitor.view
    assert view.metrics in view.widget.children and view.metrics.layout.display == "none"
    monitor.poll()
    assert view.charts == {}
    monitor.poll()
    loss = view.charts["loss"]
    assert view.charts_box.children == (loss,) and view.metrics.layout.display == "flex"
    assert 'aria-label="loss, latest: rank 0 0.9 at step 1, rank 1 0.95 at step 1"' in loss.value
    assert "<svg" not in loss.value and ">0.925</span>" in loss.value  # one step: a number
    while monitor.poll():
        pass
    assert view.charts_box.children == (loss, view.charts["accuracy"])
    assert loss.value.count("<path ") == 3  # a line per rank and their mean
    assert 'data-scale="linear"' in loss.value
    assert ">0.97</span> <span" in view.charts["accuracy"].value  # one value: a number
    view.log_scale.value = True
    assert 'data-scale="log"' in loss.value and loss.value.count("<path ") == 3
    assert "KALE_METRIC" not in view.logs[None].value and "epoch 1" in view.logs[None].value


def test_widget_log_scale_redraws_under_the_monitors_lock():
    backend = ScriptedBackend(METRICS_SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="widget", start=False)
    while monitor.poll():
        pass
    loss = monitor.view.charts["loss"]
    toggle = threading.Thread(target=lambda: setattr(monitor.view.log_scale, "value", True))
    with monitor._lock:  # the monitor's thread is changing the model
        toggle.start()
        toggle.join(0.2)
        assert toggle.is_alive() and 'data-scale="linear"' in loss.value
    toggle.join(10)
    assert not toggle.is_alive() and 'data-scale="log"' in loss.value


def test_widget_cancel_button():
    backend = ScriptedBackend([Step(Status.RUNNING, ((0, "<b>not html</b>"),))])
    monitor = JobMonitor(backend, "job", view="widget", start=False)
    monitor.poll()
    view = monitor.view
    assert "&lt;b&gt;not html&lt;/b&gt;" in view.logs[0].value  # escaped
    assert view.tabs is None  # one node: no tabs
    view.button.click()
    assert backend.deleted.wait(5)
    monitor.poll()  # the job is gone: cancelled here, whether or not the delete has returned
    assert monitor.status == CANCELLED and view.button.disabled
    assert view.button.button_style == "" and view.button.description == "Cancel"
    assert view.button.tooltip == "The job has ended (Cancelled): nothing to cancel"
    assert 'data-status="Cancelled"' in view.badge.value


def test_widget_shows_a_reason_and_an_error():
    backend = ScriptedBackend([Step(Status.QUEUED, reason="waiting for quota")])
    monitor = JobMonitor(backend, "job", view="widget", start=False)
    monitor.poll()
    assert "waiting for quota" in monitor.view.reason.value


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


class WithOutputs(ScriptedBackend):
    """A job that wrote a model (what Backend.outputs answers)."""

    def outputs(self, name):
        from kale_ext.backends.base import JobOutputs, OutputFile

        return JobOutputs("/work/outputs/job", [OutputFile("model.pt", 2048)])


def test_both_views_show_the_outputs_with_their_sizes_once_the_job_ends(capsys):
    text = JobMonitor(WithOutputs(SCRIPT, nodes=2), "job", nodes=2, view="text", interval=0.01)
    assert text.wait(10) == "Complete"
    assert "[job] outputs: /work/outputs/job\n  model.pt    2.0 KiB\n" in capsys.readouterr().out
    widget = JobMonitor(WithOutputs(SCRIPT, nodes=2), "job", nodes=2, view="widget", start=False)
    while widget.poll():
        assert "kale-ext-outputs" not in str([c._dom_classes for c in widget.view.widget.children])
    box = widget.view.widget.children[-1]
    assert "kale-ext-outputs" in box._dom_classes
    assert "<b>Outputs</b>" in box.value and "model.pt    2.0 KiB" in box.value
    assert widget.outputs.files[0].size == 2048


def _progress(status: Status, percent: float):
    from kale_ext.progress import Progress

    found = info(status)
    found.progress = Progress.of(percent, 100, "step", "report", eta_seconds=int(100 - percent))
    return found


def test_text_view_prints_progress_now_and_then_while_running():
    stream, clock = io.StringIO(), [0.0]
    view = TextView(stream, metrics_every=10, clock=lambda: clock[0])
    m = MonitorModel("job", now=T0)
    for t, status, percent in [(0, Status.QUEUED, 5), (1, Status.RUNNING, 10),
                               (5, Status.RUNNING, 20), (12, Status.RUNNING, 30),
                               (13, Status.RUNNING, 30), (30, Status.COMPLETE, 100)]:  # fmt: skip
        clock[0] = t
        view.update(m, m.on_info(_progress(status, percent), at(t)), [])
    printed = [t.split(" (")[0] if "progress" not in t else t
               for t in stream.getvalue().splitlines()]  # fmt: skip
    assert printed == [
        "[job] Queued",  # no bar while queued
        "[job] Running",
        "[job] progress 10% (10/100 steps), ETA 1m 30s",  # 20% came too soon after
        "[job] progress 30% (30/100 steps), ETA 1m 10s",
        "[job] Complete",  # no stale bar at the end
    ]


def test_widget_shows_a_progress_bar_with_percent_and_eta_while_running():
    monitor = JobMonitor(ScriptedBackend(SCRIPT), "job", view="widget", start=False)
    view, m = monitor.view, monitor.model
    assert view.progress.layout.display == "none"  # nothing reported yet
    m.on_info(_progress(Status.RUNNING, 45), at(1))
    view.tick(m)
    assert "kale-ext-progress" in view.progress._dom_classes
    assert view.progress.layout.display == "flex" and view.progress_bar.value == 45
    assert view.progress_label.value == "<span>45% (45/100 steps), ETA 55s</span>"
    view.update(m, m.on_info(_progress(Status.FAILED, 50), at(2)), [])
    assert view.progress.layout.display == "none"
