"""A local job's processes and temporary files live no longer than the job: with real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from kale_ext.backends.local.lifetime import (
    remember,
    remembered,
    remove_scratch,
    scratch,
    stop_leftovers,
    supervisor_gone,
)
from kale_ext.backends.local.processes import alive, kill, start_time
from tests.backends.local.waiting import exited

#: A parent that starts a child armed with the parent-death signal, prints the child's pid and
#: waits: what the supervisor does with each node.
PARENT = (
    "import signal, subprocess, sys, time\n"
    "from kale_ext.backends.local.lifetime import dies_with_parent\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],\n"
    "                         start_new_session=True, preexec_fn=dies_with_parent())\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(300)\n"
)
#: A process that ignores SIGTERM (as a user's script may), prints its pid, and waits.
STUBBORN = (
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(300)\n"
)


def test_a_child_ends_when_its_parent_is_killed():
    with subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True) as p:
        child = int(p.stdout.readline())
        try:
            assert alive(child)
            p.kill()  # SIGKILL: the parent cannot pass anything on
            assert p.wait(30) == -signal.SIGKILL
            assert exited(child), "the child outlived its parent"
        finally:
            kill(child, signal.SIGKILL)


def test_leftovers_are_stopped_but_never_a_reused_pid(tmp_path):
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True)
    try:
        assert stubborn.stdout.readline() == other.stdout.readline() == "ready\n"
        # `other` is recorded with another start time: a process that reuses a job's old pid
        remember(tmp_path, {stubborn.pid: start_time(stubborn.pid), other.pid: "1"})
        assert remembered(tmp_path) == {stubborn.pid: start_time(stubborn.pid), other.pid: "1"}
        assert stop_leftovers(tmp_path) == [stubborn.pid]
        assert stubborn.wait(30) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for p in (stubborn, other):
            p.kill()
            p.wait()


def test_no_record_no_leftovers(tmp_path):
    assert stop_leftovers(tmp_path) == []
    (tmp_path / "processes.json").write_text("not json")
    assert stop_leftovers(tmp_path) == []


def test_scratch_folders_are_in_the_job_and_removed_with_it(tmp_path):
    node = scratch(tmp_path, 1)
    (node / "kale_ext-x").mkdir()
    assert node == tmp_path / "tmp" / "node-1" and scratch(tmp_path) == tmp_path / "tmp"
    remove_scratch(tmp_path)
    assert not (tmp_path / "tmp").exists()
    remove_scratch(tmp_path)  # nothing left: not an error


def test_a_job_whose_supervisor_is_gone_reads_failed_and_says_why(tmp_path):
    scratch(tmp_path, 0)
    (tmp_path / "processes.json").write_text(json.dumps({str(2**22 + 1): "1"}))  # no such pid
    record = {
        "status": "Running",
        "nodes": [{"index": 0, "state": "Running"}, {"index": 1, "state": "Succeeded"}],
    }
    out = supervisor_gone(tmp_path, record, "2025-01-01T00:00:00Z")
    assert out["status"] == "Failed" and out["finished"] == "2025-01-01T00:00:00Z"
    assert out["reason"].startswith("the job's supervisor stopped unexpectedly")
    assert [n["state"] for n in out["nodes"]] == ["Failed", "Succeeded"]
    assert out["nodes"][0]["reason"] == "stopped with the job's supervisor"
    assert not (tmp_path / "tmp").exists()
