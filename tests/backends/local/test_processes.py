"""Processes of local jobs, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kale_ext.backends.local.processes import (
    NotStarted,
    alive,
    descendants,
    kill,
    kill_group,
    running_command,
    start,
    start_time,
    terminate,
)
from tests.backends.local.waiting import exited, until

#: Starts a process in a session of its own (as torchrun's workers are), prints its pid, waits.
SPAWNS = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
    "                         start_new_session=True)\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(60)\n"
)


def python(code: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, **kwargs
    )


def test_alive_knows_running_exited_and_zombie_processes():
    assert alive(os.getpid())
    assert not alive(None) and not alive(0)
    with python("pass") as child:
        assert exited(child.pid)  # exited, not yet reaped: a zombie
        assert not alive(child.pid)
    assert not alive(child.pid)  # reaped


def test_a_process_group_kill_misses_another_session_and_descendants_find_it():
    with python(SPAWNS, start_new_session=True) as node:
        escaped = int(node.stdout.readline())
        try:
            family = descendants({node.pid})
            assert family[escaped] == start_time(escaped)
            kill_group(node.pid, signal.SIGKILL)
            assert node.wait(30) == -signal.SIGKILL
            assert alive(escaped)  # its own session: the group kill did not reach it
        finally:
            kill(escaped, signal.SIGKILL)
    assert exited(escaped)
    kill(escaped, signal.SIGKILL)  # a process already gone is not an error
    kill_group(node.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "handler, ends_by",
    [("signal.SIG_DFL", -signal.SIGTERM), ("signal.SIG_IGN", -signal.SIGKILL)],
    ids=["honours SIGTERM", "ignores SIGTERM"],
)
def test_terminate_asks_then_kills(handler, ends_by):
    code = (
        f"import signal, time\nsignal.signal(signal.SIGTERM, {handler})\n"
        "print('ready', flush=True)\ntime.sleep(60)\n"
    )
    with python(code) as process:
        assert process.stdout.readline() == "ready\n"
        terminate(process.pid, grace=0.5)
        assert process.wait(30) == ends_by


def test_running_command_finds_a_process_by_the_end_of_its_command_line(tmp_path):
    marker = str(tmp_path / "a folder with spaces")
    tail = ["-c", "import time; time.sleep(60)", marker]
    assert not running_command(tail)
    proc = subprocess.Popen([sys.executable, *tail])
    try:
        # Popen returns as the exec starts: its command line is set a moment later
        until(lambda: running_command(tail), "the process's command line to be read")
        assert not running_command(tail[1:] + ["more"])  # the end, whole arguments only
        assert not running_command([marker[:-1]])
    finally:
        proc.kill()
        proc.wait()
    assert not running_command(tail)


def test_a_process_that_cannot_start_is_named_with_its_program_and_why(tmp_path):
    with pytest.raises(NotStarted) as raised:
        start("node 1", [str(tmp_path / "torchrun"), "train.py"])
    gone = tmp_path / "torchrun"
    assert str(raised.value) == (
        f"node 1 could not be started ({gone}): [Errno 2] No such file or directory: '{gone}'"
    )
    with pytest.raises(NotStarted, match=r"^mpirun could not be started \(true\): "):
        start("mpirun", ["true"], cwd=tmp_path / "absent")  # its folder gone
    done = start("node 0", [sys.executable, "-c", "print('ran')"], stdout=subprocess.PIPE)
    assert done.communicate()[0] == b"ran\n"


def test_a_failed_preexec_says_its_own_reason():
    """Python says only "Exception occurred in preexec_fn"; the step's own words follow."""

    def pin() -> None:
        os.sched_setaffinity(0, {10_000})  # a core no machine has

    fds = set(os.listdir("/proc/self/fd"))
    with pytest.raises(NotStarted) as raised:
        start("node 1", ["true"], preexec_fn=pin)
    assert str(raised.value).startswith(
        "node 1 could not be started (true): Exception occurred in preexec_fn: OSError: "
    ), raised.value
    assert "Invalid argument" in str(raised.value)
    started = start("node 0", ["true"], preexec_fn=lambda: None)  # a preexec that does its work
    assert started.wait() == 0
    assert set(os.listdir("/proc/self/fd")) == fds  # no pipe left open either way
