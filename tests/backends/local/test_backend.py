"""The local backend with real processes and real torch.distributed."""

import os
import shutil
import signal
import subprocess
import sys

import pytest

from kale_ext.backends.base import NotFound, Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.checkpoints import checkpoint_dir
from kale_ext.backends.local.queue import supervisor_args
from kale_ext.backends.submit import submit
from kale_ext.errors import BackendError, ConfigError
from tests.backends.local.waiting import exited, until
from tests.conftest import EXAMPLES, notebook, without_exit_barrier

RANKS = (
    ("import os\nimport torch.distributed as dist", ["imports"]),
    ("steps = 3\npause = 0.0", ["parameters"]),
    "import time\ndist.init_process_group('gloo')\nrank, world = dist.get_rank(), dist.get_world_size()\n"
    "print(f'pid {os.getpid()} rank {rank} of {world}', flush=True)\n"
    "for step in range(steps):\n    time.sleep(pause)\n    print(f'step {step}', flush=True)\n"
    "t = __import__('torch').tensor([rank + 1.0])\ndist.all_reduce(t)\nprint(f'sum {t.item():.0f}')\n"
    "dist.barrier()\ndist.destroy_process_group()",
)

#: Ranks, their logs and their processes need no torch in the workers (2-3 s of CPU each):
#: the rank is torchrun's RANK. Only the world's own tests (two nodes, processes per node) do.
RANK_STEPS = (
    ("import os", ["imports"]),
    ("steps = 3\npause = 0.0", ["parameters"]),
    "import time\nrank, world = os.environ['RANK'], os.environ['WORLD_SIZE']\n"
    "print(f'pid {os.getpid()} rank {rank} of {world}', flush=True)\n"
    "for step in range(steps):\n    time.sleep(pause)\n    print(f'step {step}', flush=True)\n"
    "print('done')",
)

#: A job's life (restart, follow, deadline, delete, ttl) needs no torch in its processes.
STEPS = (
    ("steps = 3\npause = 0.0", ["parameters"]),
    "import time\nfor step in range(steps):\n    time.sleep(pause)\n    print(f'step {step}', flush=True)\n"
    "print('done')",
)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs", capacity=4)  # 2 nodes × 2 processes on 2 CPUs


def run(backend, nb, options=None, timeout=120):
    name = submit(backend, nb, options).name
    info = backend.wait(name, timeout=timeout, interval=0.1)
    return name, info


def lines(backend, name, **kwargs):
    return [(line.rank, line.text) for line in backend.logs(name, **kwargs)]


def test_two_nodes_form_one_torch_distributed_world(backend):
    name, info = run(backend, notebook(*RANKS), {"nodes": 2})
    assert info.status is Status.COMPLETE, info.reason
    assert [n.state for n in info.nodes] == ["Succeeded", "Succeeded"]
    out = lines(backend, name)
    assert {(r, t.split(" ", 2)[2]) for r, t in out if t.startswith("pid")} == {
        (0, "rank 0 of 2"),
        (1, "rank 1 of 2"),
    }
    assert (0, "sum 3") in out and (1, "sum 3") in out  # all_reduce across the two nodes


def test_processes_per_node_get_global_ranks(backend):
    name, info = run(backend, notebook(*RANKS), {"nodes": 2, "procs_per_node": 2})
    assert info.status is Status.COMPLETE, info.reason
    out = lines(backend, name)
    assert {r for r, t in out if t.startswith("pid")} == {0, 1, 2, 3}
    assert (3, "sum 10") in out


def test_the_runtimes_choice_of_processes_runs_as_on_a_cluster(backend):
    """No procs_per_node asked: as the Trainer, a process per CPU asked (PET_NPROC_PER_NODE)."""
    seen = notebook(("import os", ["imports"]), "print('procs', os.environ['PET_NPROC_PER_NODE'], "
                    "os.environ['LOCAL_WORLD_SIZE'], flush=True)")  # fmt: skip
    name, info = run(backend, seen, {"cpu": "1500m"})  # 1.5 CPUs: 2 processes
    assert info.status is Status.COMPLETE, info.reason
    assert info.procs_per_node == 2 and "the runtime's choice: 2 CPUs" in info.procs_why
    assert sorted(lines(backend, name)) == [(0, "procs 2 2"), (1, "procs 2 2")]


def test_a_runtimes_choice_beyond_the_capacity_is_refused_saying_how_to_ask(backend):
    with pytest.raises(ConfigError) as refused:
        submit(backend, notebook(*STEPS), {"nodes": 2, "cpu": "4"})
    said = refused.value.message
    assert refused.value.field == "procs_per_node" and "local capacity of 4" in said
    assert "the runtime's choice: 4 CPUs per node" in said and "--procs-per-node" in said
    assert not list(backend.jobs_dir.glob("*/job.json"))  # nothing started


def test_example_trains_on_real_data(backend, tmp_path):
    example = tmp_path / "digits_ddp.ipynb"  # its outputs go beside it: not into the repository
    shutil.copy(EXAMPLES / "digits_ddp.ipynb", example)
    # two nodes, each torchrun and a rank importing torch (PyPI's CUDA build: ~2 s of CPU each)
    name, info = run(backend, example, {"nodes": 2, "parameters": {"epochs": 1}}, timeout=240)
    assert info.status is Status.COMPLETE, info.reason
    out = lines(backend, name)
    text = [t for _, t in out]
    assert (1, "1438 training and 359 test images, 2 process(es)") in out  # rank 1's line
    assert not any("[rank" in t for t in text)  # no prefix of its own: the logs carry the rank
    assert sum("test accuracy" in t for t in text) == 2
    assert info.provenance["kale-ext.io/notebook"].endswith("digits_ddp.ipynb")
    assert [p.name for p in (tmp_path / "outputs" / name).iterdir()] == ["digits_model.pt"]
    saved = checkpoint_dir(backend.jobs_dir, name)  # each epoch's, by rank 0, as torch.save
    assert [p.name for p in saved.glob("step-*")] == ["step-000000001.pt"]


def test_plain_python_job_and_its_listing(backend):
    name, info = run(
        backend, EXAMPLES / "plain_python.ipynb", {"nodes": 2, "parameters": {"steps": 100}}
    )
    assert info.status is Status.COMPLETE
    assert [j.name for j in backend.list_jobs()] == [name]
    assert [e.reason for e in backend.events(name)] == ["Created", "Started", "Complete"]
    backend.delete(name)
    assert backend.list_jobs() == []
    with pytest.raises(NotFound, match=f"no local job named '{name}'"):
        backend.delete(name)


def test_killed_rank_fails_the_job_and_leaves_no_orphans(backend):
    options = {
        "nodes": 2,
        "parameters": {"steps": 600, "pause": 0.05},
        "config": {"run_policy": {"active_deadline_seconds": 120}},  # bounds the log follow
    }
    name = submit(backend, notebook(*RANK_STEPS), options).name
    pids = {}
    for line in backend.logs(name, follow=True):  # each rank's pid, as soon as it prints it
        if line.text.startswith("pid"):
            pids[line.rank] = int(line.text.split()[1])
            if len(pids) == 2:
                break
    assert len(pids) == 2, lines(backend, name)
    os.kill(pids[1], signal.SIGKILL)
    info = backend.wait(name, timeout=60, interval=0.1)
    assert info.status is Status.FAILED
    assert "rank 1" in info.reason and "signal 9 (SIGKILL)" in info.reason, info.reason
    for rank, pid in pids.items():  # the surviving rank was stopped too
        assert exited(pid), f"rank {rank} (pid {pid}) still runs after its job failed"


def test_a_new_backend_instance_sees_a_running_job(backend, tmp_path):
    """What a Jupyter server restart looks like to the local backend: jobs live on disk."""
    name = submit(backend, notebook(*STEPS), {"parameters": {"steps": 20, "pause": 0.05}}).name
    again = LocalBackend(tmp_path / "jobs")
    assert again.get_job(name).status in (Status.CREATED, Status.RUNNING)
    info = again.wait(name, timeout=60, interval=0.1)
    assert info.status is Status.COMPLETE and info.finished
    assert (0, "step 19") in lines(again, name)


def test_two_jobs_at_once_do_not_clash(backend):
    """Each its own rendezvous port (torchrun's agents meet there, whatever the workers do)."""
    names = [submit(backend, notebook(*RANK_STEPS), {"nodes": 2}).name for _ in range(2)]
    for name in names:
        info = backend.wait(name, timeout=120, interval=0.1)
        assert info.status is Status.COMPLETE, info.reason


def test_logs_resume_from_offsets_without_duplicates(backend):
    name, _ = run(backend, notebook(*RANK_STEPS), {"nodes": 2, "parameters": {"steps": 5}})
    every = list(backend.logs(name))
    first = every[:4]
    offsets = {}
    for line in first:
        offsets[line.node] = line.offset
    rest = list(backend.logs(name, offsets=offsets))

    def order(line):
        return line.node, line.offset

    assert sorted(first + rest, key=order) == sorted(every, key=order)
    node1 = lines(backend, name, node=1)
    assert lines(backend, name, node=1, tail=2) == node1[-2:]  # the last lines as shown
    assert without_exit_barrier(t for _, t in node1)[-2:] == ["step 4", "done"]


def test_follow_streams_while_the_job_runs(backend):
    name = submit(backend, notebook(*STEPS), {"parameters": {"steps": 10, "pause": 0.1}}).name
    seen = [line.text for line in backend.logs(name, follow=True)]
    assert seen[-1] == "done" and "step 9" in seen
    assert backend.get_job(name).status is Status.COMPLETE


def test_caller_cwd_and_environment_are_untouched(backend):
    cwd, env = os.getcwd(), dict(os.environ)
    run(backend, notebook(*STEPS), {"env": {"EXTRA": "1"}})
    assert os.getcwd() == cwd and dict(os.environ) == env


def test_environment_reaches_every_node(backend):
    nb = notebook(
        "import os\nprint(os.environ['GREETING'], os.environ['POD_IP'], os.environ['PET_NODE_RANK'])"
    )
    config = {"env": [{"name": "GREETING", "value": "hi"},
                      {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]}  # fmt: skip
    name, info = run(backend, nb, {"nodes": 2, "config": config})
    assert info.status is Status.COMPLETE
    shown = without_exit_barrier(t for _, t in lines(backend, name))
    assert sorted(shown) == ["hi 127.0.0.1 0", "hi 127.0.0.1 1"]


@pytest.mark.parametrize(
    "options, field, message",
    [
        ({"gpu": 1}, "gpu", "this machine has no GPU"),
        # an env value only a cluster can resolve: tests/backends/local/test_jobenv.py
        ({"config": {"env_from": [{"secretRef": {"name": "s"}}]}}, "env_from", "only on a cluster"),
    ],
)
def test_what_cannot_run_here_is_refused_clearly(backend, options, field, message):
    with pytest.raises(ConfigError) as info:
        submit(backend, notebook(*RANKS), options)
    assert info.value.field == field and message in str(info.value)
    assert backend.list_jobs() == []


def test_gpu_request_runs_on_cpu_when_allowed(tmp_path):
    backend = LocalBackend(tmp_path / "jobs", allow_cpu_for_gpu=True)
    nb = notebook("import os\nprint(repr(os.environ.get('CUDA_VISIBLE_DEVICES')))")
    name, info = run(backend, nb, {"gpu": 1})
    assert info.status is Status.COMPLETE and lines(backend, name) == [(0, "''")]


def test_unknown_runtime_and_job(backend):
    with pytest.raises(ConfigError, match="runtime: runtime 'my-runtime' not found"):
        submit(backend, notebook(*RANKS), {"runtime": "my-runtime"})
    with pytest.raises(NotFound):
        backend.get_job("nope")
    with pytest.raises(NotFound):
        list(backend.logs("../etc"))


def test_unwritable_jobs_directory_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(BackendError, match="cannot create the job directory"):
        submit(LocalBackend(blocker / "jobs"), notebook(*RANKS))


def test_deadline_exceeded(backend):
    options = {
        "parameters": {"steps": 1000, "pause": 0.05},
        "config": {"run_policy": {"active_deadline_seconds": 2}},
    }
    name, info = run(backend, notebook(*STEPS), options)
    assert info.status is Status.FAILED and info.reason.startswith("DeadlineExceeded")


def test_delete_stops_a_running_job(backend):
    name = submit(backend, notebook(*STEPS), {"parameters": {"steps": 1000, "pause": 0.05}}).name
    until(lambda: backend.get_job(name).status is Status.RUNNING, f"job {name} to start")
    record = backend._record(name)
    backend.delete(name)
    with pytest.raises(NotFound):
        backend.get_job(name)
    assert exited(record["supervisor_pid"]), "the job's supervisor still runs after delete"
    for node in record["nodes"]:
        assert exited(node["pid"]), f"node {node['index']} still runs after delete"


def test_a_submit_killed_midway_leaves_nothing_that_waits_or_blocks(backend):
    """What a submit stopped midway (a killed server, command line or sweep driver) leaves:
    a folder without its record blocks its name, saying so, until deleted; a record whose
    supervisor never started reads Failed, saying why, instead of Created forever."""
    import json

    (backend.jobs_dir / "cut").mkdir(parents=True)
    (backend.jobs_dir / "cut" / "node-0.log").touch()
    with pytest.raises(BackendError, match="its submit did not finish: delete it"):
        submit(backend, notebook(*STEPS), {"name": "cut"})
    assert "cut" not in [j.name for j in backend.list_jobs()]
    assert backend.delete("cut") is None
    with pytest.raises(NotFound):
        backend.delete("cut")
    _, done = run(backend, notebook(*STEPS), {"name": "cut"})
    assert done.status is Status.COMPLETE

    record = json.loads((backend.jobs_dir / "cut" / "job.json").read_text())
    assert record["submitter"][0] == os.getpid()  # recorded until its supervisor starts
    for key in ("supervisor_pid", "supervisor_started", "started", "finished"):
        record.pop(key, None)
    (backend.jobs_dir / "never").mkdir()
    never = {**record, "name": "never", "status": "Created", "reason": None}
    (backend.jobs_dir / "never" / "job.json").write_text(json.dumps(never))
    assert backend.get_job("never").status is Status.CREATED  # its submitter (this one) runs
    never["submitter"] = [2**22 + 7, "gone"]
    (backend.jobs_dir / "never" / "job.json").write_text(json.dumps(never))
    info = backend.get_job("never")
    assert info.status is Status.FAILED
    assert info.reason.startswith("its submit was interrupted: the process submitting it stopped")
    # a supervisor that starts after that (its submitter stopped right after starting it) runs
    # nothing: the job stays as every view has shown it
    started = subprocess.run([sys.executable, *supervisor_args(backend.jobs_dir / "never")],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert started.returncode == 0, started.stderr
    assert backend.get_job("never").reason == info.reason
    assert not (backend.jobs_dir / "never" / "node-0").exists()
    backend.delete("never")


def test_a_submitter_killed_after_starting_the_supervisor_leaves_a_job_that_runs(backend):
    """Killed between starting the job's supervisor and recording it, the submitter leaves a
    job whose supervisor runs: no view calls it interrupted, and it runs to its end."""
    import json

    script = (
        "import json, os, sys\n"
        "from kale_ext.backends.local import backend as local\n"
        "from kale_ext.backends.submit import submit\n"
        "local.hand_over = lambda *args: os._exit(9)  # right after the supervisor started\n"
        "backend = local.LocalBackend(sys.argv[1], capacity=4)\n"
        "submit(backend, json.loads(sys.argv[2]), json.loads(sys.argv[3]))\n"
    )
    options = {"name": "orphan", "parameters": {"steps": 20, "pause": 0.05}}
    args = [str(backend.jobs_dir), json.dumps(notebook(*STEPS)), json.dumps(options)]
    killed = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert killed.returncode == 9, killed.stderr
    first = backend.get_job("orphan")  # at once: its supervisor may still be starting
    assert first.status is not Status.FAILED, first.reason
    done = backend.wait("orphan", timeout=120, interval=0.1)
    assert done.status is Status.COMPLETE, done.reason


def test_runtime_packages_are_this_environment(backend):
    import importlib.metadata

    packages = backend.runtime_packages("torch-distributed")
    assert packages["torch"].startswith(importlib.metadata.version("torch").split("+")[0])


def test_warns_when_an_import_is_neither_in_the_runtime_nor_installed(backend, monkeypatch):
    monkeypatch.setattr(backend, "runtime_packages", lambda name: {"numpy": "2"})
    nb = notebook(("import numpy\nimport sklearn", ["imports"]), "print(numpy.pi, sklearn)")
    spec = submit(backend, nb, {"packages": []}).spec
    assert spec.warnings == []  # sklearn is pinned from this environment: it will be installed
    spec.packages = []
    from kale_ext.backends.submit import missing_packages

    [warning] = missing_packages(backend.runtime_packages(spec.runtime.name), spec)
    assert "`sklearn` is imported" in warning and "scikit-learn" in warning
    backend.delete(spec.name)  # its run is not what this tests: stopped, not waited for


def test_ttl_after_finished_reports_once_then_deletes(backend):
    options = {"config": {"run_policy": {"ttl_seconds_after_finished": 0}}}
    name, info = run(backend, notebook(*STEPS), options)
    assert info.status is Status.COMPLETE  # the final state is seen once...
    assert backend.list_jobs() == []  # ...then the job is gone


def test_a_notebook_too_large_for_a_trainjob_runs_locally(backend, monkeypatch):
    """Issue 42: the TrainJob's embedded size limit refused a large notebook locally too. A
    local run embeds nothing: a notebook over the TrainJob's limit (and over one command-line
    argument: here made 4 KiB) runs."""
    from kale_ext.job import embed, trainjob

    monkeypatch.setattr(embed, "MAX_EMBEDDED_CODE", 1024)
    monkeypatch.setattr(trainjob, "MAX_ARGUMENT", 4096)
    nb = notebook(*[f"total = {i}" for i in range(300)], "print('total', total)")
    name, info = run(backend, nb)
    assert info.status == Status.COMPLETE, info.reason
    assert lines(backend, name)[-1] == (0, "total 299")
