"""Small SVG line charts of a job's metrics, as HTML a widget shows: one chart per metric, a
line per rank in its series colour, the latest values below; series thinned to what a chart
can draw, keeping their spikes."""

from __future__ import annotations

import html
import math

from ..metrics import CHART_SIZE, format_value, series_color

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
    width: int = CHART_SIZE["width"],
    height: int = CHART_SIZE["height"],
) -> str:
    """A small line chart of one metric as HTML: its name, an SVG (x = step, a line per rank
    in the theme's colours, a dot at each rank's last point) and the latest values."""
    left, right, top, bottom = (CHART_SIZE[k] for k in ("left", "right", "top", "bottom"))
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
    for t in ticks(y_min, y_max, 3):
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
    for rank, points in sorted(shown.items()):
        color = series_color(rank)
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
        f'margin-right:4px;background:{series_color(rank)}"></span>'
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
