"""Live training metrics: `report(step=..., loss=..., accuracy=...)` prints one structured log
line that the panel and the notebook monitor plot per rank. It costs one print.

    from kale_ext import report
    report(step=epoch, loss=0.31, accuracy=0.92)

The same line sets the job's progress (kale_ext/progress.py): ``report(step=s, total=n)`` says
``s`` steps of ``n`` are done, ``report(epoch=e, epochs=m)`` ``e`` epochs of ``m``. ``total``,
``epoch`` and ``epochs`` are progress, and ``checkpoint_step`` (each ``checkpoint.save``'s step,
shown as the job's last checkpoint) is kale_ext's own: none is a metric to plot
(:data:`INTERNAL_KEYS`).

In a compiled job the import is replaced by a small stdlib-only copy of this function (built from
:data:`PREFIX`), so the training image needs no kale_ext. This module is the one source of what
a metrics line is and how it is shown: the notebook monitor uses it, and the panel receives
:func:`frontend_constants`.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass

from . import trainer_status
from .lineage import CHECKPOINT_STEP
from .progress import METRIC_PREFIX as PREFIX
from .progress import PROGRESS_KEYS

#: The keys of a report() record that are kale_ext's own, not training metrics: progress
#: (PROGRESS_KEYS, shown as the job's progress) and the step each checkpoint save reports
#: (shown as the job's last checkpoint). No chart plots them: the monitor's, the panel's
#: (the contract's ``internal_keys``) and MLflow's (tracking_sink.py).
INTERNAL_KEYS = (*PROGRESS_KEYS, CHECKPOINT_STEP)

#: Points kept per metric and rank; beyond it a series is thinned to a quarter, its minima and
#: maxima kept. A chart draws about 230 points per line, so more would cost memory for nothing.
MAX_POINTS = 2_000
#: Series colours, by rank modulo their number: the JupyterLab theme's, with fallbacks for
#: front ends without its CSS variables.
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
#: How a value that is not a finite number is shown (as Python prints it).
NAN_TEXT = "nan"
INF_TEXT = "inf"
#: A metric chart's size and margins (room for the y labels on the left, x labels below); the
#: panel's charts fill their tab's width and take this height (twice it when made taller).
CHART_SIZE = {"width": 420, "height": 160, "left": 48, "right": 10, "top": 8, "bottom": 18}
#: Words that make a metric one whose best value is its lowest (``val_loss``, ``trainError``,
#: ``mse``); any other metric's best is its highest (``accuracy``, ``f1``).
LOWER_IS_BETTER = (
    "loss", "losses", "error", "errors", "err", "mse", "mae", "rmse", "mape", "nll",
    "perplexity", "ppl", "cost", "wer", "cer", "latency", "time", "regret", "distance",
)  # fmt: skip


def report(step: int | None = None, **metrics: float) -> None:
    """Print one metrics line: {"step": step, "rank": RANK, name: value, ...}; with ``total``
    (steps done of ``total``) or ``epoch``/``epochs`` it also sets the job's progress."""
    record = {"step": step, "rank": int(os.environ.get("RANK", 0)), **metrics}
    print(PREFIX + json.dumps(record, default=float), flush=True)
    trainer_status.post(record)  # rank 0's progress to Kubeflow Trainer, on a cluster


def is_metric_line(text: str) -> bool:
    """Whether a log line was printed by :func:`report` (a prefix test, no parsing)."""
    return text.startswith(PREFIX)


def parse_metric(text: str) -> dict | None:
    """The record of a log line written by :func:`report`, or None."""
    if not is_metric_line(text):
        return None
    try:
        record = json.loads(text[len(PREFIX) :])
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


@dataclass(frozen=True)
class MetricValues:
    """What a record reports: its step and rank when valid, and its numeric values by name."""

    step: float | None
    rank: int | None
    values: dict[str, float]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def metric_values(record: dict) -> MetricValues:
    """A record's metrics: values that are not numbers (strings, bools, objects) and
    kale_ext's own keys (INTERNAL_KEYS) are left out, NaN and inf kept; a step that is not a finite
    number and a rank that is not a non-negative integer are None."""
    step = _number(record.get("step"))
    rank = record.get("rank")
    values = {}
    for name, raw in record.items():
        value = _number(raw)
        if name not in ("step", "rank") and name not in INTERNAL_KEYS and value is not None:
            values[name] = value
    return MetricValues(
        step=step if step is not None and math.isfinite(step) else None,
        rank=rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0 else None,
        values=values,
    )


def format_value(value: float) -> str:
    """A number for people: 4 significant digits, exponent form when very large or small;
    ``nan``, ``inf`` and ``-inf`` as Python prints them."""
    if math.isnan(value):
        return NAN_TEXT
    if math.isinf(value):
        return INF_TEXT if value > 0 else f"-{INF_TEXT}"
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent):+d}"
    rounded = float(f"{value:.4g}")
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def lower_is_better(name: str) -> bool:
    """Whether a metric's best value is its lowest: its name has a word of
    :data:`LOWER_IS_BETTER` (words split at non-letters and camelCase humps)."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())
    return any(word in LOWER_IS_BETTER for word in words)


def best_point(name: str, points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The best (step, value) of a metric's finite points (the earliest of equals), or None."""
    finite = [p for p in points if math.isfinite(p[1])]
    if not finite:
        return None
    sign = 1 if lower_is_better(name) else -1
    return min(finite, key=lambda p: (sign * p[1], p[0]))


def series_color(rank: int) -> str:
    """The colour of a rank's series (and of its log lines in the panel)."""
    return SERIES_COLORS[rank % len(SERIES_COLORS)]


def frontend_constants() -> dict:
    """The values the panel's metrics code uses, as JSON-ready data (generated into the
    labextension's sources, so the TypeScript side holds no copy of its own)."""
    return {
        "prefix": PREFIX,
        "max_points": MAX_POINTS,
        "series_colors": list(SERIES_COLORS),
        "nan_text": NAN_TEXT,
        "inf_text": INF_TEXT,
        "chart_size": dict(CHART_SIZE),
        "lower_is_better": list(LOWER_IS_BETTER),
        "internal_keys": list(INTERNAL_KEYS),
    }
