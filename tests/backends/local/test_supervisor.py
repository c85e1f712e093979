"""The supervisor of a local job, with real processes: the record it keeps, its failure summary
(tests/backends/local/test_failures.py has the cases), and stopping every process a job started
when a node fails or the job is cancelled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kale_ext.backends.local.records import read_record, write_record
from kale_ext.backends.local.supervisor import failing_text
from tests.backends.local.waiting import exited, until

PRINT_ENV = (
    "import os\n"
    "names = ('PET_NNODES', 'PET_NODE_RANK', 'PET_NPROC_PER_NODE', 'PET_MASTER_ADDR', 'GREETING')\n"
    "print(*(os.environ[n] for n in names), os.path.basename(os.getcwd()))\n"
)
#: Node 0 starts a process in a session of its own (as torchrun's workers are), says so, and
#: waits; node 1 fails once it has.
ONE_FAILS = (
    "import os, subprocess, sys, time\n"
    "from pathlib import Path\n"
    "files = Path(os.environ['JOB_FILES'])\n"
    "if os.environ['PET_NODE_RANK'] == '0':\n"
    "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],\n"
    "                             start_new_session=True)\n"
    "    (files / 'pids.tmp').write_text(f'{os.getpid()} {child.pid}')\n"
    "    (files / 'pids.tmp').rename(files / 'pids')\n"
    "    time.sleep(300)\n"
    "while not (files / 'pids').exists():\n"
    "    time.sleep(0.01)\n"
    "sys.exit(3)\n"
)
WAITS = "import time\nprint('up', flush=True)\ntime.sleep(300)\n"
#: Node 1 fails (exit 3, nothing that tells when); node 0, stopped by the supervisor after it,
#: does what a torchrun agent whose worker would not stop does: reports that worker killed by
#: SIGKILL, with the time (torchrun's report), and is killed itself.
KILLED_AFTER = (
    "import os, signal, sys, time\n"
    "from pathlib import Path\n"
    "files = Path(os.environ['JOB_FILES'])\n"
    "def killed(*_):\n"
    "    stamp = time.strftime('%Y-%m-%d_%H:%M:%S')\n"
    "    print('torch.distributed.elastic.multiprocessing.errors.ChildFailedError:',\n"
    "          '=' * 20, 'train.py FAILED', '-' * 20, 'Root Cause (first observed failure):',\n"
    "          '[0]:', f'  time      : {stamp}', '  rank      : 0 (local_rank: 0)',\n"
    "          '  exitcode  : -9 (pid: 1)', '  error_file: <N/A>', '=' * 20,\n"
    "          sep='\\n', flush=True)\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "if os.environ['PET_NODE_RANK'] == '0':\n"
    "    signal.signal(signal.SIGTERM, killed)\n"
    "    (files / 'up').touch()\n"
    "    time.sleep(300)\n"
    "while not (files / 'up').exists():\n"
    "    time.sleep(0.01)\n"
    "sys.exit(3)\n"
)


@pytest.fixture
def supervise(tmp_path) -> Iterator:
    """Start a supervisor on a new job whose nodes run a Python script; stop it at the end."""
    started: list[subprocess.Popen] = []

    def start(
        script: str, nodes: int = 2, env: dict | None = None, jobs: Path = tmp_path, **more
    ) -> tuple[subprocess.Popen, Path]:
        """``more``: the record's other fields (or ones in place of the above)."""
        job_dir = jobs / f"job-{len(started)}"
        job_dir.mkdir()
        write_record(
            job_dir,
            {
                "name": job_dir.name,
                "status": "Created",
                "num_nodes": nodes,
                "procs_per_node": 1,
                "created": "2025-01-01T00:00:00Z",
                "command": [sys.executable, "-c", script],
                "env": {"JOB_FILES": str(job_dir), **(env or {})},
                "nodes": [{"index": k, "state": "Pending"} for k in range(nodes)],
                **more,
            },
        )
        for k in range(nodes):
            (job_dir / f"node-{k}.log").touch()
        command = [sys.executable, "-m", "kale_ext.backends.local.supervisor", str(job_dir)]
        started.append(subprocess.Popen(command))
        return started[-1], job_dir

    yield start
    for supervisor in started:
        if supervisor.poll() is None:
            supervisor.terminate()
            supervisor.wait(30)


def test_a_job_that_succeeds_is_recorded_complete(supervise):
    supervisor, job_dir = supervise(PRINT_ENV, env={"GREETING": "hi"})
    assert supervisor.wait(60) == 0
    record = read_record(job_dir)
    assert record["status"] == "Complete" and record["reason"] is None
    assert record["started"] and record["finished"]
    assert [(n["index"], n["state"], n["exit_code"]) for n in record["nodes"]] == [
        (0, "Succeeded", 0),
        (1, "Succeeded", 0),
    ]
    for k in range(2):  # each node: its PET_* environment, its own working directory, its log
        assert (job_dir / f"node-{k}.log").read_text() == f"2 {k} 1 127.0.0.1 hi node-{k}\n"


def test_every_node_meets_at_the_recorded_port(supervise):
    script = "import os\nprint(os.environ['PET_MASTER_PORT'])\n"
    supervisor, job_dir = supervise(script)
    assert supervisor.wait(60) == 0
    port = read_record(job_dir)["master_port"]
    assert isinstance(port, int) and 0 < port < 65536
    for k in range(2):
        assert (job_dir / f"node-{k}.log").read_text() == f"{port}\n"


def node_1_failed_first(job_dir: Path) -> tuple[dict, dict]:
    """The record of a job whose node 1 exited with 3 first says so; its two nodes' records."""
    record = read_record(job_dir)
    said = "node 1, rank 1: exited with code 3 (no traceback)"
    assert record["status"] == "Failed" and record["reason"] == said
    assert (record["failure"]["node"], record["failure"]["exit_code"]) == (1, 3)
    node0, node1 = record["nodes"]
    assert (node1["state"], node1["exit_code"], node1["reason"]) == ("Failed", 3, said)
    assert "reason" not in node0
    return node0, node1


def test_a_failed_node_stops_the_others_and_everything_they_started(supervise):
    supervisor, job_dir = supervise(ONE_FAILS)
    assert supervisor.wait(60) == 0
    node0, _ = node_1_failed_first(job_dir)
    assert (node0["state"], node0["exit_code"]) == ("Failed", -signal.SIGTERM)
    node_pid, escaped = map(int, (job_dir / "pids").read_text().split())
    assert node_pid == node0["pid"]
    assert exited(escaped), "a process node 0 started in its own session outlived the job"


def test_the_first_node_to_fail_is_named_not_the_one_stopped_and_killed_after(supervise):
    """Node 1 fails first; node 0, stopped after it, reports its worker killed by SIGKILL, with
    a time, and dies by SIGKILL: the failure is node 1's (before, node 0's timed report won
    over node 1's ending, which tells no time of its own)."""
    supervisor, job_dir = supervise(KILLED_AFTER)
    assert supervisor.wait(60) == 0
    node0, _ = node_1_failed_first(job_dir)
    assert (node0["state"], node0["exit_code"]) == ("Failed", -signal.SIGKILL)
    assert "exitcode  : -9" in (job_dir / "node-0.log").read_text()  # node 0's report was read


def test_cancelling_stops_every_node(supervise):
    supervisor, job_dir = supervise(WAITS)
    until(lambda: read_record(job_dir)["status"] == "Running", "the nodes to start")
    until(lambda: (job_dir / "node-1.log").read_text() == "up\n", "node 1 to say it is up")
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(30) == 0
    record = read_record(job_dir)
    assert record["status"] == "Failed" and record["reason"] == "cancelled"
    for node in record["nodes"]:
        assert node["state"] == "Failed"
        assert exited(node["pid"]), f"node {node['index']} still runs after a cancel"


class Reaped:
    """A node that ended and was reaped: its pid is free, and here it is already another
    process's (the system hands pids out again; pid_max is 32768 and every thread takes one)."""

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, 0

    def poll(self) -> int:
        return 0

    def wait(self, timeout: float | None = None) -> int:
        return 0


def test_a_node_that_ended_stops_nobody_whose_pid_it_had():
    """Stopping a job's nodes never reaches a process that took the pid of a node that ended:
    another job's torchrun had it, and its worker was killed by SIGKILL (seen in a browser run)."""
    from kale_ext.backends.local.resources import MemoryWatch
    from kale_ext.backends.local.supervisor import stop_nodes

    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
    code += "'import time; time.sleep(60)']); print('ready', flush=True); time.sleep(60)"
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline() == "ready\n"  # its child (its "worker") runs
        from kale_ext.backends.local.processes import descendants

        [worker] = descendants({other.pid})
        stop_nodes([Reaped(other.pid)], {})
        watch = MemoryWatch({"resources": {"memory_bytes": 1, "memory": "1"}})
        assert watch.check([None]) is None  # an ended node's memory is nobody's to watch
        assert other.poll() is None and exited(worker, timeout=0.5) is False
    finally:
        for pid in descendants({other.pid}):
            os.kill(pid, signal.SIGKILL)
        other.kill()
        other.wait()


@pytest.mark.parametrize(
    ("ended", "text"),
    [
        ({1: 1}, "node 1 exited with code 1"),
        ({0: 0, 1: 3}, "node 1 exited with code 3"),  # the first that failed, not the first
        ({2: -signal.SIGKILL, 0: 1}, "node 2 was killed by signal 9 (SIGKILL)"),
    ],
)
def test_a_failing_job_names_the_first_node_that_failed_and_how(ended, text):
    assert failing_text(ended) == text


def test_the_supervisor_runs_as_a_module_without_runpy_warning(tmp_path):
    """`python -m kale_ext.backends.local.supervisor` must not find itself imported already
    (through the package's backend), which makes runpy warn in every job's supervisor.log."""
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::RuntimeWarning",
            "-m",
            "kale_ext.backends.local.supervisor",
            str(tmp_path / "absent"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "RuntimeWarning" not in done.stderr, done.stderr
    assert "FileNotFoundError" in done.stderr  # it ran as far as reading the missing record


#: Writes its outputs until the disk is full: its traceback cannot be written either.
FILLS_THE_DISK = (
    "import os\n"
    "with open(os.path.join(os.environ['KALE_EXT_OUTPUT_DIR'], 'big.bin'), 'wb') as f:\n"
    "    while True:\n"
    "        f.write(b'x' * 65536)\n"
)


def test_a_job_that_fills_the_disk_says_the_disk_is_full(supervise, tmp_path):
    """Issue 42: a job that filled its disk failed "exited with code 1 (no traceback)" (its
    traceback and error record could not be written), or kept Running when its record could
    not be written either. Now it fails saying the disk is full, naming the folder."""
    from tests.harness.tmpfs import small_disk

    with small_disk(tmp_path / "disk") as disk:
        supervisor, job_dir = supervise(FILLS_THE_DISK, nodes=1, jobs=disk)
        assert supervisor.wait(60) == 0
        record = read_record(job_dir)
        assert record["status"] == "Failed", record
        assert record["reason"].startswith(f"the disk is full: no space left in {job_dir}"), record
        assert "node 0" in record["reason"] and record["failure"]["exit_code"] == 1
        assert record["nodes"][0]["state"] == "Failed"


# -- a node's process that cannot be started --


def not_started(supervisor: subprocess.Popen, job_dir: Path) -> str:
    """The supervisor ended by itself, the job Failed, no node started: its reason."""
    assert supervisor.wait(60) == 0  # before: an unhandled OSError, the job left Created
    record = read_record(job_dir)
    assert record["status"] == "Failed" and record["finished"], record
    assert [(n["state"], n["reason"]) for n in record["nodes"]] == [("Failed", "not started")] * 2
    return record["reason"]


def left_running(token: str) -> list[int]:
    """The processes whose command line has ``token``."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if token.encode() in cmdline.read_bytes():
                pids.append(int(cmdline.parent.name))
        except OSError:  # gone meanwhile
            pass
    return pids


def test_a_torch_job_whose_program_is_gone_fails_saying_what_and_why(supervise, tmp_path):
    """The recorded torchrun (or interpreter) was removed between submit and start."""
    gone = tmp_path / "venv" / "bin" / "torchrun"
    supervisor, job_dir = supervise(WAITS, command=[str(gone), "--nnodes=2", "train.py"])
    assert not_started(supervisor, job_dir) == (
        f"node 0 could not be started ({gone}): [Errno 2] No such file or directory: '{gone}'"
    )


def test_a_node_that_cannot_start_stops_the_nodes_started_before_it(supervise, tmp_path):
    """Node 0 starts; node 1's start fails (its cores, here, are none this machine has): node 0
    is stopped, and nothing of the job is left running."""
    token = f"kale-ext-test-{os.getpid()}-{tmp_path.name}"
    mine = min(os.sched_getaffinity(0))
    supervisor, job_dir = supervise(
        f"{WAITS}# {token}\n", resources={"cores": [[mine], [4095]], "threads": 1}
    )
    reason = not_started(supervisor, job_dir)
    assert reason.startswith(f"node 1 could not be started ({sys.executable}): "), reason
    assert left_running(token) == []


def test_a_job_whose_program_is_gone_before_a_restart_ends_saying_so(supervise, tmp_path):
    """Its first attempt fails and removes its program: the restart cannot start, and the job
    ends Failed with the first failure and why it was not restarted."""
    program = tmp_path / "train"
    program.write_text('#!/bin/sh\nrm -f "$0"\nexit 3\n')
    program.chmod(0o755)
    supervisor, job_dir = supervise("", nodes=1, command=[str(program)], max_restarts=1)
    assert supervisor.wait(60) == 0
    record = read_record(job_dir)
    assert record["status"] == "Failed", record
    assert record["reason"].endswith(
        f" (not restarted: node 0 could not be started ({program}): [Errno 2] No such file or "
        f"directory: '{program}')"
    ), record["reason"]
    assert "exited with code 3" in record["reason"]


def test_an_mpi_job_whose_mpirun_is_gone_fails_saying_what_and_why(supervise, tmp_path):
    """The recorded mpirun was removed between submit and start (needs no Open MPI here)."""
    gone = tmp_path / "openmpi" / "bin" / "mpirun"
    supervisor, job_dir = supervise(WAITS, mpirun=str(gone))
    assert not_started(supervisor, job_dir) == (
        f"mpirun could not be started ({gone}): [Errno 2] No such file or directory: '{gone}'"
    )


def test_an_attempt_with_no_port_is_not_started_and_names_why(monkeypatch, tmp_path):
    """No port to claim (every one taken) ends the attempt as a node that cannot start does:
    one NotStarted, which run() records as the job not started (or, after a first attempt, as
    the reason it was not restarted)."""
    from kale_ext.backends.local import supervisor
    from kale_ext.backends.local.processes import NotStarted
    from kale_ext.errors import BackendError

    def no_port(*_, **__):
        raise BackendError("no free port for the job's rendezvous")

    watched = []
    monkeypatch.setattr(supervisor, "claim_port", no_port)
    monkeypatch.setattr(supervisor, "watch", lambda *a: watched.append(a))
    with pytest.raises(NotStarted, match="^no free port for the job's rendezvous$"):
        supervisor._attempt(tmp_path, {}, {}, None, None, None)
    assert watched == []  # no node was started
