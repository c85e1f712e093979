"""The job monitor: a live status badge, per-node logs (rank-prefixed), elapsed time, cancel,
and plots of the metrics the job reports (``kale_ext.report``).

Three layers, each small:

- :class:`MonitorModel`: the monitor's logic in plain Python (status changes, log lines kept
  per node up to a cap, metrics per name and rank, elapsed time, the cancel state). No
  threads, no I/O, no widgets.
- :class:`JobMonitor`: polls a backend from a background thread, so the kernel stays free, and
  feeds the model to a view.
- Views: :class:`WidgetView` (ipywidgets, updated from the thread, a small SVG chart per
  metric) where a front end can render widgets, else :class:`TextView`, which prints status
  changes, log lines and, now and then, the latest metrics.
"""

from __future__ import annotations

import bisect
import html
import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from ..backends.base import JobInfo, LogLine, NotFound, Status
from ..errors import KaleExtError
from ..metrics import PREFIX, parse_metric

#: The statuses a monitor shows beyond a backend's own.
CANCELLING = "Cancelling"
CANCELLED = "Cancelled"
DELETED = "Deleted"
FINAL = frozenset({Status.COMPLETE.value, Status.FAILED.value, CANCELLED, DELETED})
COLORS = {
    Status.CREATED.value: "#757575",
    Status.QUEUED.value: "#b26a00",
    Status.RUNNING.value: "#1565c0",
    Status.COMPLETE.value: "#2e7d32",
    Status.FAILED.value: "#c62828",
    CANCELLING: "#757575",
    CANCELLED: "#616161",
    DELETED: "#616161",
}
#: Consecutive backend errors after which a monitor stops polling.
MAX_ERRORS = 5
#: Series colours, by rank modulo their number: the JupyterLab theme's, with fallbacks for
#: front ends without its CSS variables (the same as the panel's logs view).
SERIES_COLORS = (
    "var(--jp-brand-color1, #1976d2)",
    "var(--jp-warn-color1, #f57c00)",
    "var(--jp-success-color1, #388e3c)",
    "var(--jp-info-color1, #0097a7)",
    "var(--jp-accent-color0, #00796b)",
    "var(--jp-error-color1, #d32f2f)",
    "var(--jp-brand-color0, #0d47a1)",
    "var(--jp-warn-color0, #e65100)",
)

#: A point of a metric's series: (step, value).
Point = tuple[float, float]


def format_elapsed(seconds: float) -> str:
    """`0:07`, `12:34`, `1:02:03`."""
    s = max(0, int(seconds))
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def format_value(value: float) -> str:
    """A number for people: 4 significant digits, exponent form when very large or small."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent):+d}"
    return f"{value:.4g}"


def downsample(points: list[Point], buckets: int) -> list[Point]:
    """At most about ``2 * buckets`` points that look like ``points`` when drawn.

    The steps are cut into ``buckets`` equal ranges; each keeps its lowest and highest value
    (in step order), so spikes survive; the first and last points stay. ``points`` are sorted
    by step."""
    n = len(points)
    buckets = max(1, int(buckets))
    if n <= 2 * buckets + 2:
        return points
    first, span = points[0][0], points[-1][0] - points[0][0]

    def bucket_of(i: int) -> int:
        if span > 0:
            return min(buckets - 1, int((points[i][0] - first) / span * buckets))
        return i * buckets // n

    out = [points[0]]
    i = 1
    while i < n - 1:
        bucket = bucket_of(i)
        lo = hi = j = i
        while j < n - 1 and bucket_of(j) == bucket:
            if points[j][1] < points[lo][1]:
                lo = j
            if points[j][1] > points[hi][1]:
                hi = j
            j += 1
        out.extend(points[k] for k in sorted({lo, hi}))
        i = j
    out.append(points[-1])
    return out


def _ticks(low: float, high: float, count: int, integers: bool = False) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) within [low, high]."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low]
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next((m * power for m in (1, 2, 5, 10) if m * power >= raw), 10 * power)
    if integers:
        step = max(1, round(step))
    ticks, t = [], math.ceil(low / step - 1e-9) * step
    while t <= high + step * 1e-9 and len(ticks) < 50:
        ticks.append(round(t, 12))
        t += step
    return ticks


def describe_metric(name: str, latest: dict[int, Point]) -> str:
    """The latest values in words: "loss, latest: rank 0 0.31 at step 2, rank 1 0.3 at step 2"."""
    parts = [
        f"rank {rank} {format_value(v)} at step {format_value(s)}"
        for rank, (s, v) in sorted(latest.items())
    ]
    return f"{name}, latest: {', '.join(parts)}" if parts else f"{name}: no values yet"


def metric_svg(
    name: str,
    series: dict[int, list[Point]],
    latest: dict[int, Point],
    *,
    width: int = 280,
    height: int = 120,
) -> str:
    """A small line chart of one metric as HTML: its name, an SVG (x = step, a line per rank
    in the theme's colours, a dot at each rank's last point) and the latest values."""
    left, right, top, bottom = 44, 8, 6, 18
    plot_w, plot_h = width - left - right, height - top - bottom
    shown = {rank: downsample(points, math.ceil(plot_w / 2)) for rank, points in series.items()}
    drawn = [p for points in shown.values() for p in points]
    x_min = min((p[0] for p in drawn), default=0.0)
    x_max = max((p[0] for p in drawn), default=1.0)
    y_min = min((p[1] for p in drawn), default=0.0)
    y_max = max((p[1] for p in drawn), default=1.0)
    if x_min == x_max:
        x_min, x_max = x_min - 1, x_max + 1
    if y_min == y_max:
        pad = abs(y_min) * 0.1 or 1.0
        y_min, y_max = y_min - pad, y_max + pad
    pad = (y_max - y_min) * 0.05
    y_min, y_max = y_min - pad, y_max + pad

    def sx(step: float) -> float:
        return round(left + (step - x_min) / (x_max - x_min) * plot_w, 1)

    def sy(value: float) -> float:
        return round(top + (1 - (value - y_min) / (y_max - y_min)) * plot_h, 1)

    label = describe_metric(name, latest)
    text = 'font-size="9" style="fill:var(--jp-ui-font-color2, #616161)"'
    grid = 'stroke-width="1" style="stroke:var(--jp-border-color2, #e0e0e0)"'
    parts = [
        f'<svg role="img" aria-label="{html.escape(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" '
        'style="display:block;font-family:var(--jp-ui-font-family, sans-serif)">',
        f"<title>{html.escape(label)}</title>",
    ]
    for t in _ticks(y_min, y_max, 3):
        y = sy(t)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y}" y2="{y}" {grid}/>')
        parts.append(
            f'<text x="{left - 4}" y="{y}" dy="0.32em" text-anchor="end" {text}>'
            f"{format_value(t)}</text>"
        )
    for t in _ticks(x_min, x_max, 4, integers=True):
        parts.append(
            f'<text x="{sx(t)}" y="{height - bottom + 12}" text-anchor="middle" {text}>'
            f"{format_value(t)}</text>"
        )
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" '
        'stroke-width="1" style="stroke:var(--jp-border-color1, #bdbdbd)"/>'
    )
    for rank, points in sorted(shown.items()):
        color = SERIES_COLORS[rank % len(SERIES_COLORS)]
        parts.append(f'<g class="kale-ext-metric-series" data-rank="{rank}">')
        if len(points) > 1:
            d = " ".join(f"{'L' if i else 'M'}{sx(s)} {sy(v)}" for i, (s, v) in enumerate(points))
            parts.append(
                f'<path d="{d}" fill="none" stroke-width="1.5" stroke-linejoin="round" '
                f'style="stroke:{color}"/>'
            )
        if points:
            s, v = points[-1]
            parts.append(f'<circle cx="{sx(s)}" cy="{sy(v)}" r="2.5" style="fill:{color}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    legend = "".join(
        f'<span data-rank="{rank}" style="margin-right:10px;white-space:nowrap">'
        f'<span style="display:inline-block;width:10px;height:3px;vertical-align:middle;'
        f'margin-right:4px;background:{SERIES_COLORS[rank % len(SERIES_COLORS)]}"></span>'
        f"rank {rank} <b>{format_value(v)}</b> step {format_value(s)}</span>"
        for rank, (s, v) in sorted(latest.items())
    )
    return (
        f'<div class="kale-ext-metric" data-metric="{html.escape(name)}" '
        'style="padding:4px 6px;border:1px solid var(--jp-border-color2, #e0e0e0);'
        'border-radius:2px;line-height:1.5">'
        f'<div style="font-weight:600;font-family:var(--jp-code-font-family, monospace)">'
        f"{html.escape(name)}</div>{''.join(parts)}"
        f'<div style="font-size:12px;line-height:1.5;max-width:{width}px">{legend}</div></div>'
    )


@dataclass(frozen=True)
class Change:
    """A status change: what the monitor shows and the text view prints."""

    status: str
    reason: str | None


class MonitorModel:
    """A job's state as a monitor shows it. Every method takes the time it happens at."""

    def __init__(
        self,
        name: str,
        *,
        backend: str = "",
        nodes: int = 1,
        procs_per_node: int = 1,
        max_lines: int = 1000,
        max_points: int = 2000,
        show_metric_lines: bool = False,
        now: datetime | None = None,
    ):
        if max_lines < 1:
            raise ValueError("max_lines must be at least 1")
        if max_points < 16:
            raise ValueError("max_points must be at least 16")
        self.name = name
        self.backend = backend
        self.nodes = nodes
        self.procs_per_node = procs_per_node
        self.max_lines = max_lines
        self.status = Status.CREATED.value
        self.reason: str | None = None
        self.changes: list[Change] = []
        self.started = now or _now()
        self.ended: datetime | None = None
        self.lines: dict[int, deque[str]] = {k: deque(maxlen=max_lines) for k in range(nodes)}
        self.dropped: dict[int, int] = dict.fromkeys(range(nodes), 0)
        self.all_lines: deque[str] = deque(maxlen=max_lines)
        self.all_dropped = 0
        self.offsets: dict[int, int] = {}
        # metrics: name -> rank -> points sorted by step; the latest value (NaN too) apart
        self.max_points = max_points
        self.show_metric_lines = show_metric_lines
        self.metrics: dict[str, dict[int, list[Point]]] = {}
        self.latest: dict[str, dict[int, Point]] = {}
        self.metric_lines = 0
        self.metrics_version = 0
        self.metric_versions: dict[str, int] = {}
        self.cancel_state: str | None = None  # None, "requested", "done", "failed"
        self._before_cancel: tuple[str, str | None] = (self.status, None)
        self.error: str | None = None

    # -- status --

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def _set(self, status: str, reason: str | None, now: datetime) -> Change | None:
        if (status, reason) == (self.status, self.reason) and self.changes:
            return None
        self.status, self.reason = status, reason
        change = Change(status, reason)
        self.changes.append(change)
        if status in FINAL and self.ended is None:
            self.ended = now
        return change

    def on_info(self, info: JobInfo, now: datetime | None = None) -> Change | None:
        """A status read from the backend; returns the change, if it is one."""
        now = now or _now()
        self.error = None
        created = _parse_time(info.created)
        if created is not None:
            self.started = created
        self.nodes = max(self.nodes, info.num_nodes)
        self.procs_per_node = info.procs_per_node
        for k in range(self.nodes):
            self.lines.setdefault(k, deque(maxlen=self.max_lines))
            self.dropped.setdefault(k, 0)
        if self.finished:
            return None
        if self.cancel_state == "requested":
            return None  # keep showing "Cancelling" until the delete returns
        status = info.status.value if isinstance(info.status, Status) else str(info.status)
        change = self._set(status, info.reason, now)
        if status in FINAL:
            self.ended = _parse_time(info.finished) or self.ended or now
        return change

    def on_gone(self, now: datetime | None = None) -> Change | None:
        """The job no longer exists: cancelled here, or deleted elsewhere."""
        if self.finished:
            return None
        if self.cancel_state is not None:
            return self._set(CANCELLED, None, now or _now())
        return self._set(DELETED, "the job was deleted", now or _now())

    def on_error(self, message: str) -> None:
        """The backend could not be read; the monitor shows it and keeps trying."""
        self.error = message

    # -- logs --

    def on_lines(self, lines: Iterable[LogLine]) -> list[str]:
        """Buffer new log lines (the newest ``max_lines`` per node); returns them as shown.

        The lines ``report()`` printed go to the metrics instead (and are shown too with
        ``show_metric_lines``)."""
        shown = []
        for line in lines:
            if line.text.startswith(PREFIX):
                self.metric_lines += 1
                self.offsets[line.node] = max(self.offsets.get(line.node, 0), line.offset)
                record = parse_metric(line.text)
                if record is not None:
                    self.on_metric(record, line.rank if line.rank is not None else line.node)
                if not self.show_metric_lines:
                    continue
            text = f"{line.prefix} {line.text}"
            buf = self.lines.setdefault(line.node, deque(maxlen=self.max_lines))
            if len(buf) == self.max_lines:
                self.dropped[line.node] = self.dropped.get(line.node, 0) + 1
            buf.append(text)
            if len(self.all_lines) == self.max_lines:
                self.all_dropped += 1
            self.all_lines.append(text)
            self.offsets[line.node] = max(self.offsets.get(line.node, 0), line.offset)
            shown.append(text)
        return shown

    # -- metrics --

    def on_metric(self, record: dict, rank: int = 0) -> list[str]:
        """Add one ``report()`` record; its own ``rank`` wins over the line's. Values that are
        not numbers are ignored; a missing step is the one after the series' last. Returns
        the names of the metrics it added to."""
        own = record.get("rank")
        if isinstance(own, int) and not isinstance(own, bool) and own >= 0:
            rank = own
        step = _number(record.get("step"))
        if step is not None and not math.isfinite(step):
            step = None
        names = []
        for name, raw in record.items():
            value = _number(raw)
            if name in ("step", "rank") or value is None:
                continue
            series = self.metrics.setdefault(name, {}).setdefault(rank, [])
            at = step if step is not None else (series[-1][0] + 1 if series else 0)
            self.latest.setdefault(name, {})[rank] = (at, value)
            self.metric_versions[name] = self.metric_versions.get(name, 0) + 1
            names.append(name)
            if not math.isfinite(value):
                continue  # the latest value, not a point of the chart
            if series and series[-1][0] == at:
                series[-1] = (at, value)
            elif not series or series[-1][0] < at:
                series.append((at, value))
            else:
                bisect.insort(series, (at, value), key=lambda p: p[0])
            if len(series) > self.max_points:
                series[:] = downsample(series, self.max_points // 4)
        if names:
            self.metrics_version += 1
        return names

    def metrics_text(self) -> str:
        """The latest value of every metric and rank, on one line ('' without metrics)."""
        parts = []
        for name, ranks in self.latest.items():
            values = ", ".join(
                f"rank {rank} {format_value(v)} (step {format_value(s)})"
                for rank, (s, v) in sorted(ranks.items())
            )
            parts.append(f"{name}: {values}")
        return " · ".join(parts)

    def node_text(self, node: int | None = None) -> str:
        """One node's buffered log (all nodes with None), with a note of dropped lines."""
        lines, dropped = (
            (self.all_lines, self.all_dropped)
            if node is None
            else (self.lines.get(node, ()), self.dropped.get(node, 0))
        )
        head = f"… {dropped} earlier line(s) not shown\n" if dropped else ""
        return head + "\n".join(lines)

    # -- time --

    def elapsed(self, now: datetime | None = None) -> str:
        end = self.ended or now or _now()
        return format_elapsed((end - self.started).total_seconds())

    # -- cancel --

    def request_cancel(self, now: datetime | None = None) -> bool:
        """Whether the caller should delete the job now (not twice, not once it ended)."""
        if self.finished or self.cancel_state in ("requested", "done"):
            return False
        self.cancel_state = "requested"
        self._before_cancel = (self.status, self.reason)
        self._set(CANCELLING, None, now or _now())
        return True

    def cancel_finished(
        self, ok: bool, message: str | None = None, now: datetime | None = None
    ) -> Change | None:
        now = now or _now()
        if ok:
            self.cancel_state = "done"
            if self.status in (Status.COMPLETE.value, CANCELLED):
                return None
            self.ended = None
            return self._set(CANCELLED, None, now)
        self.cancel_state = "failed"
        self.error = f"cancel failed: {message}"
        return self._set(*self._before_cancel, now)

    # -- presentation --

    @property
    def color(self) -> str:
        return COLORS.get(self.status, "#757575")

    @property
    def shape(self) -> str:
        return f"{self.nodes} node(s) × {self.procs_per_node} process(es)"

    def summary(self, now: datetime | None = None) -> str:
        reason = f": {self.reason}" if self.reason else ""
        return f"[{self.name}] {self.status}{reason} ({self.elapsed(now)})"


# ---------------------------------------------------------------------------------------------
# Views


class TextView:
    """Prints status changes and log lines (a terminal, or a front end without widgets), and
    the latest metrics when they changed: at most every ``metrics_every`` seconds, and at the
    end."""

    def __init__(self, stream=None, *, metrics_every: float = 10.0, clock=time.monotonic):
        self._stream = stream
        self.metrics_every = metrics_every
        self._clock = clock
        self._metrics_printed = 0
        self._metrics_at: float | None = None

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
        if change is not None and change.status in FINAL:
            self._print(model.summary())
        if model.error and change is None and not lines:
            self._print(f"[{model.name}] {model.error}")

    def tick(self, model: MonitorModel) -> None:
        self._print_metrics(model)

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

    def __init__(self, model: MonitorModel, on_cancel):
        import ipywidgets as w

        self._w = w
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
        self.charts: dict[str, object] = {}
        self._chart_versions: dict[str, int] = {}
        self.metrics = w.HBox(
            layout=w.Layout(flex_flow="row wrap", grid_gap="8px 16px", display="none")
        )
        self.metrics.add_class("kale-ext-metrics")
        self.logs: dict[int | None, object] = {}
        self._texts: dict[int | None, str] = {}
        self.tabs = None
        self.widget = w.VBox(
            [w.HBox([self.badge, self.title, self.clock, self.button]), self.reason, self.metrics],
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
        self.button.disabled = model.finished or model.cancel_state in ("requested", "done")
        if model.cancel_state == "requested":
            self.button.description = "Cancelling…"
        self._update_charts(model)
        for key, log in self.logs.items():
            text = model.node_text(key)
            if text != self._texts.get(key):
                self._texts[key] = text
                log.value = (
                    '<pre style="max-height:24em;overflow:auto;margin:0;font-size:12px">'
                    f"{html.escape(text)}</pre>"
                )

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
            chart.value = metric_svg(name, model.metrics.get(name, {}), model.latest.get(name, {}))
        if added:
            self.metrics.children = tuple(self.charts.values())
            self.metrics.layout.display = "flex"

    def tick(self, model: MonitorModel) -> None:
        value = f"<span>{model.elapsed()}</span>"
        if self.clock.value != value:
            self.clock.value = value

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


# ---------------------------------------------------------------------------------------------
# The monitor


class JobMonitor:
    """Watches one job from a background thread; display it to see it (``_ipython_display_``).

    ``monitor.wait()`` blocks until the job ends; ``monitor.cancel()`` deletes it.
    """

    def __init__(
        self,
        backend,
        name: str,
        *,
        nodes: int = 1,
        procs_per_node: int = 1,
        view: str | None = None,
        interval: float = 0.5,
        max_lines: int = 1000,
        show_metric_lines: bool = False,
        start: bool = True,
        shell=None,
    ):
        self.backend = backend
        self.name = name
        self.interval = interval
        self.model = MonitorModel(
            name,
            backend=getattr(backend, "name", ""),
            nodes=nodes,
            procs_per_node=procs_per_node,
            max_lines=max_lines,
            show_metric_lines=show_metric_lines,
        )
        if view is None:
            view = "widget" if widgets_can_render(shell) else "text"
        if view not in ("widget", "text"):
            raise ValueError(f"view must be 'widget' or 'text', not {view!r}")
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._errors = 0
        self._thread: threading.Thread | None = None
        self.view = WidgetView(self.model, self.cancel) if view == "widget" else TextView()
        self.view.started(self.model)
        if start:
            self.start()

    # -- polling --

    def poll(self) -> bool:
        """Read the job's status and new log lines once; False when there is nothing left."""
        try:
            info = self.backend.get_job(self.name)
            lines = list(
                self.backend.logs(self.name, follow=False, offsets=dict(self.model.offsets))
            )
        except NotFound:
            with self._lock:
                change = self.model.on_gone()
                self.view.update(self.model, change, [])
            return False
        except KaleExtError as e:
            self._errors += 1
            with self._lock:
                self.model.on_error(str(e))
                self.view.update(self.model, None, [])
            return self._errors < MAX_ERRORS
        self._errors = 0
        with self._lock:
            change = self.model.on_info(info)
            version = self.model.metrics_version
            shown = self.model.on_lines(lines)
            if change is not None or shown or self.model.metrics_version != version:
                self.view.update(self.model, change, shown)
            else:
                self.view.tick(self.model)
        return not self.model.finished

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.poll():
                self._stop.wait(self.interval)
        except Exception as e:  # never let a monitor thread die silently
            with self._lock:
                self.model.on_error(f"the monitor stopped: {type(e).__name__}: {e}")
                self.view.update(self.model, None, [])

    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name=f"kale-ext-monitor-{self.name}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop watching (the job keeps running)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> str:
        """Block until the job ends (or ``timeout`` seconds); returns the status."""
        if self._thread is None:
            self.start()
        self._thread.join(timeout)
        return self.model.status

    @property
    def status(self) -> str:
        return self.model.status

    # -- cancel --

    def cancel(self, wait: bool = False) -> None:
        """Delete the job, in the background unless ``wait``."""
        with self._lock:
            if not self.model.request_cancel():
                return
            self.view.update(self.model, self.model.changes[-1], [])

        def run() -> None:
            try:
                self.backend.delete(self.name)
                ok, message = True, None
            except NotFound:
                ok, message = True, None
            except KaleExtError as e:
                ok, message = False, str(e)
            with self._lock:
                change = self.model.cancel_finished(ok, message)
                self.view.update(self.model, change, [])

        if wait:
            run()
        else:
            threading.Thread(target=run, name=f"kale-ext-cancel-{self.name}", daemon=True).start()

    # -- display --

    def _ipython_display_(self) -> None:
        self.view.display(self.model)

    def __repr__(self) -> str:
        return f"<JobMonitor {self.name}: {self.model.status}>"
