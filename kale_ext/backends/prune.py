"""Prune finished jobs: which ones go (their state and age, one rule for every backend), and
going through them one by one. The Trainer has no TTL and the local backend never removes a job
by itself, so finished jobs pile up: `kale-ext prune`, POST jobs/prune and the defaults'
``keep_finished_days`` (applied at a submit, at most once an hour) all call :func:`prune`.

A job goes only when it has finished (Complete, Failed, Stopped) for at least ``older_than``
seconds and its kind is one of ``statuses``; a created, queued or running job never does, nor
one another action (a stop, a delete) holds at that moment: the backend checks again, under the
job's lock where it has one, just before it deletes (``Backend.prune_job``). Its outputs stay
unless asked, as for a delete."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import BackendError, ConfigError
from .base import CANCELLED_WITH_SWEEP, STOPPED_BY, STOPPED_EARLY, Backend, JobInfo, Status

#: The kinds of finished job that may be pruned, and the default: all of them.
STATUSES = ("complete", "failed", "stopped")
#: `--older-than` when none is given.
DEFAULT_OLDER_THAN = "7d"
#: The bounds of an age: 0 s (every finished job) to 10 years.
MAX_AGE_DAYS = 3650
MAX_AGE_SECONDS = MAX_AGE_DAYS * 86400
#: An age's units, in seconds.
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"(\d{1,12})([smhdw])")


def parse_age(text: object, field: str = "older_than") -> int:
    """``7d``, ``12h``, ``30m``, ``0s``, ``2w`` → seconds, between 0 and MAX_AGE_DAYS days;
    ConfigError on ``field`` otherwise, saying what is wrong."""
    if not isinstance(text, str):
        raise ConfigError(field, f"must be an age such as 7d, 12h or 0s, not {text!r}")
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise ConfigError(
            field,
            f"{text[:40]!r} is not an age: a whole number and a unit (s, m, h, d or w), such "
            "as 7d, 12h or 0s",
        )
    seconds = int(match.group(1)) * UNITS[match.group(2)]
    if seconds > MAX_AGE_SECONDS:
        raise ConfigError(field, f"{text.strip()} is more than the most, {MAX_AGE_DAYS}d")
    return seconds


def parse_statuses(value: object, field: str = "statuses") -> tuple[str, ...]:
    """``complete,failed`` (or a list of those words) → the kinds of job to prune, in
    STATUSES' order; ConfigError on ``field`` for an unknown or empty one."""
    words = [w for w in value.split(",") if w.strip()] if isinstance(value, str) else value
    if not isinstance(words, (list, tuple)) or not words:
        raise ConfigError(field, f"must name one or more of {', '.join(STATUSES)}")
    chosen = set()
    for word in words:
        kind = word.strip().lower() if isinstance(word, str) else word
        if kind not in STATUSES:
            raise ConfigError(
                field, f"{str(word)[:40]!r} is not one of {', '.join(STATUSES)} (only a finished "
                "job is pruned: never a created, queued or running one)")  # fmt: skip
        chosen.add(kind)
    return tuple(s for s in STATUSES if s in chosen)


def kind_of(info: JobInfo) -> str | None:
    """complete, failed or stopped (someone stopped it, its sweep stopped it early or was
    cancelled); None for a job that has not finished, or whose record cannot be read."""
    if info.status is Status.COMPLETE:
        return "complete"
    if info.status is not Status.FAILED:
        return None
    stopped = (STOPPED_BY, STOPPED_EARLY, CANCELLED_WITH_SWEEP)
    return "stopped" if (info.reason or "").startswith(stopped) else "failed"


def age_of(info: JobInfo, now: datetime) -> float | None:
    """Seconds since the job finished (since it was created when its end has no time); None
    when neither is known."""
    moment = info.finished or info.created
    if not moment:
        return None
    try:
        then = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    return max(0.0, (now - then).total_seconds())


@dataclass
class Pruned:
    """One job that goes (or, in a dry run, would go), and what became of it."""

    name: str
    status: str  # as every view shows it: Complete, Failed, Stopped, ...
    age_seconds: float
    disk_bytes: int | None  # its folder here (None: the backend cannot tell)
    disk_partial: bool = False  # the count stopped at its bound: at least disk_bytes
    deleted: bool = False
    note: str | None = None  # what became of its outputs, or why it stayed

    def to_dict(self) -> dict:
        return asdict(self)


def select(
    jobs: Iterable[JobInfo], older_than: float, statuses: Iterable[str], now: datetime
) -> list[tuple[JobInfo, float]]:
    """The jobs (and their ages) that go: finished, of one of ``statuses``, for at least
    ``older_than`` seconds; oldest first."""
    kinds = set(statuses)
    chosen = []
    for info in jobs:
        age = age_of(info, now)
        if kind_of(info) in kinds and age is not None and age >= older_than:
            chosen.append((info, age))
    return sorted(chosen, key=lambda pair: (-pair[1], pair[0].name))


def prune(
    backend: Backend,
    older_than: float,
    statuses: Iterable[str] = STATUSES,
    dry_run: bool = False,
    outputs: bool = False,
    now: datetime | None = None,
) -> list[Pruned]:
    """Delete the finished jobs :func:`select` chooses (none in a ``dry_run``: then it lists
    them), their outputs too when ``outputs``. A job the backend refuses to prune as it looks
    again (it started again, another action holds it) stays, its note saying why."""
    now = now or datetime.now(timezone.utc)
    done = []
    for info, age in select(backend.list_jobs(), older_than, statuses, now):
        item = Pruned(info.name, info.status_text, round(age, 1), info.disk_bytes,
                      info.disk_partial)  # fmt: skip
        if not dry_run:
            try:
                item.note = backend.prune_job(info.name, outputs)
                item.deleted = True
            except BackendError as e:  # gone meanwhile, running again, busy: it stays
                item.note = f"left: {e}"
        done.append(item)
    return done


#: A submit prunes (the defaults' keep_finished_days) at most this often, per jobs folder or
#: cluster namespace.
AUTO_EVERY_SECONDS = 3600
#: The file whose time says when a submit last pruned: in the local jobs folder (no job's name
#: starts with a dot), else in kale_ext's data folder, per backend and namespace.
STAMP = ".last-prune"


def stamp_of(backend: Backend) -> Path:
    jobs_dir = getattr(backend, "jobs_dir", None)
    if jobs_dir is not None:
        return Path(jobs_dir) / STAMP
    from ..files import jobs_dir as local_jobs_dir

    where = f"{backend.name}-{getattr(backend, 'namespace', None) or 'default'}"
    return local_jobs_dir().parent / "pruned" / where


def auto_prune(backend: Backend, keep_days: int | None, now: float | None = None) -> list[str]:
    """At a submit: prune every kind of finished job older than ``keep_days`` (the defaults'
    keep_finished_days; None: off), their outputs kept, unless this backend was pruned so in
    the last AUTO_EVERY_SECONDS (one stat when it was). What it did or why it could not, as
    the submit's warnings; it never fails the submit."""
    if keep_days is None:
        return []
    stamp, now = stamp_of(backend), time.time() if now is None else now
    try:
        if now - stamp.stat().st_mtime < AUTO_EVERY_SECONDS:
            return []
    except OSError:
        pass  # never pruned here
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
        os.utime(stamp, (now, now))
        done = prune(backend, keep_days * 86400, now=datetime.fromtimestamp(now, timezone.utc))
    except (OSError, BackendError) as e:
        return [f"finished jobs older than {keep_days} days could not be pruned "
                f"(keep_finished_days): {e}"]  # fmt: skip
    from ..job.procs import counted

    gone = [p.name for p in done if p.deleted]
    if not gone:
        return []
    shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
    days = counted(keep_days, "day")
    return [f"pruned {counted(len(gone), 'job')} finished more than {days} ago "
            f"(keep_finished_days; their outputs stay): {shown}"]  # fmt: skip
