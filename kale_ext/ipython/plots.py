"""SVG line charts of a job's metrics, as HTML a widget shows: one chart per metric, a line per
rank in its series colour and their mean, a linear or log y axis, the last and best values in
the legend; a metric with one value is shown as a number. Series are thinned to what a chart
can draw, keeping their spikes."""

from __future__ import annotations

import html
import math

from ..metrics import CHART_SIZE, best_point, format_value, series_color

#: A point of a metric's series: (step, value).
Point = tuple[float, float]


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


def ticks(low: float, high: float, count: int, integers: bool = False) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) within [low, high]."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low]
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next((m * power for m in (1, 2, 5, 10) if m * power >= raw), 10 * power)
    if integers:
        step = max(1, round(step))
    out, t = [], math.ceil(low / step - 1e-9) * step
    while t <= high + step * 1e-9 and len(out) < 50:
        out.append(round(t, 12))
        t += step
    return out


def log_ticks(low: float, high: float) -> list[float]:
    """Tick values for a log axis over [10**low, 10**high]: the powers of ten within it (every
    2nd, 5th, ... one, at most 6), else (less than a decade) round linear values."""
    decades = range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1)
    if len(decades) >= 2:
        every = next(e for e in (1, 2, 5, 10, 20, 50, 100) if len(decades) <= 6 * e)
        return [10.0**k for k in decades if k % every == 0]
    return [t for t in ticks(10**low, 10**high, 4) if t > 0]


def mean_series(series: dict[int, list[Point]]) -> list[Point]:
    """The mean of the ranks at each step that all of them span (a rank's value between its
    reported steps is interpolated); empty with fewer than two ranks."""
    ranks = [points for points in series.values() if points]
    if len(ranks) < 2:
        return []
    first = max(points[0][0] for points in ranks)
    last = min(points[-1][0] for points in ranks)
    steps = sorted({s for points in ranks for s, _ in points if first <= s <= last})
    cursors = [0] * len(ranks)
    out = []
    for step in steps:
        total = 0.0
        for k, points in enumerate(ranks):
            i = cursors[k]
            while points[i][0] < step:
                i += 1
            cursors[k] = i
            s1, v1 = points[i]
            if s1 == step or i == 0:
                total += v1
            else:
                s0, v0 = points[i - 1]
                total += v0 + (v1 - v0) * (step - s0) / (s1 - s0)
        out.append((step, total / len(ranks)))
    return out


def log_scale_note(name: str, series: dict[int, list[Point]]) -> str:
    """Why a metric cannot be drawn on a log axis ('' when it can)."""
    lowest = min((v for points in series.values() for _, v in points), default=1.0)
    if lowest > 0:
        return ""
    return f"Log scale needs values above 0: {name} has {format_value(lowest)}. Drawn linear."


def describe_metric(name: str, latest: dict[int, Point]) -> str:
    """The latest values in words: "loss, latest: rank 0 0.31 at step 2, rank 1 0.3 at step 2"."""
    parts = [
        f"rank {rank} {format_value(v)} at step {format_value(s)}"
        for rank, (s, v) in sorted(latest.items())
    ]
    return f"{name}, latest: {', '.join(parts)}" if parts else f"{name}: no values yet"


_BOX = (
    'style="padding:4px 6px;border:1px solid var(--jp-border-color2, #e0e0e0);'
    'border-radius:2px;line-height:1.5"'
)
_NAME = 'style="font-weight:600;font-family:var(--jp-code-font-family, monospace)"'
_MUTED = 'style="color:var(--jp-ui-font-color2, #616161)"'


def _swatch(color: str, dashed: bool = False) -> str:
    line = f"border-top:3px {'dotted' if dashed else 'solid'} {color}"
    return (
        f'<span style="display:inline-block;width:12px;vertical-align:middle;margin-right:4px;'
        f'{line}"></span>'
    )


def value_html(name: str, latest: dict[int, Point]) -> str:
    """A metric reported once (per rank) as a number: "0.97 at step 3"; several ranks' mean
    with each rank's value below."""
    label = html.escape(describe_metric(name, latest))
    values = [v for _, v in latest.values()]
    steps = sorted({s for s, _ in latest.values()})
    big = format_value(sum(values) / len(values)) if values else "–"
    where = f" at step {format_value(steps[0])}" if len(steps) == 1 else ""
    mean = f" · mean of {len(values)} ranks" if len(values) > 1 else ""
    ranks = "".join(
        f'<span data-rank="{rank}" style="margin-right:10px;white-space:nowrap">'
        f"{_swatch(series_color(rank))}rank {rank} <b>{format_value(v)}</b>"
        f"{'' if where else f' step {format_value(s)}'}</span>"
        for rank, (s, v) in sorted(latest.items())
    )
    return (
        f'<div class="kale-ext-metric kale-ext-metric-value" data-metric="{html.escape(name)}" '
        f'{_BOX}><div {_NAME}>{html.escape(name)}</div><div role="img" aria-label="{label}">'
        f'<div><span class="kale-ext-metric-number" style="font-size:24px;font-weight:600">'
        f"{big}</span> <span {_MUTED}>{where.strip()}{mean}</span></div>"
        f'<div style="font-size:12px">{ranks if len(values) > 1 else ""}</div></div></div>'
    )


def _legend_item(
    label: str, color: str, last: Point | None, best: Point | None, dashed: bool = False
) -> str:
    def at(point: Point | None) -> str:
        if point is None:
            return "–"
        value, step = format_value(point[1]), format_value(point[0])
        return f"<b>{value}</b> <span {_MUTED}>step {step}</span>"

    return (
        f'<span class="kale-ext-metric-legend-item" data-series="{label}" '
        f'style="margin-right:12px;white-space:nowrap">{_swatch(color, dashed)}{label} '
        f"last {at(last)} · best {at(best)}</span>"
    )


def metric_svg(
    name: str,
    series: dict[int, list[Point]],
    latest: dict[int, Point],
    *,
    width: int = CHART_SIZE["width"],
    height: int = CHART_SIZE["height"],
    log: bool = False,
) -> str:
    """One metric as HTML: a number when it has one value per rank, else its name, an SVG
    chart (x = step, a line per rank in the theme's colours, their mean dotted, a dot at each
    rank's last point; a log y axis with ``log`` when every value is above 0) and a legend
    with each line's last and best values."""
    if all(len(points) <= 1 for points in series.values()) and latest:
        return value_html(name, latest)
    note = log_scale_note(name, series) if log else ""
    log = log and not note
    left, right, top, bottom = (CHART_SIZE[k] for k in ("left", "right", "top", "bottom"))
    plot_w, plot_h = width - left - right, height - top - bottom
    mean = mean_series(series)
    lines = {
        key: downsample(points, math.ceil(plot_w / 2))
        for key, points in [*sorted(series.items()), ("mean", mean)]
        if points or key != "mean"
    }

    def fy(value: float) -> float:
        return math.log10(value) if log else value

    drawn = [p for points in lines.values() for p in points]
    x_min = min((p[0] for p in drawn), default=0.0)
    x_max = max((p[0] for p in drawn), default=1.0)
    y_min = min((fy(p[1]) for p in drawn), default=0.0)
    y_max = max((fy(p[1]) for p in drawn), default=1.0)
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
        return round(top + (1 - (fy(value) - y_min) / (y_max - y_min)) * plot_h, 1)

    label = describe_metric(name, latest)
    text = 'font-size="9" style="fill:var(--jp-ui-font-color2, #616161)"'
    grid = 'stroke-width="1" style="stroke:var(--jp-border-color2, #e0e0e0)"'
    parts = [
        f'<svg role="img" aria-label="{html.escape(label)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" '
        f'data-scale="{"log" if log else "linear"}" '
        'style="display:block;font-family:var(--jp-ui-font-family, sans-serif)">',
        f"<title>{html.escape(label)}</title>",
    ]
    y_ticks = log_ticks(y_min, y_max) if log else ticks(y_min, y_max, 3)
    for t in y_ticks:
        y = sy(t)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y}" y2="{y}" {grid}/>')
        parts.append(
            f'<text x="{left - 4}" y="{y}" dy="0.32em" text-anchor="end" {text}>'
            f"{format_value(t)}</text>"
        )
    for t in ticks(x_min, x_max, 4, integers=True):
        parts.append(
            f'<text x="{sx(t)}" y="{height - bottom + 12}" text-anchor="middle" {text}>'
            f"{format_value(t)}</text>"
        )
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" '
        'stroke-width="1" style="stroke:var(--jp-border-color1, #bdbdbd)"/>'
    )
    mean_color = "var(--jp-ui-font-color1, #212121)"
    for key, points in lines.items():
        color = mean_color if key == "mean" else series_color(key)
        parts.append(f'<g class="kale-ext-metric-series" data-rank="{key}">')
        dash = ' stroke-dasharray="2 3"' if key == "mean" else ""
        if len(points) > 1:
            d = " ".join(f"{'L' if i else 'M'}{sx(s)} {sy(v)}" for i, (s, v) in enumerate(points))
            parts.append(
                f'<path d="{d}" fill="none" stroke-width="1.5" stroke-linejoin="round"{dash} '
                f'style="stroke:{color}"/>'
            )
        if points and key != "mean":
            s, v = points[-1]
            parts.append(f'<circle cx="{sx(s)}" cy="{sy(v)}" r="2.5" style="fill:{color}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    legend = [
        _legend_item(f"rank {rank}", series_color(rank), latest.get(rank), best_point(name, pts))
        for rank, pts in sorted(series.items())
    ]
    if mean:
        legend.append(
            _legend_item("mean", mean_color, mean[-1], best_point(name, mean), dashed=True)
        )
    note_html = f'<div class="kale-ext-metric-note" {_MUTED}>{html.escape(note)}</div>'
    return (
        f'<div class="kale-ext-metric" data-metric="{html.escape(name)}" {_BOX}>'
        f"<div {_NAME}>{html.escape(name)}</div>{''.join(parts)}"
        f"{note_html if note else ''}"
        f'<div style="font-size:12px;line-height:1.5;max-width:{width}px">{"".join(legend)}'
        "</div></div>"
    )
