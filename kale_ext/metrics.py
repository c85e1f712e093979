"""Live training metrics: `report(step=..., loss=..., accuracy=...)` prints one structured log
line that the panel and the notebook monitor plot per rank. It costs one print.

    from kale_ext import report
    report(step=epoch, loss=0.31, accuracy=0.92)

In a compiled job the import is replaced by a small stdlib-only copy of this function, so the
training image needs no kale_ext.
"""

from __future__ import annotations

import json
import os

PREFIX = "KALE_METRIC "


def report(step: int | None = None, **metrics: float) -> None:
    """Print one metrics line: {"step": step, "rank": RANK, name: value, ...}."""
    record = {"step": step, "rank": int(os.environ.get("RANK", 0)), **metrics}
    print(PREFIX + json.dumps(record, default=float), flush=True)


def parse_metric(text: str) -> dict | None:
    """The metrics of a log line written by :func:`report`, or None."""
    if not text.startswith(PREFIX):
        return None
    try:
        record = json.loads(text[len(PREFIX) :])
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None
