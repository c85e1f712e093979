"""`--follow` (kale_ext/cli/follow.py) against a backend whose job goes through given states:
what a terminal and a pipe show, when it ends, and the exit status that says how the job
ended. The real jobs it follows are in test_run.py and test_actions.py."""

from __future__ import annotations

import contextlib
import io
import threading
import time

import pytest

from kale_ext.backends.base import JobInfo, JobOutputs, LogLine, Status
from kale_ext.cli import follow as following
from kale_ext.cli.follow import ProgressTenths, follow, live_text
from kale_ext.progress import Progress

STOPPED = "stopped by alice at 2026-12-06T04:00:00Z"


def _running(percent: float | None, status=None, reason=None):
    info = JobInfo("job", status or Status.RUNNING, "local", reason=reason)
    if percent is not None:
        info.progress = Progress.of(percent, 100, "step", "report", eta_seconds=30)
    return info


class Scripted:
    """A backend whose job answers each poll with the next of ``states`` (then the last); its
    logs are ``lines``, then end when ``logs_end`` says (default: at once)."""

    name = "local"

    def __init__(self, states, lines=(), logs_end=None):
        self.states, self.lines, self.polls = list(states), list(lines), 0
        self.logs_end = logs_end or (lambda: True)
        self.asked = threading.Event()

    def get_job(self, name):
        self.polls += 1
        self.asked.set()
        return self.states[min(self.polls, len(self.states)) - 1]

    def logs(self, name, follow=False):
        for text in self.lines:
            yield LogLine(0, text, 0)
        while not self.logs_end():
            self.asked.wait(1)
            self.asked.clear()

    def outputs(self, name):
        return JobOutputs("")


def _followed(backend) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = follow(backend, "job")
    return code, err.getvalue()


@pytest.fixture(autouse=True)
def running_poll(monkeypatch):
    """A scripted job's status is asked each POLL while it runs too, unless a test says."""
    monkeypatch.setattr(following, "RUNNING_POLL", following.POLL, raising=False)


@pytest.fixture
def terminal(monkeypatch):
    """stderr is a terminal, as rich tells one (a live spinner, redrawn)."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("TTY_INTERACTIVE", "1")


def test_a_terminal_shows_the_bar_drawn(terminal):
    states = [_running(45)] * 3 + [_running(None, Status.COMPLETE)]
    job = Scripted(states, logs_end=lambda: job.polls >= len(states))
    code, shown = _followed(job)
    assert code == 0
    assert "job: Running (0 s) [#########-----------] 45% (45/100 steps), ETA 30s" in shown
    assert "[job] Complete" in shown


def test_a_stopped_job_ends_stopped_with_its_own_exit_status(terminal):
    """Someone stopped it (`kale-ext stop`, the panel's Stop): it reads Stopped as in `status`,
    and exits 3, not failure's 1."""
    states = [_running(45), _running(45, Status.FAILED, STOPPED)]
    job = Scripted(states, ["step 1"], logs_end=lambda: job.polls >= 2)
    code, shown = _followed(job)
    assert code == following.STOPPED == 3
    assert f"[job] Stopped: {STOPPED}" in shown and "Failed" not in shown


@pytest.mark.parametrize(
    ("end", "code", "said"),
    [
        (_running(None, Status.COMPLETE), 0, "[job] Complete"),
        (_running(None, Status.FAILED, "node 0, rank 0: cell 1, line 2: KeyError: 'a'"), 1,
         "[job] Failed: node 0, rank 0: cell 1, line 2: KeyError: 'a'"),
        (_running(None, Status.FAILED, "stopped early: loss 3 at step 2"), 1,
         "[job] Stopped early: stopped early: loss 3 at step 2"),
        (_running(None, Status.FAILED, STOPPED), 3, f"[job] Stopped: {STOPPED}"),
    ],
    ids=["complete", "failed", "stopped-early", "stopped"],
)  # fmt: skip
def test_the_exit_status_says_how_the_job_ended(end, code, said):
    """Piped: the same lines, no spinner."""
    assert _followed(Scripted([_running(None), end])) == (code, f"[job] Running\n{said}\n")


def test_it_ends_when_the_status_does_however_long_after_the_logs(monkeypatch):
    """A cluster's pods' logs end before its TrainJob reads Complete: the follow waits for the
    status (before: 5 s, then exit 1 with no end said)."""
    monkeypatch.setattr(following, "POLL", 0.01)
    job = Scripted([_running(None)] * 40 + [_running(None, Status.COMPLETE)])
    assert _followed(job) == (0, "[job] Running\n[job] Complete\n")


def test_while_it_runs_and_its_logs_stream_the_status_is_asked_each_running_poll(monkeypatch):
    """A cluster's status is 2-3 API calls: asked each POLL while the job runs, they were half
    the CPU `--follow` spent (benchmarks/cluster.py). The logs stream 0.3 s here, far less than
    RUNNING_POLL: the status is asked once then, and at once when they end."""
    monkeypatch.setattr(following, "POLL", 0.01)
    monkeypatch.setattr(following, "RUNNING_POLL", 600, raising=False)
    streaming_until = time.monotonic() + 0.3
    ended = threading.Event()

    class EndsWithItsLogs(Scripted):
        def get_job(self, name):
            super().get_job(name)
            return _running(None, Status.COMPLETE if ended.is_set() else None)

    def logs_end():
        if time.monotonic() > streaming_until:
            ended.set()
        return ended.is_set()

    job = EndsWithItsLogs([None], ["step 1"], logs_end=logs_end)
    assert _followed(job) == (0, "[job] Running\n[job] Complete\n")
    assert job.polls == 2  # before: one each POLL while the logs streamed, about 30


def test_a_terminal_s_clock_ticks_between_the_running_polls(terminal, monkeypatch):
    """The spinner's elapsed seconds are redrawn each POLL, the status asked or not."""
    monkeypatch.setattr(following, "POLL", 0.01)
    monkeypatch.setattr(following, "RUNNING_POLL", 600, raising=False)
    drawn = []
    monkeypatch.setattr(following, "live_text", lambda name, info, elapsed: drawn.append(
        elapsed) or f"{name}: {elapsed:.2f}")  # fmt: skip
    job = Scripted([_running(None), _running(None, Status.COMPLETE)], ["step 1"],
                   logs_end=lambda: len(drawn) >= 5 or job.polls >= 2)  # fmt: skip
    assert _followed(job)[0] == 0
    assert job.polls == 2 and len(drawn) >= 5  # before: drawn once a poll, 2


@pytest.mark.parametrize(
    "percent, status, text",
    [
        (45, None, "job: Running (12 s) [#########-----------] 45% (45/100 steps), ETA 30s"),
        (None, None, "job: Running (12 s)"),
        (45, "Complete", "job: Complete (12 s)"),  # ended: its state, not a stale bar
        # its work is done, it still runs (saving, leaving its group, exiting): no `ETA 0s`
        (100, None, "job: Running (12 s) [####################] 100% (100/100 steps), finishing"),
    ],
)
def test_the_live_line_on_a_terminal(percent, status, text):
    assert live_text("job", _running(percent, status and Status(status)), 12.4) == text


def test_the_live_line_says_why_a_job_waits_once():
    queued = _running(None, Status.QUEUED, "waiting for 2 CPUs, 1st in line")
    assert live_text("job", queued, 3) == "job: Queued (waiting for 2 CPUs, 1st in line) (3 s)"


def test_piped_progress_is_a_line_a_tenth():
    tenths = ProgressTenths()
    seen = [tenths.line(_running(p).progress_shown) for p in (None, 0, 3, 9.9, 10, 55, 56, 100)]
    assert [s and s.split(" (")[0] for s in seen] == [
        None, "0%", None, None, "10%", "55%", None, "100%",
    ]  # fmt: skip
