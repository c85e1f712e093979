"""The monitor's views: :class:`WidgetView` (ipywidgets, updated from the monitor's thread, a
small SVG chart per metric) where a front end can render widgets, else :class:`TextView`, which
prints status changes, log lines and, now and then, the latest metrics."""

from __future__ import annotations

import html
import os
import sys
import threading
import time

from ..display import outputs_text
from .monitor import FINAL, Change, MonitorModel
from .plots import metric_svg


class TextView:
    """Prints status changes and log lines (a terminal, or a front end without widgets), and
    the latest metrics and progress when they changed: at most every ``metrics_every`` seconds
    (metrics also at the end; progress only while the job runs)."""

    def __init__(self, stream=None, *, metrics_every: float = 10.0, clock=time.monotonic):
        self._stream = stream
        self.metrics_every = metrics_every
        self._clock = clock
        self._metrics_printed = 0
        self._metrics_at: float | None = None
        self._progress_printed = ""
        self._progress_at: float | None = None

    @property
    def stream(self):
        return self._stream or sys.stdout

    def started(self, model: MonitorModel) -> None:
        self._print(
            f"[{model.name}] submitted to the {model.backend or ''} backend: {model.shape}; "
            f"logs follow (cancel: %kale_delete {model.name})"
        )

    def update(self, model: MonitorModel, change: Change | None, lines: list[str]) -> None:
        if change is not None and change.status not in FINAL:
            self._print(model.summary())
        for text in lines:
            self._print(text)
        self._print_metrics(model, final=model.finished)
        self._print_progress(model)
        if change is not None and change.status in FINAL:
            self._print(model.summary())
            if model.failure_text():
                self._print(model.failure_text())
        if model.error and change is None and not lines:
            self._print(f"[{model.name}] {model.error}")

    def tick(self, model: MonitorModel) -> None:
        self._print_metrics(model)
        self._print_progress(model)

    def _print_progress(self, model: MonitorModel) -> None:
        text, now = model.progress_text(), self._clock()
        if not text or text == self._progress_printed:
            return
        if self._progress_at is not None and now - self._progress_at < self.metrics_every:
            return
        self._progress_printed, self._progress_at = text, now
        self._print(f"[{model.name}] progress {text}")

    def show_outputs(self, model: MonitorModel, found) -> None:
        if found.location:
            self._print(f"[{model.name}] outputs: {outputs_text(found)}")

    def _print_metrics(self, model: MonitorModel, final: bool = False) -> None:
        if model.metrics_version == self._metrics_printed:
            return
        now = self._clock()
        if (
            not final
            and self._metrics_at is not None
            and now - self._metrics_at < self.metrics_every
        ):
            return
        self._metrics_printed, self._metrics_at = model.metrics_version, now
        self._print(f"[{model.name}] metrics: {model.metrics_text()}")

    def _print(self, text: str) -> None:
        try:
            print(text, file=self.stream, flush=True)
        except (ValueError, OSError):  # the stream was closed (the kernel is going away)
            pass

    def display(self, model: MonitorModel) -> None:
        self._print(f"{model.summary()}: {model.shape} on the {model.backend} backend")


class WidgetView:
    """ipywidgets: badge, title, elapsed time, cancel button, reason, logs per node in tabs."""

    def __init__(self, model: MonitorModel, on_cancel, lock: threading.RLock | None = None):
        import ipywidgets as w

        self._w = w
        # held while the model changes (the monitor's thread) and while the charts are redrawn
        # for a click on the log scale toggle (the kernel's thread)
        self._lock = lock or threading.RLock()
        self.badge = w.HTML(layout=w.Layout(width="auto"))
        self.badge.add_class("kale-ext-badge")
        self.title = w.HTML(
            f"<b>{html.escape(model.name)}</b> · {html.escape(model.backend)} · "
            f"{html.escape(model.shape)}",
            layout=w.Layout(width="auto"),
        )
        self.clock = w.HTML(layout=w.Layout(width="auto"))
        self.clock.add_class("kale-ext-elapsed")
        self.button = w.Button(
            description="Cancel", icon="stop", button_style="danger", tooltip="Delete the job"
        )
        self.button.add_class("kale-ext-cancel")
        self.button.on_click(lambda _: on_cancel())
        self.reason = w.HTML()
        self.reason.add_class("kale-ext-reason")
        self.failure = w.HTML()  # where and why, once the job failed
        self.failure.add_class("kale-ext-failure")
        # how far it is: a bar with percent and ETA, shown only while it runs
        self.progress_bar = w.FloatProgress(min=0, max=100, layout=w.Layout(width="240px"))
        self.progress_label = w.HTML()
        self.progress = w.HBox([self.progress_bar, self.progress_label],
                               layout=w.Layout(display="none"))  # fmt: skip
        self.progress.add_class("kale-ext-progress")
        self.charts: dict[str, object] = {}
        self._chart_versions: dict[str, int] = {}
        self.charts_box = w.HBox(layout=w.Layout(flex_flow="row wrap", grid_gap="8px 16px"))
        self.log_scale = w.ToggleButton(
            description="Log scale", tooltip="A log y axis (values above 0 only)"
        )
        self.log_scale.add_class("kale-ext-log-scale")
        self.log_scale.observe(lambda _: self._redraw_charts(), names="value")
        self.metrics = w.VBox([self.log_scale, self.charts_box], layout=w.Layout(display="none"))
        self.metrics.add_class("kale-ext-metrics")
        self._model = model
        self.logs: dict[int | None, object] = {}
        self._texts: dict[int | None, str] = {}
        self.tabs = None
        self.widget = w.VBox(
            [
                w.HBox([self.badge, self.title, self.clock, self.button]),
                self.progress,
                self.reason,
                self.failure,
                self.metrics,
            ],
        )
        self.widget.add_class("kale-ext-monitor")
        self._build_logs(model)
        self.update(model, None, [])

    def _log_widget(self, key: int | None):
        log = self._w.HTML()
        log.add_class("kale-ext-log" if key is None else f"kale-ext-log-node-{key}")
        self.logs[key] = log
        return log

    def _build_logs(self, model: MonitorModel) -> None:
        w = self._w
        if model.nodes <= 1:
            self.widget.children = (*self.widget.children, self._log_widget(0))
            return
        keys: list[int | None] = [None, *range(model.nodes)]
        children = [self._log_widget(k) for k in keys]
        titles = ["all nodes", *(f"node {k}" for k in range(model.nodes))]
        self.tabs = w.Tab(children=children, titles=titles)
        self.tabs.add_class("kale-ext-logs")
        self.widget.children = (*self.widget.children, self.tabs)

    def update(self, model: MonitorModel, change: Change | None, lines: list[str]) -> None:
        status = html.escape(model.status)
        self.badge.value = (
            f'<span class="kale-ext-status" data-status="{status}" style="background:'
            f"{model.color};color:white;border-radius:10px;padding:2px 10px;"
            f'font-weight:600">{status}</span>'
        )
        self.tick(model)
        note = model.error or model.reason or ""
        self.reason.value = f"<span>{html.escape(note)}</span>" if note else ""
        where = model.failure_text()
        self.failure.value = f"<pre style='margin:0'>{html.escape(where)}</pre>" if where else ""
        self._update_button(model)
        self._update_charts(model)
        for key, log in self.logs.items():
            text = model.node_text(key)
            if text != self._texts.get(key):
                self._texts[key] = text
                log.value = (
                    '<pre style="max-height:24em;overflow:auto;margin:0;font-size:12px">'
                    f"{html.escape(text)}</pre>"
                )

    def _update_button(self, model: MonitorModel) -> None:
        """Cancel, while there is something to cancel; once the job has ended, grey (a disabled
        danger button still reads as live) with the reason in its tooltip."""
        button = self.button
        if model.finished:
            button.disabled = True
            button.button_style = ""
            button.description = "Cancel"
            button.tooltip = f"The job has ended ({model.status}): nothing to cancel"
        elif model.cancel_state in ("requested", "done"):
            button.disabled = True
            button.description = "Cancelling…"
            button.tooltip = "Deleting the job…"
        else:
            button.disabled = False
            button.button_style = "danger"
            button.description = "Cancel"
            button.tooltip = "Delete the job"

    def _update_charts(self, model: MonitorModel) -> None:
        """A chart per metric, redrawn when its metric changed."""
        added = False
        for name, version in model.metric_versions.items():
            if self._chart_versions.get(name) == version:
                continue
            chart = self.charts.get(name)
            if chart is None:
                chart = self.charts[name] = self._w.HTML()
                chart.add_class("kale-ext-metric-chart")
                added = True
            self._chart_versions[name] = version
            chart.value = metric_svg(
                name,
                model.metrics.get(name, {}),
                model.latest.get(name, {}),
                log=self.log_scale.value,
            )
        if added:
            self.charts_box.children = tuple(self.charts.values())
            self.metrics.layout.display = "flex"

    def _redraw_charts(self) -> None:
        """Every chart again (the log scale was toggled)."""
        with self._lock:
            self._chart_versions.clear()
            self._update_charts(self._model)

    def show_outputs(self, model: MonitorModel, found) -> None:
        """An Outputs section below the logs: each file with its size."""
        if not found.location:
            return
        box = self._w.HTML(
            f"<b>Outputs</b><pre style='margin:0'>{html.escape(outputs_text(found))}</pre>"
        )
        box.add_class("kale-ext-outputs")
        self.widget.children = (*self.widget.children, box)

    def tick(self, model: MonitorModel) -> None:
        value = f"<span>{model.elapsed()}</span>"
        if self.clock.value != value:
            self.clock.value = value
        self._update_progress(model)

    def _update_progress(self, model: MonitorModel) -> None:
        """The bar and its `45% (45/100 steps), ETA 1m 05s`, hidden unless the job runs."""
        shown = model.progress_shown
        display = "none" if shown is None else "flex"
        if self.progress.layout.display != display:
            self.progress.layout.display = display
        if shown is None:
            return
        self.progress_bar.value = shown.percent
        label = f"<span>{html.escape(model.progress_text())}</span>"
        if self.progress_label.value != label:
            self.progress_label.value = label

    def started(self, model: MonitorModel) -> None:
        pass

    def bundle(self, model: MonitorModel) -> dict:
        """The widget, with a plain-text stand-in for front ends that cannot render it."""
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = (
            f"{model.summary()}: {model.shape} on the {model.backend} backend "
            f"(a live monitor where widgets render; `%kale_logs {model.name}` prints the logs)"
        )
        return data

    def display(self, model: MonitorModel) -> None:
        from IPython.display import display

        display(self.bundle(model), raw=True)


def widgets_can_render(shell=None) -> bool:
    """Whether a front end can show widgets: a kernel with comms (not a plain terminal).

    ``KALE_EXT_MONITOR=text`` or ``=widget`` decides instead."""
    choice = os.environ.get("KALE_EXT_MONITOR", "").lower()
    if choice in ("text", "widget"):
        return choice == "widget"
    if shell is None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            return False
    if getattr(shell, "kernel", None) is None:
        return False
    try:
        import comm  # noqa: F401
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True
