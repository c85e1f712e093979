"""A failed job's summary: which rank failed first, where in the notebook, how it ended.

The facts come from the error records the compiled module writes (compile/excepthook.py: the
``@record`` format torchrun reads from ``TORCHELASTIC_ERROR_FILE``, with the cell and line),
from torchrun's ChildFailedError report (exit codes and signals of ranks that wrote none), and
on a cluster from the pods. Ranks that only failed because a peer had died (a collective that
lost its peer, torchrun's SIGTERM to the others) never count as the first failure.
"""

from __future__ import annotations

import math
import re
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .base import Failure, LogLine
from .headline import headline as headline_of
from .headline import last_exception
from .torchrun_report import ReportEntry, signal_name

#: How many of the failing rank's last log lines a summary keeps.
TAIL_LINES = 20
#: Errors a rank raises when a peer is gone (gloo, NCCL, the c10d store): a consequence.
PEER_LOST = re.compile(
    r"Connection closed by peer|Connection reset by peer|remote worker crash|Broken pipe"
    r"|DistNetworkError|DistBackendError|NCCL communicator was aborted|ProcessGroupNCCL"
    r"|Socket Timeout|Timed out waiting|Watchdog caught collective operation timeout"
    r"|SignalException",  # torchrun itself, stopped
    re.I,
)
#: Exit codes above this are 128 + the signal that ended a container's main process.
SIGNAL_EXIT_BASE = 128


@dataclass
class RankFailure:
    """One failed process (or a whole node when no rank is known)."""

    node: int
    rank: int | None = None
    time: float | None = None  # when it failed, seconds since the epoch
    exit_code: int | None = None  # negative: killed by that signal (as Popen reports it)
    exception: str | None = None
    headline: str | None = None  # `cell 3 ("training"), line 2: KeyError: 'label'`
    cell_index: int | None = None
    cell_id: str | None = None
    cell_label: str | None = None
    line: int | None = None
    signal: str | None = None  # in words, when the cluster says more than a number
    reason: str | None = None  # the cluster's reason, in plain words

    @property
    def secondary(self) -> bool:
        """It failed because another did: a lost peer, or the SIGTERM that stops the rest."""
        if self.reason:
            return False
        if self.exception:
            return bool(PEER_LOST.search(self.exception))
        return self.exit_code == -signal.SIGTERM


def from_record(data: dict, node: int) -> RankFailure | None:
    """A failure from an error record (torch's @record format; kale_ext's has the cell)."""
    ours = data.get("kale_ext")
    message = data.get("message")
    if isinstance(ours, dict):
        exception, headline = ours.get("exception"), ours.get("headline")
        info = message.get("extraInfo") if isinstance(message, dict) else None
        stack = info.get("py_callstack") if isinstance(info, dict) else None
        full = last_exception(stack) if isinstance(stack, str) else None
        if full and isinstance(exception, str):  # the record keeps the first line only
            better = headline_of(full)
            if isinstance(headline, str) and headline.endswith(exception):
                headline = headline[: len(headline) - len(exception)] + better
            exception = better
        return RankFailure(
            node=int(ours.get("node", node)),
            rank=ours.get("rank"),
            time=ours.get("time"),
            exception=exception,
            headline=headline,
            cell_index=ours.get("cell_index"),
            cell_id=ours.get("cell_id"),
            cell_label=ours.get("label"),
            line=ours.get("line"),
        )
    if isinstance(message, dict):  # written by torch's own @record (a script that uses it)
        info = message.get("extraInfo") or {}
        stamp = info.get("timestamp")
        return RankFailure(
            node=node,
            time=float(stamp) if str(stamp).isdigit() else None,
            exception=headline_of(str(message.get("message") or "")) or None,
        )
    return None


def read_record(path: Path, node: int) -> RankFailure | None:
    try:
        from ..files import MAX_RECORD_BYTES, read_json

        return from_record(read_json(path, MAX_RECORD_BYTES), node)
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def from_report(entry: ReportEntry, node: int) -> RankFailure:
    return RankFailure(
        node=node,
        rank=entry.rank,
        time=entry.time,
        exit_code=entry.exit_code,
        exception=(entry.message or None) if entry.error_file else None,  # else torchrun's words
    )


def merge(failures: Iterable[RankFailure]) -> list[RankFailure]:
    """One failure per (node, rank): the facts of each source together, the error record's
    exception (it has the cell) over torchrun's words, the earliest time."""
    merged: dict[tuple[int, int | None], RankFailure] = {}
    for f in failures:
        key = (f.node, f.rank)
        have = merged.get(key)
        if have is None:
            merged[key] = f
            continue
        if f.headline and not have.headline:
            have.exception = f.exception
        if have.time is not None and f.time is not None:
            have.time = min(have.time, f.time)
        for name in RankFailure.__dataclass_fields__:
            if getattr(have, name) is None:
                setattr(have, name, getattr(f, name))
    return list(merged.values())


def first_failure(failures: list[RankFailure]) -> RankFailure | None:
    """The failure that came first, of those that are no consequence of another; ``failures``
    in the order they were seen (a tie keeps that order)."""
    if not failures:
        return None
    order = {id(f): i for i, f in enumerate(failures)}
    return min(
        failures,
        key=lambda f: (f.secondary, math.inf if f.time is None else f.time, order[id(f)]),
    )


def exit_words(exit_code: int | None, container: bool = False) -> str | None:
    """An ending in words: `signal 9 (SIGKILL)` for a process killed by a signal (a negative
    code locally; 128 + the signal from a container)."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return signal_name(-exit_code)
    if container and exit_code > SIGNAL_EXIT_BASE:
        return signal_name(exit_code - SIGNAL_EXIT_BASE)
    return None


def who(f: RankFailure) -> str:
    return f"node {f.node}" + (f", rank {f.rank}" if f.rank is not None else "")


def summarize(f: RankFailure, log_tail: list[str], container: bool = False) -> Failure:
    """The Failure a job shows: one line, and its facts."""
    words = f.signal or exit_words(f.exit_code, container)
    if f.reason:
        what = f.reason
    elif f.headline or f.exception:
        what = f.headline or f.exception
    elif words:
        what = words if words.startswith("killed") else f"killed by {words}"
    elif f.exit_code is not None:
        what = f"exited with code {f.exit_code} (no traceback)"
    else:
        what = "failed"
    return Failure(
        summary=f"{who(f)}: {what}",
        node=f.node,
        rank=f.rank,
        exception=f.exception,
        cell_index=f.cell_index,
        cell_id=f.cell_id,
        cell_label=f.cell_label,
        line=f.line,
        exit_code=f.exit_code,
        signal=words,
        reason=f.reason,
        log_tail=log_tail,
    )


def rank_tail(lines: Iterable[LogLine], rank: int | None, count: int = TAIL_LINES) -> list[str]:
    """The last ``count`` lines of one rank (with the node's own lines, torchrun's), as shown;
    all of the node's lines when the rank is unknown."""
    kept: list[str] = []
    for line in lines:
        if rank is None or line.rank in (rank, None):
            kept.append(line.shown)
            if len(kept) > 2 * count:
                del kept[:count]
    return kept[-count:]
