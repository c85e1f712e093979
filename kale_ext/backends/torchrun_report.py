"""torchrun's ChildFailedError report: read it, and fold it into one log line.

When a worker fails, torchrun (``torch.distributed.elastic``) raises ChildFailedError from its
``main``: a traceback of torchrun's own code, then a box of ~30 lines naming each failed rank
(time, rank, exit code, error file, and the worker's whole traceback again)::

    torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
    ============================================================
    train.py FAILED
    ------------------------------------------------------------
    Failures:
      <NO_OTHER_FAILURES>
    ------------------------------------------------------------
    Root Cause (first observed failure):
    [0]:
      time      : 2026-11-25_01:32:40
      host      : localhost
      rank      : 1 (local_rank: 1)
      exitcode  : 1 (pid: 4747)
      error_file: /tmp/torchelastic_x/attempt_0/1/error.json
      traceback : cell 2 ("training"), line 8: KeyError: 'label'
      ...
    ============================================================

The worker's own lines already hold that traceback, so a log shows the report as one line.

Its agent's exit barrier makes noise too: when another node's agent leaves first (node 0's holds
the store), the agent whose workers had all finished logs the store's C++ warning (~25 lines of
frames) and then a traceback, each line prefixed ``E1127 02:38:23.278000 12276 .../api.py:1008]``::

    [W1127 02:38:23.667546325 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on ...
    Exception raised from recvBytes at .../Utils.hpp:787 (most recent call first):
    frame #0: c10::Error::Error(...)
    ...
    E1127 ... api.py:1008] Error waiting on exit barrier. Elapsed: 8.65 seconds
    E1127 ... api.py:1008] Traceback (most recent call last):
    ...
    E1127 ... api.py:1008] torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. ...

That is one line too: the workers' results stand (the job's status comes from their exits).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from .base import LogLine

CHILD_FAILED = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"
_TRACEBACK = "Traceback (most recent call last):"
_BORDER = re.compile(r"=+")
_ENTRY = re.compile(r"\[\d+\]:")
_FIELD = re.compile(r"  (time|rank|exitcode|error_file|traceback)\s*: ?(.*)")
_RANK = re.compile(r"(\d+) \(local_rank: (\d+)\)")
_NO_TRACEBACK = "To enable traceback see"
#: A report's lines at most (beyond, it is shown as it is): memory stays bounded.
MAX_LINES = 2000
#: The store's C++ warning, the lines of its stack, the agent's exit barrier that failed.
_STORE_WARNING = re.compile(r"\[W\d{4} [\d:.]+ TCPStore\.cpp:\d+\] \[c10d\] ")
_STORE_STACK = re.compile(r"Exception raised from |frame #\d+: |<omitting python frames>$|$")
_BARRIER = re.compile(r"(E\d{4} [\d:.]+ \d+ \S+\]) Error waiting on exit barrier")
#: A stop: the agent's SIGTERM (or SIGINT...), its workers told to close, its SignalException.
_AGENT = r"[WIE]\d{4} [\d:.]+ \d+ \S+\] "
_DEATH = re.compile(_AGENT + r"Received (\d+) death signal, shutting down workers")
_CLOSING = re.compile(_AGENT + r"Sending process \d+ closing signal ")
SIGNAL_EXCEPTION = "torch.distributed.elastic.multiprocessing.api.SignalException:"
#: Lines let through while the agent's stop is held, at most (then it is shown as it is).
MAX_PASSED = 200
_SIGNAL = re.compile(re.escape(SIGNAL_EXCEPTION) + r" Process \d+ got signal: (\d+)")


@dataclass(frozen=True)
class ReportEntry:
    """One failed worker as torchrun's report names it."""

    rank: int
    local_rank: int
    exit_code: int
    message: str  # the first line of its error (our headline), or torchrun's words
    error_file: str | None = None  # None: the worker wrote none
    time: float | None = None  # seconds since the epoch (torchrun writes whole seconds)
    root: bool = False  # torchrun's "first observed failure" on its node


def signal_name(number: int) -> str:
    """`signal 9 (SIGKILL)`; `signal 99` where the number has no name."""
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def parse_report(lines: list[str]) -> list[ReportEntry]:
    """The entries of one report (its lines, from the ChildFailedError line on)."""
    entries: list[ReportEntry] = []
    fields: dict[str, str] = {}
    root = False

    def close() -> None:
        rank = _RANK.match(fields.get("rank", ""))
        code = re.match(r"-?\d+", fields.get("exitcode", ""))
        if rank and code:
            file = fields.get("error_file", "")
            message = fields.get("traceback", "").strip()
            if message.startswith(_NO_TRACEBACK):
                message = ""
            entries.append(
                ReportEntry(
                    rank=int(rank[1]),
                    local_rank=int(rank[2]),
                    exit_code=int(code[0]),
                    message=message,
                    error_file=file if file and file != "<N/A>" else None,
                    time=_time(fields.get("time", "")),
                    root=root,
                )
            )
        fields.clear()

    for line in lines:
        if _ENTRY.fullmatch(line) or line.startswith("---") or _BORDER.fullmatch(line):
            close()
        if line.startswith("Root Cause"):
            root = True
        m = _FIELD.fullmatch(line)
        if m and m[1] not in fields:
            fields[m[1]] = m[2]
    close()
    return entries


def _time(text: str) -> float | None:
    try:  # torchrun writes the worker's local time, to the second
        return datetime.strptime(text.strip(), "%Y-%m-%d_%H:%M:%S").timestamp()
    except ValueError:
        return None


def find_reports(lines: Iterable[str]) -> list[ReportEntry]:
    """Every entry of every report in a log's lines (a node's, or a pod's)."""
    found: list[ReportEntry] = []
    held: list[str] | None = None
    borders = 0
    for line in lines:
        if line.startswith(CHILD_FAILED):
            held, borders = [], 0
            continue
        if held is None:
            continue
        held.append(line)
        borders += bool(_BORDER.fullmatch(line))
        if borders == 2 or len(held) > MAX_LINES:
            found += parse_report(held)
            held = None
    if held:
        found += parse_report(held)
    return found


def folded(entries: list[ReportEntry], node: int) -> str:
    """The report in one line: who failed first on the node, and how many with it."""
    if not entries:
        return "torchrun: a worker failed (ChildFailedError)"
    first = next((e for e in entries if e.root), entries[0])
    how = (
        f"killed by {signal_name(-first.exit_code)}"
        if first.exit_code < 0
        else f"exit code {first.exit_code}"
    )
    text = f"torchrun: rank {first.rank} failed first on node {node} ({how})"
    if first.message:
        text += f": {first.message}"
    if len(entries) > 1:
        text += f"; {len(entries) - 1} other rank(s) failed after it"
    return text


class ReportFolder:
    """Folds the report (and torchrun's traceback before it) and the agent's failed exit
    barrier in one node's lines, as they come. A traceback is held until its last line shows
    whose it is; lines that are no report's come out unchanged and in order, each once."""

    def __init__(self, node: int):
        self.node = node
        self.held: list[LogLine] = []
        self.borders = -1  # -1: in a traceback, not (yet) a report
        self.barrier: str | None = None  # "": the store's warning; else the barrier's prefix
        self.stopping = False  # in the lines of the agent's stop (a death signal)
        self.passed = 0  # other lines let through meanwhile
        self.agent: int | None = None  # the rank its lines carry (a 1-process node's: its rank)

    def feed(self, line: LogLine) -> list[LogLine]:
        text = line.text
        if self.barrier is not None:
            return self._feed_barrier(line)
        if self.stopping:
            return self._feed_stop(line)
        if not self.held:
            if _STORE_WARNING.match(text) or _BARRIER.match(text):
                # the agent's lines carry no rank, unless the node has one process: a line
                # without torchrun's prefix is then its rank's (split_rank). Either way only
                # the agent's "Error waiting on exit barrier" folds them (else they stay)
                self.barrier, self.agent = "", line.rank
                return self._feed_barrier(line)
            if _DEATH.match(text):
                self.held, self.stopping, self.passed = [line], True, 0
                return []
            if text == _TRACEBACK or text.startswith(CHILD_FAILED):
                self.held, self.borders = [line], (0 if text.startswith(CHILD_FAILED) else -1)
                return []
            return [line]
        self.held.append(line)
        if self.borders < 0:
            if text.startswith(CHILD_FAILED):
                self.borders = 0
            elif text.startswith(SIGNAL_EXCEPTION):
                return [self._stopped()]
            elif not text.startswith(" ") and text != _TRACEBACK:
                return self.flush()  # someone else's traceback: as it is
        else:
            self.borders += bool(_BORDER.fullmatch(text))
            if self.borders == 2:
                return [self._fold()]
        if len(self.held) > MAX_LINES:
            return self.flush()
        return []

    def _feed_barrier(self, line: LogLine) -> list[LogLine]:
        """The store's warnings and the barrier's traceback: held while they last."""
        text, prefix = line.text, self.barrier
        if line.rank != self.agent:
            keep = False  # another rank's line: the agent's lines ended
        elif prefix:
            keep = text.startswith(f"{prefix} ")
        elif barrier := _BARRIER.match(text):
            self.barrier, keep = barrier.group(1), True
        else:
            keep = bool(_STORE_WARNING.match(text) or _STORE_STACK.match(text))
        if not keep:  # the barrier's lines ended, or a warning had no barrier after it
            return self.flush() + self.feed(line)
        self.held.append(line)
        return self.flush() if len(self.held) > MAX_LINES else []

    def _feed_stop(self, line: LogLine) -> list[LogLine]:
        """The agent's stop: its workers told to close, then its SignalException traceback."""
        text = line.text
        if text.startswith(SIGNAL_EXCEPTION):
            self.held.append(line)
            return [self._stopped()]
        traceback = self.held[-1].text == _TRACEBACK or self.held[-1].text.startswith(" ")
        if _CLOSING.match(text) or text == _TRACEBACK or (traceback and text.startswith(" ")):
            self.held.append(line)
            return self.flush() if len(self.held) > MAX_LINES else []
        self.passed += 1  # a worker's last words while it stops: they go on
        if traceback or line.rank is None or self.passed > MAX_PASSED:
            return self.flush() + self.feed(line)  # no SignalException followed: as it was
        return [line]

    def _stopped(self) -> LogLine:
        """torchrun stopped by a signal (a stop, a cancel, a delete), in one line."""
        held, self.held, self.stopping = self.held, [], False
        found = _SIGNAL.match(held[-1].text) or _DEATH.match(held[0].text)
        how = signal_name(int(found.group(1))) if found else "a signal"
        text = f"torchrun: node {self.node} was stopped ({how}); its workers were stopped with it"
        return replace(held[-1], text=text, rank=None)

    def flush(self) -> list[LogLine]:
        """What is held: a failed exit barrier in one line, anything else as it is (the log
        ended there, or it was no report)."""
        out, self.held, self.stopping = self.held, [], False
        prefix, self.barrier = self.barrier, None
        if prefix and out:
            last = out[-1].text[len(prefix) :].strip()
            text = (
                f"torchrun: node {self.node} could not wait for the other nodes at exit "
                f"({last[:300]}); its own workers had finished"
            )
            return [replace(out[-1], text=text, rank=None)]
        return out

    def _fold(self) -> LogLine:
        held, self.held = self.held, []
        entries = find_reports(line.text for line in held)
        return replace(held[-1], text=folded(entries, self.node), rank=None)


def fold_reports(lines: Iterable[LogLine], node: int) -> Iterable[LogLine]:
    """A node's whole log with its reports folded (what is held at the end comes as it is)."""
    folder = ReportFolder(node)
    for line in lines:
        yield from folder.feed(line)
    yield from folder.flush()


def fold_by_node(lines: Iterable[LogLine]) -> Iterable[LogLine]:
    """Lines of several nodes (multiplexed) with each node's reports folded. Closing it closes
    ``lines`` (a log stream's reader stops, and its streams with it)."""
    folders: dict[int, ReportFolder] = {}
    try:
        for line in lines:
            yield from folders.setdefault(line.node, ReportFolder(line.node)).feed(line)
        for folder in folders.values():
            yield from folder.flush()
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()
