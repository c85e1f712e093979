"""How far a job is and when it will end: the one place that knows what progress is.

STDLIB ONLY: a compiled job may embed this module (as it embeds ``report``), so it imports
nothing but the standard library and nothing of kale_ext.

Where progress comes from, by priority (a source seen once wins over those below it):

1. ``report`` — ``kale_ext.report(step=s, total=n)`` (``s`` steps done of ``n``) or
   ``report(epoch=e, epochs=m)`` (``e`` epochs done of ``m``) on rank 0.
2. ``epoch-line`` — a rank-0 line such as ``Epoch 38/60`` or ``epoch: 3/10`` (Keras' style),
   read as that many epochs done.
3. ``tqdm`` — one tqdm bar with a known total on rank 0 (``45%|████▌ | 45/100 [00:01<...]``).
   Inference stops (the progress goes) when it is ambiguous: a second bar with another
   description or total, or the bar starting over (a bar per epoch).
4. ``trainer`` — Kubeflow Trainer's ``status.trainerStatus`` of a TrainJob (a percent, maybe an
   ETA, no step counts), set by the Kubernetes backend.

The ETA (:class:`EtaEstimator`) comes from the recent rate, and once shown it is steady:

- It first appears after MIN_ADVANCES advances, or after one once FIRST_FRACTION of the work is
  done (the first timed from the job's start when the estimator knows it, until two readings
  measure the job's own pace, whose estimate then replaces it), spanning MIN_SECONDS, and only
  while the rate does not swing (the recent half of the window runs more than MAX_SWING times
  faster or slower than the older half).
- Once shown it counts down with the clock, and each advance moves it SMOOTHING of the way
  towards what the recent rate says (exponential smoothing): a rate that changes a little
  moves it a little, never takes it away (hysteresis: a swing stops it appearing, not being).
- It goes when the job has gone quiet for STALE_FACTOR times its usual interval between
  advances, when the progress goes back, or when the total changes (and starts over).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

UNITS = ("step", "epoch")
SOURCES = ("report", "epoch-line", "tqdm", "trainer")  # by priority, highest first
#: The keys of a report() record that set progress: not metrics to plot.
PROGRESS_KEYS = ("total", "epoch", "epochs")
#: The prefix of a report() line (kale_ext.metrics.PREFIX is this one).
METRIC_PREFIX = "KALE_METRIC "

#: No ETA before this many advances of progress ...
MIN_ADVANCES = 3
#: ... spanning at least this many seconds.
MIN_SECONDS = 2.0
#: The rate is measured over the advances of the last WINDOW_SECONDS (at most WINDOW_SAMPLES).
WINDOW_SECONDS = 60.0
WINDOW_SAMPLES = 64
#: ... or after fewer advances once this fraction of the work is done (the first 20 % of a job
#: that keeps its pace shows an ETA even when it reports only five times).
FIRST_FRACTION = 0.1
#: No first ETA while the recent half of the window's rate and the older half's differ by more
#: than this factor.
MAX_SWING = 3.0
#: Once shown, each advance moves the ETA this much of the way to the recent rate's.
SMOOTHING = 0.3
#: No ETA once nothing advanced for this many times the window's mean interval between advances
#: (and at least MIN_SECONDS).
STALE_FACTOR = 5.0


def utc_now() -> str:
    """Now as ISO 8601 UTC, to the second: ``2026-11-27T12:00:00Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _number(value: object) -> float | None:
    """A finite number as a float (an int too large for a float, a bool, NaN: None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _plain(value: float | None) -> int | float | None:
    """An integral float as an int (``45.0`` → ``45``), for JSON and text."""
    return int(value) if value is not None and value == int(value) else value


@dataclass(frozen=True)
class Progress:
    """A job's progress: ``percent`` 0–100; ``step`` done of ``total`` (in ``unit``; both None
    for the Trainer's, which only has a percent); ``eta_seconds`` None while unknown;
    ``source`` one of SOURCES; ``updated`` when it was read (ISO 8601 UTC)."""

    percent: float
    step: float | None
    total: float | None
    unit: str = "step"
    eta_seconds: int | None = None
    source: str = "report"
    updated: str = ""

    @classmethod
    def of(
        cls,
        step: float,
        total: float,
        unit: str,
        source: str,
        eta_seconds: int | None = None,
        updated: str | None = None,
    ) -> Progress:
        """``step`` of ``total`` done (total > 0), its percent capped to 0–100."""
        percent = round(min(100.0, max(0.0, 100.0 * step / total)), 1)
        return cls(percent, step, total, unit, eta_seconds, source, updated or utc_now())

    def to_json(self) -> dict:
        return {
            "percent": self.percent,
            "step": _plain(self.step),
            "total": _plain(self.total),
            "unit": self.unit,
            "eta_seconds": self.eta_seconds,
            "source": self.source,
            "updated": self.updated,
        }

    @classmethod
    def from_json(cls, data: object) -> Progress:
        """The Progress of :meth:`to_json`'s dict; ValueError naming the field when it is not
        one."""
        if not isinstance(data, dict):
            raise ValueError("progress: not an object")
        percent = _number(data.get("percent"))
        if percent is None or not 0 <= percent <= 100:
            raise ValueError("progress.percent: not a number from 0 to 100")
        step, total = data.get("step"), data.get("total")
        for name, value in (("step", step), ("total", total)):
            if value is not None and (_number(value) is None or value < 0):
                raise ValueError(f"progress.{name}: not a number of 0 or more")
        eta = data.get("eta_seconds")
        if eta is not None and (isinstance(eta, bool) or not isinstance(eta, int) or eta < 0):
            raise ValueError("progress.eta_seconds: not a whole number of 0 or more")
        for name, allowed in (("unit", UNITS), ("source", SOURCES)):
            if data.get(name) not in allowed:
                raise ValueError(f"progress.{name}: not one of {', '.join(allowed)}")
        updated = data.get("updated")
        try:
            datetime.fromisoformat(str(updated).replace("Z", "+00:00"))
        except ValueError:
            raise ValueError("progress.updated: not an ISO 8601 time") from None
        return cls(float(percent), step, total, data["unit"], eta, data["source"], updated)

    @property
    def done(self) -> bool:
        return self.percent >= 100.0


# -- the ETA --


class EtaEstimator:
    """Seconds left from the recent rate of advance, smoothed. Feed it every reading with
    :meth:`observe`; :meth:`eta` is None until it can first be told (see the module's
    docstring), then counts down, moving towards each advance's estimate, and is None again only
    once the job went quiet. Going back, or another total, starts over. ``started``: when the
    job started (monotonic seconds), with nothing done: the first advance is timed from it,
    until the job's own pace is measured (two readings MIN_SECONDS apart): then its estimate
    replaces that one outright (a start slowed by imports or a busy machine is not the job's
    pace)."""

    def __init__(self, started: float | None = None) -> None:
        self.samples: deque[tuple[float, float]] = deque(maxlen=WINDOW_SAMPLES)
        self.total: float | None = None
        self.started = started
        self.origin = False  # whether the first sample is the job's start, not a reading
        self.shown: tuple[float, float] | None = None  # (when, seconds left then)

    def observe(self, step: float, total: float, now: float | None = None) -> None:
        """A reading: ``step`` of ``total`` done at monotonic time ``now``. A repeated step is
        not an advance (only the first time it was seen counts), and readings at one moment
        are one."""
        now = time.monotonic() if now is None else now
        last = self.samples[-1][1] if self.samples else None
        if total != self.total or (last is not None and step < last):
            if self.total is not None:
                self.started = None  # the work starts over: its start is not the job's
            self.samples.clear()
            self.total, self.shown = total, None
            self.origin = self.started is not None and self.started < now and step > 0
            if self.origin:
                self.samples.append((self.started, 0.0))
        if last is not None and step == last and self.samples:
            return
        if self.samples and self.samples[-1][0] == now:  # read at one moment (a backlog): its
            self.samples[-1] = (now, step)  # last reading is the one that moment saw
        else:
            self.samples.append((now, step))
        # the job's own pace, measured: two readings spanning MIN_SECONDS
        rebase = self.origin and len(self.samples) > 2 and now - self.samples[1][0] >= MIN_SECONDS
        if rebase:
            self.samples.popleft()
            self.origin = False
        while len(self.samples) > 2 and now - self.samples[1][0] > WINDOW_SECONDS:
            self.samples.popleft()
        self._estimate(rebase)

    def _estimate(self, rebase: bool = False) -> None:
        """The ETA as of the last advance: the first once it can be told, then smoothed (or,
        ``rebase``, replaced: the first from readings only, after one timed from the start)."""
        assert self.total is not None
        (t0, s0), (t1, s1) = self.samples[0], self.samples[-1]
        if s1 >= self.total:
            self.shown = (t1, 0.0)
            return
        if t1 <= t0 or s1 <= s0:
            return
        fresh = (self.total - s1) * (t1 - t0) / (s1 - s0)
        if self.shown is None or rebase:
            advances = len(self.samples) - 1
            early = advances >= 1 and s1 >= FIRST_FRACTION * self.total
            if (advances >= MIN_ADVANCES or early) and t1 - t0 >= MIN_SECONDS and self._even():
                self.shown = (t1, fresh)
            return
        when, left = self.shown
        counted = left - (t1 - when)
        self.shown = (t1, counted + SMOOTHING * (fresh - counted))

    def _even(self) -> bool:
        """Whether the recent half of the window runs at about the older half's rate (fewer
        than three readings: yes)."""
        samples = list(self.samples)
        if len(samples) < 3:
            return True
        mid = len(samples) // 2
        older, recent = _rate(samples[: mid + 1]), _rate(samples[mid:])
        if older is None or recent is None:
            return False
        return max(older, recent) <= MAX_SWING * min(older, recent)

    def eta(self, now: float | None = None) -> int | None:
        """Whole seconds left (0 when done), or None while it cannot be told honestly."""
        if not self.samples or self.total is None or self.shown is None:
            return None
        now = time.monotonic() if now is None else now
        (t0, _), (t1, s1) = self.samples[0], self.samples[-1]
        if s1 >= self.total:
            return 0
        interval = (t1 - t0) / (len(self.samples) - 1)
        if now - t1 > max(MIN_SECONDS, STALE_FACTOR * interval):
            return None
        when, left = self.shown
        return max(0, round(left - (now - when)))


def _rate(samples: list[tuple[float, float]]) -> float | None:
    (t0, s0), (t1, s1) = samples[0], samples[-1]
    return (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None


# -- parsers: where progress is read from --


def of_record(record: dict) -> tuple[float, float, str] | None:
    """(done, total, unit) of a report() record on rank 0 that sets progress, else None:
    ``step``/``total`` or ``epoch``/``epochs`` (both numbers, total > 0, done ≥ 0)."""
    if record.get("rank", 0) != 0:
        return None
    for done_key, total_key, unit in (("step", "total", "step"), ("epoch", "epochs", "epoch")):
        done, total = _number(record.get(done_key)), _number(record.get(total_key))
        if done is not None and total is not None and total > 0 and done >= 0:
            return done, total, unit
    return None


_TQDM = re.compile(r"\d{1,3}%\|[^|\r\n]{0,400}\|\s*(?P<n>\d+)/(?P<total>\d+)\s*\[")
_EPOCH = re.compile(r"\bepoch\s*[:=#]?\s*\[?\s*(\d+)\s*/\s*(\d+)\b", re.IGNORECASE)


def of_tqdm(text: str) -> tuple[str, float, float] | None:
    """(bar description, done, total) of the last tqdm bar update in a line (tqdm rewrites its
    bar after ``\\r``), else None; a bar without a total (``45it [...]``) is not progress."""
    found = None
    for found in _TQDM.finditer(text):  # noqa: B007 (the last one is wanted)
        continue
    if found is None or int(found["total"]) <= 0:
        return None
    start = found.start()
    desc = text[text.rfind("\r", 0, start) + 1 : start].strip().rstrip(":").strip()
    return desc, float(found["n"]), float(found["total"])


def of_epoch_line(text: str) -> tuple[float, float] | None:
    """(epochs done, epochs) of a line like ``Epoch 38/60``, else None."""
    found = _EPOCH.search(text)
    if not found:
        return None
    done, total = int(found[1]), int(found[2])
    return (float(done), float(total)) if 0 < total and done <= total else None


def of_trainer_status(status: object) -> Progress | None:
    """The Progress of a TrainJob's ``status.trainerStatus`` (Kubeflow Trainer's
    ``progressPercentage``, ``estimatedRemainingSeconds``, ``lastUpdatedTime``), whoever wrote
    it; None when it has no percent from 0 to 100. It has no step counts."""
    if not isinstance(status, dict):
        return None
    percent = _number(status.get("progressPercentage"))
    if percent is None or not 0 <= percent <= 100:
        return None
    eta = status.get("estimatedRemainingSeconds")
    eta = eta if isinstance(eta, int) and not isinstance(eta, bool) and eta >= 0 else None
    updated = status.get("lastUpdatedTime")
    try:
        datetime.fromisoformat(str(updated).replace("Z", "+00:00"))
    except ValueError:
        updated = utc_now()
    return Progress(round(percent, 1), None, None, "step", eta, "trainer", str(updated))


class ProgressTracker:
    """A job's progress from its rank-0 log lines, fed incrementally (it keeps no lines):
    the seam every backend uses — feed it the lines read since the last call. ``started``:
    when the job started (monotonic seconds), when its follower knows it."""

    def __init__(self, started: float | None = None) -> None:
        self.source: str | None = None
        self.reading: tuple[float, float, str] | None = None  # done, total, unit
        self.started = started  # when the job started (monotonic), nothing done then
        self.estimator = EtaEstimator(started)
        self.bar: tuple[str, float] | None = None  # the one tqdm bar: description, total
        self.ambiguous = False  # tqdm inference gave up
        self.updated = ""  # when the reading last changed (ISO 8601 UTC)

    def feed(self, lines: Iterable[str], now: float | None = None) -> Progress | None:
        """Read rank 0's new lines (at monotonic time ``now``); the progress so far. Only the
        last reading of each source among the lines counts (one JSON parse per call)."""
        last: dict[str, object] = {}
        for text in lines:
            if text.startswith(METRIC_PREFIX):
                if '"total"' in text or '"epochs"' in text:
                    last["report"] = text
            elif self._rank(self.source) >= self._rank("epoch-line"):
                if "poch" in text and (epoch := of_epoch_line(text)) is not None:
                    last["epoch-line"] = epoch
                elif "%|" in text and not self.ambiguous:
                    self._tqdm(text, last)
        for source in SOURCES:
            reading = self._reading(source, last.get(source))
            if reading is not None and self._rank(source) <= self._rank(self.source):
                self._set(source, reading, now)
                break
        return self.progress(now)

    def _tqdm(self, text: str, last: dict) -> None:
        found = of_tqdm(text)
        if found is None:
            return
        desc, done, total = found
        earlier = last.get("tqdm", self.reading if self.source == "tqdm" else None)
        if self.bar is not None and (
            (desc, total) != self.bar or (earlier is not None and done < earlier[0])
        ):
            self.ambiguous = True  # another bar, or this one starting over: not one job's
            last.pop("tqdm", None)
            if self.source == "tqdm":
                self.source, self.reading = None, None
            return
        self.bar = (desc, total)
        last["tqdm"] = (done, total, "step")

    @staticmethod
    def _reading(source: str, found: object) -> tuple[float, float, str] | None:
        if found is None:
            return None
        if source == "report":
            try:
                record = json.loads(str(found)[len(METRIC_PREFIX) :])
            except (ValueError, RecursionError):  # not JSON, or nested beyond the parser
                return None
            return of_record(record) if isinstance(record, dict) else None
        if source == "epoch-line":
            return (*found, "epoch")  # type: ignore[misc]
        return found  # type: ignore[return-value]

    @staticmethod
    def _rank(source: str | None) -> int:
        return SOURCES.index(source) if source in SOURCES else len(SOURCES)

    def _set(self, source: str, reading: tuple[float, float, str], now: float | None) -> None:
        if source != self.source:
            self.estimator = EtaEstimator(self.started)
        if (source, reading) != (self.source, self.reading):
            self.updated = utc_now()
        self.source, self.reading = source, reading
        self.estimator.observe(reading[0], reading[1], now)

    def progress(self, now: float | None = None) -> Progress | None:
        """The progress read so far, its ETA as of ``now``; None before any."""
        if self.reading is None or self.source is None:
            return None
        done, total, unit = self.reading
        eta = self.estimator.eta(now)
        return Progress.of(done, total, unit, self.source, eta, self.updated or None)


def progress_of_lines(lines: Iterable[str]) -> Progress | None:
    """The progress rank 0's log lines show (no ETA: one reading has no rate)."""
    return ProgressTracker().feed(lines)


# -- how views show it --


def eta_text(seconds: int | None) -> str:
    """``42s``, ``3m 05s``, ``1h 02m``, ``2d 03h``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    if seconds < 86400:
        return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d {seconds % 86400 // 3600:02d}h"


def bar(percent: float, width: int = 20) -> str:
    """A text bar: ``[#########-----------]``."""
    filled = round(width * min(100.0, max(0.0, percent)) / 100)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def percent_text(progress: Progress) -> str:
    """``45%`` (``45.5%`` below 10 and above 90, where a tenth shows movement)."""
    p = progress.percent
    return f"{p:.1f}%" if (p < 10 or p > 90) and p != int(p) else f"{p:.0f}%"


def summary(progress: Progress, eta: bool = True) -> str:
    """One line: ``45% (45/100 steps), ETA 1m 05s`` (without the ETA unless ``eta``)."""
    counts = ""
    if progress.step is not None and progress.total is not None:
        counts = f" ({_plain(progress.step)}/{_plain(progress.total)} {progress.unit}s)"
    return f"{percent_text(progress)}{counts}" + (
        f", ETA {eta_text(progress.eta_seconds)}" if eta else ""
    )
