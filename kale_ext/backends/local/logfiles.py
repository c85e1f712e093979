"""A local job's logs: one file per node, read a bounded piece at a time (memory never grows
with a log's size), its last lines found without keeping them, torchrun's reports folded into
one line."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from ...files import open_regular
from ..base import LogLine, LogQuery, split_rank
from ..logpieces import READ_SIZE, split_pieces, text_of
from ..torchrun_report import ReportFolder

#: Lines read before a tail's first, so that torchrun's report (or its exit barrier's) that the
#: tail would cut is folded as a whole: the tail counts lines as they are shown.
TAIL_MARGIN = 400


def node_logs(
    job_dir: Path, nodes, procs: int, query: LogQuery, finished: Callable[[], bool]
) -> Iterator[LogLine]:
    """The lines of ``nodes`` (after ``query.offsets``; the last ``query.tail`` first), then,
    when following, what they write until ``finished()`` and nothing more is written."""
    positions = {k: query.offsets.get(k, 0) for k in nodes}
    pending = {k: b"" for k in nodes}
    folders = {k: ReportFolder(k) for k in nodes}  # torchrun's report: one line
    if query.tail is not None:
        ended = finished()  # before the scan: then its log is whole, and what is held is shown
        for k in nodes:
            yield from _tail(job_dir, k, procs, query.tail, positions, folders[k], ended)
    while True:
        ended = finished()
        got = False
        for k in nodes:
            for line in _read(job_dir / f"node-{k}.log", k, procs, positions, pending):
                got = True
                yield from folders[k].feed(line)
        if not query.follow or (ended and not got):
            if ended:  # else a report still being written is read again next time
                for folder in folders.values():
                    yield from folder.flush()
            return
        if not got:
            time.sleep(0.05)


def _read(path: Path, node: int, procs: int, positions: dict, pending: dict) -> Iterator[LogLine]:
    """The node's lines after ``positions[node]``, read a bounded piece at a time."""
    try:
        f = open_regular(path)  # closed below, also when the reader stops
    except FileNotFoundError:
        return
    with f:
        f.seek(positions[node])
        while data := f.read(READ_SIZE):
            end = positions[node] - len(pending[node])  # where the pending part starts
            positions[node] += len(data)
            pieces, pending[node] = split_pieces(pending[node] + data)
            for raw, partial in pieces:
                end += len(raw) + (0 if partial else 1)
                rank, text = split_rank(node, procs, text_of(raw, partial))
                yield LogLine(node, text, rank, end, partial)


def _tail(
    job_dir: Path, node: int, procs: int, tail: int, positions: dict, folder, ended: bool
) -> Iterator[LogLine]:
    """The last ``tail`` lines of the node's log as they are shown (a torchrun report the tail
    would cut folds whole), fed through ``folder``. Memory does not grow with ``tail`` times a
    line's length: the first scan keeps where lines start, the second where the shown lines
    end; the lines themselves are read once more from there."""
    path = job_dir / f"node-{node}.log"
    starts: deque = deque(maxlen=tail + TAIL_MARGIN)
    end, pending = 0, b""
    with open_regular(path) as f:
        while data := f.read(READ_SIZE):
            pieces, pending = split_pieces(pending + data)
            for raw, partial in pieces:
                starts.append(end)
                end += len(raw) + (0 if partial else 1)
    first = max(positions[node], starts[0]) if starts and tail else end
    ends: deque = deque(maxlen=tail + 1)  # where the last shown lines end (a folded one: its
    scan = ReportFolder(node)  # report's last line)
    for line in _window(path, node, procs, first, end):
        ends.extend(shown.offset for shown in scan.feed(line))
    if ended:
        ends.extend(shown.offset for shown in scan.flush())
    begin = ends[0] if len(ends) > tail else first
    for line in _window(path, node, procs, begin, end):
        yield from folder.feed(line)
    if ended:
        yield from folder.flush()
    positions[node] = max(positions[node], end)  # the loop that follows reads on from here


def _window(path: Path, node: int, procs: int, begin: int, end: int) -> Iterator[LogLine]:
    """The node's lines between offsets ``begin`` and ``end``."""
    for line in _read(path, node, procs, {node: begin}, {node: b""}):
        if line.offset > end:
            return
        yield line
