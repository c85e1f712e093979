"""Item 7: nothing of a local job outlives it. Killing its supervisor with SIGKILL ends every node
and every torchrun worker, and the job then reads Failed, saying why; a job's temporary folders
(the generated module among them) go when it ends."""

from __future__ import annotations

import os
import signal

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.processes import descendants
from kale_ext.backends.local.records import read_record
from kale_ext.backends.submit import submit
from tests.backends.local.waiting import exited, until
from tests.conftest import notebook

#: Each rank says its pid and where its module is, then trains until stopped.
TRAINS = notebook(
    ("import os, sys, time\nimport torch.distributed as dist", ["imports"]),
    "dist.init_process_group('gloo')\n"
    "print('pid', os.getpid(), sys.argv[0], flush=True)\n"
    "while True:\n    dist.barrier()\n    time.sleep(0.05)\n",
)


@pytest.fixture
def backend(tmp_path, monkeypatch):
    """A local backend whose processes' own temporary folder (TMPDIR) is empty and watched."""
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    backend = LocalBackend(tmp_path / "jobs", capacity=4)  # 2 nodes × 2 processes on 2 CPUs
    yield backend
    for info in backend.list_jobs():
        backend.delete(info.name)


def ranks_started(backend, name: str, count: int) -> dict[int, tuple[int, str]]:
    """Each rank's pid and module path, once all ``count`` ranks have printed them."""
    found = {}
    for line in backend.logs(name, follow=True):
        if line.text.startswith("pid "):
            _, pid, module = line.text.split(" ", 2)
            found[line.rank] = int(pid), module
            if len(found) == count:
                return found
    pytest.fail(f"the job ended before its {count} ranks started: {backend.get_job(name)}")


def test_7_killing_the_supervisor_ends_every_node_and_worker(backend, tmp_path):
    options = {"nodes": 2, "procs_per_node": 2, "config": {"run_policy": {"active_deadline_seconds": 300}}}  # fmt: skip
    name = submit(backend, TRAINS, options).name
    ranks = ranks_started(backend, name, 4)
    job_dir = tmp_path / "jobs" / name
    supervisor = read_record(job_dir)["supervisor_pid"]
    tree = descendants({supervisor})  # two torchrun agents and their four workers
    assert {pid for pid, _ in ranks.values()} <= set(tree) and len(tree) >= 6, tree
    for _, module in ranks.values():  # the generated module is in the job's folder
        assert module.startswith(str(job_dir / "tmp")), module

    os.kill(supervisor, signal.SIGKILL)
    for pid in tree:  # nobody else intervenes: the processes end by themselves
        assert exited(pid, timeout=60), f"process {pid} outlived the job's supervisor"

    again = LocalBackend(tmp_path / "jobs")  # as a restarted server reads the job
    info = again.get_job(name)
    assert info.status is Status.FAILED
    assert info.reason.startswith("the job's supervisor stopped unexpectedly"), info.reason
    assert [n.state for n in info.nodes] == ["Failed", "Failed"]
    assert not (job_dir / "tmp").exists()
    assert list((tmp_path / "system-tmp").iterdir()) == []


def test_7_a_job_leaves_no_temporary_folder_behind(backend, tmp_path):
    nb = notebook("import sys, tempfile\nprint(sys.argv[0], tempfile.mkdtemp(prefix='mine-'))")
    name = submit(backend, nb, {"nodes": 2}).name
    info = backend.wait(name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    job_dir = tmp_path / "jobs" / name
    said = {line.node: line.text.split() for line in backend.logs(name) if "mine-" in line.text}
    assert sorted(said) == [0, 1], said
    for node, (module, own) in said.items():  # the module, the user's own folder: the job's
        assert module.startswith(str(job_dir / "tmp" / f"node-{node}" / "kale_ext-"))
        assert own.startswith(str(job_dir / "tmp" / f"node-{node}" / "mine-"))
    until(lambda: not (job_dir / "tmp").exists(), "the job's temporary folder to go")
    assert list((tmp_path / "system-tmp").iterdir()) == []


def test_28_7_compile_processes_end_when_the_server_is_killed(tmp_path):
    """Issue 28, case 7: kill -9 of the Jupyter server ends its compile processes (and the fork
    server they came from); they stayed, about 528 MB, for good."""
    import json

    from tests.harness.server import JupyterProcess

    root = tmp_path / "root"
    root.mkdir()
    (root / "nb.ipynb").write_text(json.dumps(notebook("print('hi')")))
    server = JupyterProcess(root, tmp_path / "jobs", tmp_path / "home")
    try:
        status, _ = server.request("POST", "compile", {"path": "nb.ipynb"}, timeout=180)
        assert status == 200
        helpers = descendants({server.proc.pid})  # the compile processes
        assert len(helpers) >= 2, helpers
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(30)
        for pid in helpers:
            assert exited(pid, timeout=60), f"process {pid} outlived the server"
    finally:
        server.stop()
