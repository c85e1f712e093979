"""The metric charts: downsampling that keeps spikes, round ticks, the mean of the ranks, a log
axis, and the HTML a widget shows (a chart, or a number for a metric with one value)."""

from __future__ import annotations

import math

import pytest

from kale_ext.ipython.plots import (
    describe_metric,
    downsample,
    log_ticks,
    mean_series,
    metric_svg,
    ticks,
)
from kale_ext.metrics import CHART_SIZE, SERIES_COLORS


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
    assert 'data-rank="mean"' in groups[-1]
    assert f"stroke:{SERIES_COLORS[0]}" in groups[-2]  # the ninth rank wears the first colour


@pytest.mark.parametrize(
    ("low", "high", "count", "integers", "expected"),
    [(0, 1, 4, False, [0, 0.5, 1]), (0.93, 1.27, 3, False, [1, 1.2]),
     (-3, 7, 2, False, [0, 5]), (0, 3, 4, True, [0, 1, 2, 3]), (1, 2, 10, True, [1, 2]),
     (5, 5, 3, False, [5]), (0, math.inf, 3, False, [0])],
)  # fmt: skip
def test_ticks_are_round_and_within_the_range(low, high, count, integers, expected):
    assert ticks(low, high, count, integers) == expected


def test_metric_svg_draws_a_line_per_rank_and_their_mean():
    series = {0: [(1, 1.2), (2, 0.4)], 1: [(1, 1.1), (2, 0.5)]}
    latest = {0: (2, 0.4), 1: (2, 0.5)}
    svg = metric_svg("loss", series, latest)
    label = "loss, latest: rank 0 0.4 at step 2, rank 1 0.5 at step 2"
    assert describe_metric("loss", latest) == label
    assert f'role="img" aria-label="{label}"' in svg
    assert svg.count("<path ") == 3 and svg.count("<circle ") == 2
    assert 'data-rank="0"' in svg and 'data-rank="1"' in svg and 'data-rank="mean"' in svg
    assert f"stroke:{SERIES_COLORS[0]}" in svg and f"stroke:{SERIES_COLORS[1]}" in svg
    # the legend: each line's last and best (lowest for a loss, highest for an accuracy)
    assert (
        'rank 1 last <b>0.5</b> <span style="color:var(--jp-ui-font-color2, #616161)">step 2' in svg
    )
    assert "mean last <b>0.45</b>" in svg and "best <b>0.45</b>" in svg
    accuracy = metric_svg("accuracy", {0: [(1, 0.9), (2, 0.8)]}, {0: (2, 0.8)})
    assert "last <b>0.8</b>" in accuracy and "best <b>0.9</b>" in accuracy
    assert 'data-rank="mean"' not in accuracy  # one rank: no mean
    # names are escaped
    assert "&lt;b&gt;" in metric_svg("<b>", {}, {})


@pytest.mark.parametrize(
    ("series", "latest", "number", "caption"),
    [({0: [(3, 0.97)]}, {0: (3, 0.97)}, "0.97", "at step 3"),
     ({0: [(3, 0.9)], 1: [(3, 0.92)]}, {0: (3, 0.9), 1: (3, 0.92)}, "0.91",
      "at step 3 · mean of 2 ranks"),
     ({0: []}, {0: (1, math.nan)}, "nan", "at step 1")],
)  # fmt: skip
def test_a_metric_with_one_value_is_a_number(series, latest, number, caption):
    out = metric_svg("accuracy", series, latest)
    assert "<svg" not in out and 'role="img" aria-label="accuracy, latest: rank 0 ' in out
    assert f'font-weight:600">{number}</span> <span ' in out and f">{caption}</span>" in out


@pytest.mark.parametrize(
    ("series", "mean"),
    [({0: [(1, 1.0), (2, 0.5)], 1: [(1, 3.0), (2, 1.5)]}, [(1, 2.0), (2, 1.0)]),
     # a rank that skipped a step: its value there is interpolated
     ({0: [(0, 0.0), (1, 1.0), (2, 2.0)], 1: [(0, 2.0), (2, 4.0)]},
      [(0, 1.0), (1, 2.0), (2, 3.0)]),
     # a rank ahead of the other: the mean stops where the slower one is
     ({0: [(1, 1.0), (2, 1.0), (3, 1.0)], 1: [(1, 3.0), (2, 3.0)]}, [(1, 2.0), (2, 2.0)]),
     ({0: [(1, 1.0)]}, []), ({0: [(1, 1.0)], 1: []}, [])],
)  # fmt: skip
def test_mean_series(series, mean):
    assert mean_series(series) == mean


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(-3, 0.2, [0.001, 0.01, 0.1, 1]), (-0.7, -0.05, [0.2, 0.4, 0.6, 0.8]),
     (-10.2, 0.1, [1e-10, 1e-8, 1e-6, 1e-4, 0.01, 1])],
)  # fmt: skip
def test_log_ticks_are_powers_of_ten_or_round_values(low, high, expected):
    assert log_ticks(low, high) == pytest.approx(expected)


def test_log_scale_spreads_a_flattened_curve_and_refuses_values_below_zero():
    series = {0: [(i, 10.0**-i) for i in range(6)]}
    linear = metric_svg("loss", series, {0: series[0][-1]})
    log = metric_svg("loss", series, {0: series[0][-1]}, log=True)
    assert 'data-scale="linear"' in linear and 'data-scale="log"' in log
    assert ">1e-4</text>" in log and ">1e-4</text>" not in linear

    def heights(svg: str) -> list[float]:
        d = svg.split('<path d="')[1].split('"')[0]
        return [float(p.split()[1]) for p in d[1:].split(" L")]

    # on a log axis the points after the first are evenly spaced, not crushed at the bottom
    steps = [b - a for a, b in zip(heights(log), heights(log)[1:], strict=False)]
    assert max(steps) - min(steps) < 0.5
    assert heights(linear)[2] - heights(linear)[-1] < 2
    below = {0: [(1, 0.5), (2, -0.25)]}
    out = metric_svg("delta", below, {0: (2, -0.25)}, log=True)
    assert 'data-scale="linear"' in out
    assert "Log scale needs values above 0: delta has -0.25. Drawn linear." in out


def test_metric_svg_of_thousands_of_points_stays_small():
    series = {r: [(i, 1 / (i + 1 + r)) for i in range(20_000)] for r in range(2)}
    svg = metric_svg("loss", series, {r: series[r][-1] for r in series})
    assert len(svg) < 30_000
    plot_w = CHART_SIZE["width"] - CHART_SIZE["left"] - CHART_SIZE["right"]
    for path in svg.split("<path ")[1:]:
        assert path.count("L") <= 2 * math.ceil(plot_w / 2) + 2
