"""A local job's progress: its supervisor follows rank 0's log (node 0's file) as it grows and
keeps the progress it reads (kale_ext/progress.py) in the job's progress.json, and the last
``checkpoint_step`` rank 0 reported with when it read it (kale_ext/lineage.py) in checkpoint.json,
which every view reads with the job's record. The log is read once, a bounded piece at a time,
never held: the follower keeps its position, an unfinished line of at most logpieces.MAX_PIECE
bytes and the tracker's few readings.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ...errors import StorageError
from ...files import open_regular, read_json, write_atomic
from ...lineage import Checkpoint, reported_step
from ...progress import METRIC_PREFIX, Progress, ProgressTracker, utc_now
from ..base import split_rank
from ..logpieces import READ_SIZE, split_pieces, text_of

PROGRESS_FILE = "progress.json"
CHECKPOINT_FILE = "checkpoint.json"
#: How often the supervisor reads the new part of rank 0's log.
POLL_SECONDS = 0.5
#: The most bytes of progress.json read back (it holds one small object).
MAX_FILE = 4096


class ProgressFollower:
    """Reads node 0's log from where it stopped; writes progress.json when what it shows
    changes."""

    def __init__(self, job_dir: Path, procs_per_node: int, started: float | None = None) -> None:
        """``started``: when the nodes started (monotonic), from which the first advance is
        timed."""
        self.log = job_dir / "node-0.log"
        self.out = job_dir / PROGRESS_FILE
        self.procs = procs_per_node
        self.position = 0
        self.pending = b""
        self.tracker = ProgressTracker(started)
        self.written: dict | None = None
        self.step: int | float | None = None  # the last checkpoint_step kept
        self.last_poll = float("-inf")

    def poll(self, now: float | None = None, every: float = POLL_SECONDS) -> Progress | None:
        """Read what rank 0 wrote since the last poll (unless the last was under ``every``
        seconds ago) and keep the progress it shows."""
        now = time.monotonic() if now is None else now
        if now - self.last_poll < every:
            return None
        self.last_poll = now
        try:  # progress is for people to see: reading or keeping it never fails the job
            with open_regular(self.log) as f:
                f.seek(self.position)
                while data := f.read(READ_SIZE):
                    self.position += len(data)
                    pieces, self.pending = split_pieces(self.pending + data)
                    texts = self._rank0(pieces)
                    self.tracker.feed(texts, now)
                    self._checkpoint(texts)
            # an unfinished line: a tqdm bar redraws itself after \r without a newline
            found = self.tracker.feed(self._rank0([(self.pending, True)]), now)
            if found is not None and (shown := found.to_json()) != self.written:
                write_atomic(self.out, json.dumps(shown))
                self.written = shown
        except (OSError, ValueError, ArithmeticError, RecursionError, StorageError):
            return None  # a log or disk that cannot be read or written: no progress shown
        return found

    def _checkpoint(self, texts: list[str]) -> None:
        """Keep the last checkpoint_step among rank 0's new lines, and now as when."""
        steps = [s for t in texts if (s := reported_step(t, METRIC_PREFIX)) is not None]
        if steps and steps[-1] != self.step:
            self.step = steps[-1]
            write_atomic(self.out.parent / CHECKPOINT_FILE,
                         json.dumps(Checkpoint(self.step, utc_now()).to_json()))  # fmt: skip

    def _rank0(self, pieces: list[tuple[bytes, bool]]) -> list[str]:
        texts = []
        for raw, partial in pieces:
            rank, text = split_rank(0, self.procs, text_of(raw, partial))
            if rank == 0:
                texts.append(text)
        return texts


def read_progress(job_dir: Path) -> Progress | None:
    """The progress a job's supervisor kept, or None (never reported, or not readable)."""
    try:
        return Progress.from_json(read_json(job_dir / PROGRESS_FILE, MAX_FILE))
    except (OSError, ValueError):
        return None


def read_checkpoint(job_dir: Path) -> Checkpoint | None:
    """The last checkpoint the job's rank 0 reported, or None (none, or not readable)."""
    try:
        return Checkpoint.from_json(read_json(job_dir / CHECKPOINT_FILE, MAX_FILE))
    except (OSError, ValueError):
        return None
