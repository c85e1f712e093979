"""What the job monitor's tests feed it: job infos and log lines at fixed times, and a scripted
backend whose job moves one step on at every poll (logs honour offsets like a real backend)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from kale_ext.backends.base import JobInfo, LogLine, NotFound, Status
from kale_ext.metrics import PREFIX

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    """``seconds`` after T0."""
    return T0 + timedelta(seconds=seconds)


def info(status: Status, reason=None, *, created="2026-01-01T12:00:00Z", finished=None, nodes=1):
    """A job named "job" on the "fake" backend."""
    return JobInfo(
        name="job",
        status=status,
        backend="fake",
        num_nodes=nodes,
        reason=reason,
        created=created,
        finished=finished,
    )


def line(node: int, text: str, offset: int, rank: int | None = None) -> LogLine:
    """A log line of ``node`` (its rank the node's unless given)."""
    return LogLine(node, text, node if rank is None else rank, offset)


def metric(node: int, offset: int, line_rank: int | None = None, **record) -> LogLine:
    """A line `report()` printed; ``line_rank`` is the rank the log line carries."""
    return line(node, PREFIX + json.dumps(record), offset, line_rank)


@dataclass
class Step:
    """One poll's answer: the status, and the lines the nodes wrote since the last."""

    status: Status
    lines: tuple[tuple[int, str], ...] = ()
    reason: str | None = None


class ScriptedBackend:
    """Each get_job moves one step on; logs honour offsets like a real backend."""

    name = "fake"

    def __init__(self, steps, nodes=1, fail_with=None):
        self.steps = list(steps)
        self.nodes = nodes
        self.i = -1
        self.written: dict[int, list[tuple[str, int]]] = {k: [] for k in range(nodes)}
        self.deleted = threading.Event()
        self.fail_with = fail_with
        self.polls = 0

    def get_job(self, name):
        self.polls += 1
        if self.fail_with is not None:
            raise self.fail_with
        if self.deleted.is_set():
            raise NotFound(f"no job named {name}")
        self.i = min(self.i + 1, len(self.steps) - 1)
        step = self.steps[self.i]
        for node, text in step.lines:
            end = (self.written[node][-1][1] if self.written[node] else 0) + len(text) + 1
            self.written[node].append((text, end))
        finished = "2026-01-01T12:00:10Z" if step.status.finished else None
        return info(step.status, step.reason, finished=finished, nodes=self.nodes)

    def logs(self, name, node=None, follow=False, tail=None, offsets=None):
        for k in range(self.nodes):
            for text, end in self.written[k]:
                if end > (offsets or {}).get(k, 0):
                    yield LogLine(k, text, k, end)

    def delete(self, name):
        self.deleted.set()


SCRIPT = [
    Step(Status.CREATED),
    Step(Status.RUNNING, ((0, "epoch 1"), (1, "epoch 1"))),
    Step(Status.RUNNING, ((0, "epoch 2"),)),
    Step(Status.COMPLETE, ((1, "done"),)),
]

METRICS_SCRIPT = [
    Step(Status.RUNNING, ((0, "epoch 1"),)),
    Step(
        Status.RUNNING,
        (
            (0, 'KALE_METRIC {"step": 1, "rank": 0, "loss": 0.9}'),
            (1, 'KALE_METRIC {"step": 1, "rank": 1, "loss": 0.95}'),
        ),
    ),
    Step(
        Status.COMPLETE,
        (
            (0, 'KALE_METRIC {"step": 2, "rank": 0, "loss": 0.4}'),
            (1, 'KALE_METRIC {"step": 2, "rank": 1, "loss": 0.5}'),
            (0, 'KALE_METRIC {"step": 2, "rank": 0, "accuracy": 0.97}'),
        ),
    ),
]
