"""A job's lineage and its last checkpoint, as every view reads them.

A **lineage** is the thread of jobs that share checkpoints: a job submitted anew starts its
own (named as the job); a resume (kale_ext/runs/resume.py) starts a new job in its parent's
lineage, recording its ``parent`` and the checkpoint step it was resumed from.

A job's **last checkpoint** is the value ``checkpoint_step`` (:data:`CHECKPOINT_STEP`) its rank
0 last reported (``kale_ext.checkpoint.save`` reports it, as ``kale_ext.report`` does a metric),
and when: locally the supervisor reads it from rank 0's log as it is written (the moment it
read it, kept in the job's folder: backends/local/progressfile.py); on a cluster it is one of
the metrics Kubeflow Trainer holds in ``status.trainerStatus``, whose ``lastUpdatedTime`` is
when the Trainer last heard from the job, not when it saved (``exact`` False: views say "as
of").

STDLIB ONLY, like kale_ext/progress.py: the local supervisor imports it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

#: The report() value a checkpoint's save reports: the step it saved.
CHECKPOINT_STEP = "checkpoint_step"
#: The largest step shown (a larger or non-finite number is not a step).
MAX_STEP = 10**15


def step_of(value: object) -> int | float | None:
    """A reported step as a number (an integral float as an int), or None when it is not one
    from 0 to MAX_STEP (a bool, NaN, text that is no number)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not 0 <= value <= MAX_STEP:
        return None
    return int(value) if value == int(value) else value


@dataclass(frozen=True)
class Checkpoint:
    """A job's last checkpoint: its ``step``, ``time`` (ISO 8601 UTC) it was reported, and
    whether that time is the save's (``exact``) or only that of the status that carried it."""

    step: int | float
    time: str
    exact: bool = True

    def to_json(self) -> dict:
        return {"step": self.step, "time": self.time, "exact": self.exact}

    @classmethod
    def from_json(cls, data: object) -> Checkpoint | None:
        """The Checkpoint of :meth:`to_json`'s dict, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        step, time = step_of(data.get("step")), data.get("time")
        if step is None or _moment(time) is None:
            return None
        return cls(step, str(time), data.get("exact") is not False)

    def age_seconds(self, now: datetime | None = None) -> float | None:
        moment = _moment(self.time)
        if moment is None:
            return None
        return max(0.0, ((now or datetime.now(timezone.utc)) - moment).total_seconds())


def _moment(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def reported_step(line: str, prefix: str) -> int | float | None:
    """The ``checkpoint_step`` of a report() line (``prefix`` then its JSON) on rank 0, or
    None: another line, another rank's, a value that is no step."""
    if not line.startswith(prefix) or f'"{CHECKPOINT_STEP}"' not in line:
        return None
    try:
        record = json.loads(line[len(prefix) :])
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("rank", 0) != 0:
        return None
    return step_of(record.get(CHECKPOINT_STEP))


def of_trainer_status(metrics: dict[str, str] | None, updated: object) -> Checkpoint | None:
    """A cluster job's last checkpoint: the ``checkpoint_step`` among the metrics Kubeflow
    Trainer holds, as of its status's ``lastUpdatedTime`` (not exact)."""
    step = step_of((metrics or {}).get(CHECKPOINT_STEP))
    if step is None or _moment(updated) is None:
        return None
    return Checkpoint(step, str(updated), exact=False)


def ago(seconds: float) -> str:
    """``just now``, ``40 s ago``, ``3 min ago``, ``2 h ago``, ``3 days ago``."""
    if seconds < 5:
        return "just now"
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 86400 * 2:
        return f"{seconds // 3600:.0f} h ago"
    return f"{seconds // 86400:.0f} days ago"


def checkpoint_text(checkpoint: Checkpoint, now: datetime | None = None) -> str:
    """``checkpoint: step 12, 3 min ago`` (a cluster's: ``step 12, as of 3 min ago``)."""
    seconds = checkpoint.age_seconds(now)
    when = "" if seconds is None else f", {'' if checkpoint.exact else 'as of '}{ago(seconds)}"
    return f"checkpoint: step {checkpoint.step}{when}"


def lineage_text(name: str, lineage: str, parent: str | None, step: object = None) -> str | None:
    """``resumed from parent-x (lineage L), from step 12``; ``lineage L`` for a job that was
    not resumed but shares another's lineage; None for a job of its own lineage."""
    if parent is None:
        return None if lineage == name else f"lineage {lineage}"
    shown = step_of(step)
    return f"resumed from {parent} (lineage {lineage})" + (
        f", from step {shown}" if shown is not None else ""
    )
