"""Local jobs below the server's CPU priority: the groups of the sessions a job leads are
lowered, each once, and again later when the kernel defers a change."""

import os
import subprocess
import sys
import time

import pytest

from kale_ext.backends.local import priority
from kale_ext.backends.local.priority import Groups, group_of

GROUPS = group_of("self") is not None


@pytest.fixture
def sessions():
    """Two processes, each leading a session (a scheduler group) of its own, as torchrun's
    workers do."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
        )
        for _ in range(2)
    ]
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


@pytest.mark.skipif(not GROUPS, reason="this kernel groups no sessions (no autogroup)")
def test_each_group_is_lowered_and_a_deferred_one_again_later(sessions, monkeypatch):
    real, calls = priority.set_group_nice, []

    def deferring(pid, nice):  # the kernel's answer to a user who is not root, once
        calls.append(pid)
        return real(pid, nice) if len(calls) > 1 else False

    monkeypatch.setattr(priority, "set_group_nice", deferring)
    groups = Groups(5)
    groups.lower(sessions)
    assert groups.pending and group_of(sessions[0])[1] == 0  # deferred: looked at again
    until = time.monotonic() + 10
    while groups.pending and time.monotonic() < until:
        time.sleep(0.1)  # a user who is not root: one change a tenth of a second
        groups.lower(sessions)
    assert [group_of(pid)[1] for pid in sessions] == [5, 5]
    done = len(calls)
    groups.lower(sessions)  # as asked already: not written again
    assert len(calls) == done and not groups.pending


def test_nothing_is_changed_at_nice_0(sessions):
    before = [group_of(pid) for pid in sessions]
    groups = Groups(0)
    groups.lower(sessions)
    assert not groups.pending and [group_of(pid) for pid in sessions] == before
    assert priority.lower_priority(0) is None


def test_a_preexec_lowers_the_process_and_its_own_group():
    out = subprocess.run(
        [sys.executable, "-c", "import os; print(os.nice(0))"],
        start_new_session=True,
        preexec_fn=priority.lower_priority(3),
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(out.stdout) == min(19, os.nice(0) + 3)
