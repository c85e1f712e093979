"""The metric charts: downsampling that keeps spikes, round ticks, and the SVG a widget shows."""

from __future__ import annotations

import math

import pytest

from kale_ext.ipython.plots import describe_metric, downsample, metric_svg, ticks
from kale_ext.metrics import SERIES_COLORS


def test_downsample_keeps_the_ends_and_each_buckets_extremes():
    points = [(i, math.sin(i / 50)) for i in range(5000)]
    out = downsample(points, 100)
    assert len(out) <= 202 and out[0] == points[0] and out[-1] == points[-1]
    assert [p[0] for p in out] == sorted({p[0] for p in out})
    assert min(v for _, v in out) == min(v for _, v in points)
    assert max(v for _, v in out) == max(v for _, v in points)
    assert downsample(points[:10], 10) == points[:10]
    assert len(downsample([(4, float(i)) for i in range(100)], 5)) <= 12  # all at one step


def test_metric_svg_colours_ranks_round_the_table():
    ranks = range(len(SERIES_COLORS) + 1)
    svg = metric_svg("loss", {r: [(0, 1.0), (1, 0.5)] for r in ranks}, {})
    groups = svg.split('class="kale-ext-metric-series"')[1:]
    assert f"stroke:{SERIES_COLORS[0]}" in groups[-1]  # the ninth rank wears the first colour


@pytest.mark.parametrize(
    ("low", "high", "count", "integers", "expected"),
    [(0, 1, 4, False, [0, 0.5, 1]), (0.93, 1.27, 3, False, [1, 1.2]),
     (-3, 7, 2, False, [0, 5]), (0, 3, 4, True, [0, 1, 2, 3]), (1, 2, 10, True, [1, 2]),
     (5, 5, 3, False, [5]), (0, math.inf, 3, False, [0])],
)  # fmt: skip
def test_ticks_are_round_and_within_the_range(low, high, count, integers, expected):
    assert ticks(low, high, count, integers) == expected


def test_metric_svg_draws_a_line_per_rank():
    series = {0: [(1, 1.2), (2, 0.4)], 1: [(1, 1.1), (2, 0.5)]}
    latest = {0: (2, 0.4), 1: (2, 0.5)}
    svg = metric_svg("loss", series, latest)
    label = "loss, latest: rank 0 0.4 at step 2, rank 1 0.5 at step 2"
    assert describe_metric("loss", latest) == label
    assert f'role="img" aria-label="{label}"' in svg
    assert svg.count("<path ") == 2 and svg.count("<circle ") == 2
    assert 'data-rank="0"' in svg and 'data-rank="1"' in svg
    assert f"stroke:{SERIES_COLORS[0]}" in svg and f"stroke:{SERIES_COLORS[1]}" in svg
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
