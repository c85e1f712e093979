"""The job monitor's state in plain Python: status changes, log lines kept per node up to a
cap, metrics per name and rank, elapsed time, the cancel state. No threads, no I/O, no widgets:
a view shows it, and :class:`~kale_ext.ipython.widgets.JobMonitor` feeds it."""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from ..backends.base import STOPPED_TEXT, Failure, JobInfo, LogLine, Status
from ..job.procs import shape_text
from ..lineage import Checkpoint, checkpoint_text
from ..metrics import MAX_POINTS, format_value, is_metric_line, metric_values, parse_metric
from ..progress import Progress, summary
from .plots import Point, downsample

#: The statuses a monitor shows beyond a backend's own.
CANCELLING = "Cancelling"
CANCELLED = "Cancelled"
DELETED = "Deleted"
STALLED = "Stalled"  # running, without output for a while (the status reads `Stalled (...)`)
STOPPED = STOPPED_TEXT  # stopped by someone, and kept (kale-ext stop, %kale_stop, the panel)
FINAL = frozenset({Status.COMPLETE.value, Status.FAILED.value, CANCELLED, DELETED, STOPPED})
#: The status badge's colour.
STATUS_COLORS = {
    Status.CREATED.value: "#757575",
    Status.QUEUED.value: "#b26a00",
    Status.RUNNING.value: "#1565c0",
    Status.COMPLETE.value: "#2e7d32",
    Status.FAILED.value: "#c62828",
    STALLED: "#b26a00",
    CANCELLING: "#757575",
    CANCELLED: "#616161",
    DELETED: "#616161",
    STOPPED: "#616161",
}


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
        max_points: int = MAX_POINTS,
        show_metric_lines: bool = False,
        now: datetime | None = None,
        cell_words: Callable[[str], str] | None = None,
    ):
        if max_lines < 1:
            raise ValueError("max_lines must be at least 1")
        if max_points < 16:
            raise ValueError("max_points must be at least 16")
        self.name = name
        self.backend = backend
        self.nodes = nodes
        self.procs_per_node = procs_per_node
        self.procs_why: str | None = None  # where procs_per_node comes from (JobInfo's)
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
        # how the job's notebook cells read for the user (%%trainjob: "the %%trainjob cell")
        self.cell_words = cell_words or (lambda text: text)
        self.metrics: dict[str, dict[int, list[Point]]] = {}
        self.latest: dict[str, dict[int, Point]] = {}
        self.metric_lines = 0
        self.metrics_version = 0
        self.metric_versions: dict[str, int] = {}
        self.cancel_state: str | None = None  # None, "requested", "done", "failed"
        self._before_cancel: tuple[str, str | None] = (self.status, None)
        self.error: str | None = None
        self.failure: Failure | None = None
        self.progress: Progress | None = None  # the last the job reported (kept once it ended)
        self.checkpoint: Checkpoint | None = None  # the last checkpoint_step it reported

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
        self.procs_per_node, self.procs_why = info.procs_per_node, info.procs_why
        for k in range(self.nodes):
            self.lines.setdefault(k, deque(maxlen=self.max_lines))
            self.dropped.setdefault(k, 0)
        self.progress = getattr(info, "progress", None) or self.progress
        self.checkpoint = getattr(info, "checkpoint", None) or self.checkpoint
        if self.finished:
            return None
        if self.cancel_state == "requested":
            return None  # keep showing "Cancelling" until the delete returns
        status = info.status.value if isinstance(info.status, Status) else str(info.status)
        if status == Status.RUNNING.value and getattr(info, "stalled_after", None) is not None:
            status = info.status_text  # `Stalled (no output for 10 min)`: still running
        if getattr(info, "status_text", None) == STOPPED:
            status = STOPPED
        self.failure = getattr(info, "failure", None)
        change = self._set(status, info.reason and self.cell_words(info.reason), now)
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
            if is_metric_line(line.text):
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
        found = metric_values(record)
        rank = rank if found.rank is None else found.rank
        for name, value in found.values.items():
            series = self.metrics.setdefault(name, {}).setdefault(rank, [])
            at = found.step if found.step is not None else (series[-1][0] + 1 if series else 0)
            self.latest.setdefault(name, {})[rank] = (at, value)
            self.metric_versions[name] = self.metric_versions.get(name, 0) + 1
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
        if found.values:
            self.metrics_version += 1
        return list(found.values)

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
        return STATUS_COLORS.get(self.status.split(" (")[0], "#757575")

    def failure_text(self) -> str:
        """Where and why a failed job failed ('' otherwise); its last lines are in the logs."""
        from ..display import failure_lines

        if not self.failure:
            return ""
        return self.cell_words("\n".join(failure_lines(self.failure, tail=False)))

    @property
    def progress_shown(self) -> Progress | None:
        """The progress shown as a bar: only while the job runs (stalled or not), not while it
        is queued or once it ended."""
        running = self.status == Status.RUNNING.value or self.status.startswith(STALLED)
        return self.progress if running else None

    def progress_text(self) -> str:
        """`45% (45/100 steps), ETA 1m 05s` while it runs and reports progress, and its last
        checkpoint (`checkpoint: step 12, 3 min ago`) while it runs, else ''."""
        shown = summary(self.progress_shown) if self.progress_shown is not None else ""
        running = self.status == Status.RUNNING.value or self.status.startswith(STALLED)
        if self.checkpoint is not None and running:
            shown += (" · " if shown else "") + checkpoint_text(self.checkpoint)
        return shown

    @property
    def shape(self) -> str:
        why = f" ({self.procs_why})" if self.procs_why else ""
        return f"{shape_text(self.nodes, self.procs_per_node)}{why}"

    def summary(self, now: datetime | None = None) -> str:
        reason = f": {self.reason}" if self.reason else ""
        return f"[{self.name}] {self.status}{reason} ({self.elapsed(now)})"
