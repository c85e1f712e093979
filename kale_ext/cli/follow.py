"""What the submitting commands (`run`, `rerun`, `resume`) share: saying what was submitted,
then its name or, with `--follow`, the job until it ends: its logs with rank prefixes, its status
changes and progress, and an exit status that says how it ended."""

from __future__ import annotations

import argparse
import sys
import time

from ..errors import KaleExtError
from ..terminal import printable

#: How `--follow` exits: the job completed, failed, or someone stopped it (kept, not failed).
COMPLETE, FAILED, STOPPED = 0, 1, 3
#: How often the status is asked while following (and once more at once when the logs end)...
POLL = 0.5
#: ... and while the job runs and its logs stream: they show it lives, their end wakes the
#: watcher at once, and a job posts its progress to the Trainer at most every 5 s
#: (trainer_status.SETTINGS). A cluster's status is 3 API calls (the TrainJob, its pods, the
#: last log line for the stall check): asked each POLL, they were half the CPU `--follow` spent
#: on a cluster (benchmarks/cluster.py).
RUNNING_POLL = 5.0


def add_follow(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help=f"stream logs until the job ends; exit {COMPLETE} when it completes, {FAILED} when "
        f"it fails, {STOPPED} when someone stopped it (kept: `kale-ext stop`, the panel's Stop)",
    )


def submitted(args, backend, job, how: str = "") -> int:
    """Say that ``job`` (a Submission) was submitted, ``how``, and its warnings (on stderr); then
    print its name, or with ``args.follow`` follow it to its end."""
    from .common import print_warnings

    print(printable(f"submitted {job.name} to the {backend.name} backend{how}"), file=sys.stderr)
    print_warnings(job.warnings, sys.stderr)
    if not args.follow:
        print(printable(job.name))
        return 0
    return follow(backend, job.name)


def follow(backend, name: str) -> int:
    """Stream the logs with rank prefixes, report status changes and progress (a live spinner
    with the status, elapsed time and a progress bar on a terminal; a plain progress line at
    each tenth when piped, read from the lines as they are printed), and exit with the job's
    end (exit_code) once its status says it ended."""
    import threading

    from rich.console import Console
    from rich.text import Text

    from ..backends.base import Status
    from ..display import log_text

    # soft_wrap: a line is never cut at 80 columns (a redirected log keeps whole lines)
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    started = time.monotonic()
    # Text, never markup: the bar's `[####----]` would be read as a style and dropped
    spinner = console.status(Text(f"{name}: submitted")) if console.is_terminal else None
    wake = threading.Event()  # the logs ended: ask the status at once, not after a POLL
    logs_ended = threading.Event()
    tenths, lock = ProgressTenths(), threading.Lock()
    from_logs = LogProgress()
    last: list = [None]  # the watcher's last answer

    def say_progress(progress) -> None:
        with lock:
            if (shown := tenths.line(progress)) is not None:
                console.print(printable(f"[{name}] progress {shown}"), markup=False)

    def watch():
        said = None
        while True:
            wake.clear()  # before asking: a wake while it asks ends the wait below
            try:
                info = last[0] = backend.get_job(name)
            except KaleExtError:
                return
            if (line := status_line(info)) != said:
                console.print(printable(f"[{name}] {line}"), markup=False)
                said = line
            if spinner is not None:
                spinner.update(Text(live_text(name, info, time.monotonic() - started)))
            elif (progress := info.progress_shown) is not None and progress.source == "trainer":
                say_progress(progress)  # the cluster's own: not in the logs
            if info.status.finished:
                return
            asked = time.monotonic()
            while not wake.wait(POLL):  # the spinner's clock ticks each POLL, asked or not
                streaming = info.status is Status.RUNNING and not logs_ended.is_set()
                if not streaming or time.monotonic() - asked >= RUNNING_POLL:
                    break
                if spinner is not None:
                    spinner.update(Text(live_text(name, info, time.monotonic() - started)))

    watcher = threading.Thread(target=watch, daemon=True)
    if spinner is not None:
        spinner.start()
    try:
        watcher.start()
        for line in backend.logs(name, follow=True):
            if spinner is not None:
                console.print(log_text(line), markup=False, highlight=False)
            else:
                print(log_text(line), flush=True)
                # right after the line that passed another tenth: a poll's answer could be
                # older than the lines printed since
                say_progress(from_logs.feed(line))
        logs_ended.set()  # a cluster's status may say the end a while after its pods' logs end
        wake.set()
        watcher.join()
    finally:
        if spinner is not None:
            spinner.stop()
    info = last[0] if last[0] is not None and last[0].status.finished else backend.get_job(name)
    where = outputs_line(backend, name)
    if where:
        console.print(printable(where), markup=False)
    return exit_code(info)


def exit_code(info) -> int:
    """How a followed job ended, as its exit status: COMPLETE, STOPPED (someone stopped it: it
    reads Stopped in every view, and is not among the failed), else FAILED."""
    from ..backends.base import STOPPED_TEXT, Status

    if info.status is Status.COMPLETE:
        return COMPLETE
    return STOPPED if info.status_text == STOPPED_TEXT else FAILED


def status_line(info) -> str:
    """The status as every view shows it, with its reason: `Stopped: stopped by alice at ...`,
    `Failed: node 0, rank 0: cell 2 ...`, `Queued (waiting for 2 CPUs ...)`."""
    text = info.status_text
    said = not info.reason or text.endswith(f"({info.reason})")  # `Queued (why)` says it
    return text if said else f"{text}: {info.reason}"


def live_text(name: str, info, elapsed: float) -> str:
    """The spinner's text on a terminal: `job: Running (41 s) [####----] 45% (45/100 steps),
    ETA 1m 05s` (the bar only while it runs and reports progress; `finishing` for the ETA once
    its work is all done and it still runs: saving, leaving its process group, exiting)."""
    from ..progress import bar, summary

    text = f"{name}: {status_line(info)} ({elapsed:.0f} s)"
    progress = info.progress_shown
    if progress is None:
        return printable(text)
    done = progress.percent >= 100
    shown = f"{summary(progress, eta=False)}, finishing" if done else summary(progress)
    return printable(f"{text} {bar(progress.percent)} {shown}")


class LogProgress:
    """A job's progress read from its rank-0 log lines as they are streamed, the way its
    backend reads it (kale_ext/progress.py)."""

    def __init__(self) -> None:
        from ..progress import ProgressTracker

        self.tracker = ProgressTracker()
        self.progress = None

    def feed(self, line):
        """The progress so far, after ``line`` (a LogLine)."""
        if line.rank == 0:
            self.progress = self.tracker.feed([line.text], time.monotonic())
        return self.progress


class ProgressTenths:
    """Plain progress lines for a log that is piped: one each time the job passes another
    tenth of its work (and at its end), not one per step."""

    def __init__(self) -> None:
        self.tenth: int | None = None

    def line(self, progress) -> str | None:
        from ..progress import summary

        if progress is None:
            return None
        tenth = int(progress.percent // 10)
        if self.tenth is not None and tenth <= self.tenth:
            return None
        self.tenth = tenth
        return summary(progress)


def outputs_line(backend, name: str) -> str | None:
    """Where an ended job's outputs are, to open: `outputs: examples/outputs/<job>/ (2 files:
    a.pt, b.json)`; the path relative to here when it is below here. None when it wrote none."""
    import os

    try:
        found = backend.outputs(name)
    except KaleExtError:
        return None
    if not found.location or (found.listed and not found.files):
        return None
    where = found.location
    if os.path.isabs(where) and not os.path.relpath(where).startswith(".."):
        where = os.path.relpath(where)
    if not found.listed:
        return f"outputs: {where} ({found.note})" if found.note else f"outputs: {where}"
    names = [f.path for f in found.files]
    shown = ", ".join(names[:3]) + (f", ... ({len(names)} files)" if len(names) > 3 else "")
    return f"outputs: {where}{os.sep}: {shown}"
