"""CPU and memory per node on the Local backend: real nodes see their cores, thread counts and
memory limit."""

import os

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import preview, submit
from tests.conftest import notebook

SEES = (
    ("import os", ["imports"]),
    "omp, mkl = os.environ.get('OMP_NUM_THREADS'), os.environ.get('MKL_NUM_THREADS')\n"
    "print(f'cores {sorted(os.sched_getaffinity(0))} omp {omp} mkl {mkl}', flush=True)",  # one write
)

PRIORITY = (
    ("want = 0", ["parameters"]),
    ("import os\nimport time", ["imports"]),
    # a worker torchrun starts leads a session (a group) of its own, lowered by the supervisor
    # within a second of its start: wait for it (at most 60 s), then say what this process got
    "where = '/proc/self/autogroup'\n"
    "group = lambda: int(open(where).read().split()[-1]) if os.path.exists(where) else None\n"
    "until = time.monotonic() + 60\n"
    "while want and group() not in (None, want) and time.monotonic() < until:\n"
    "    time.sleep(0.05)\n"
    "print(f'priority nice {os.nice(0)} group {group()}', flush=True)",
)

GROWS = (
    "import time\nblocks = []\nfor i in range(200):\n"
    "    blocks.append(bytearray(16 * 2**20))\n    blocks[-1][::4096] = b'x' * len(blocks[-1][::4096])\n"
    "    print(f'holding {16 * (i + 1)} MiB', flush=True)\n    time.sleep(0.05)\n",
)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


def seen(backend, name) -> dict[int, str]:
    return {line.node: line.text for line in backend.logs(name) if line.text.startswith("cores")}


@pytest.mark.parametrize("nice", [7, 0])
def test_nodes_and_their_workers_run_below_the_servers_priority_as_set(tmp_path, nice):
    """The defaults' local_nice (10 unless set): every process of the job runs that far below
    the server and, with Linux's autogroups, so does every session it leads (each node's, and
    each of torchrun's workers'); 0 leaves them as they are."""
    backend = LocalBackend(tmp_path / "jobs", nice=nice)
    job = submit(backend, notebook(*PRIORITY), {"nodes": 2, "parameters": {"want": nice}})
    assert backend.wait(job.name, timeout=120, interval=0.1).status is Status.COMPLETE
    lines = [line.text for line in backend.logs(job.name) if line.text.startswith("priority")]
    groups = os.path.exists("/proc/self/autogroup")
    assert len(lines) == 2
    for line in lines:
        _, _, seen_nice, _, seen_group = line.split()
        assert int(seen_nice) == min(19, os.nice(0) + nice), line
        assert seen_group == (str(nice) if groups else "None"), line  # a new group starts at 0


def test_a_local_backend_runs_jobs_ten_below_the_server_unless_set(tmp_path):
    assert LocalBackend(tmp_path).nice == 10


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores for disjoint sets")
def test_two_nodes_with_one_cpu_each_get_their_own_core_and_one_thread(backend):
    job = submit(backend, notebook(*SEES), {"nodes": 2, "cpu": "1"})
    info = backend.wait(job.name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    lines = seen(backend, job.name)
    cores = [eval(lines[k].split(" omp")[0].removeprefix("cores ")) for k in (0, 1)]
    assert [len(c) for c in cores] == [1, 1] and not set(cores[0]) & set(cores[1])
    assert all(line.endswith("omp 1 mkl 1") for line in lines.values())


def test_fractional_cpu_is_rounded_up_and_said(backend):
    job = submit(backend, notebook(*SEES), {"nodes": 1, "cpu": "500m"})
    assert any("500m is rounded up to 1 whole core" in w for w in job.warnings)
    assert backend.wait(job.name, timeout=120, interval=0.1).status is Status.COMPLETE
    assert seen(backend, job.name)[0].endswith("omp 1 mkl 1")


def test_more_cpu_than_the_machine_has_is_a_warning_and_nodes_share(backend):
    many = str(len(os.sched_getaffinity(0)) + 1)
    job = submit(backend, notebook(*SEES), {"nodes": 2, "cpu": many, "procs_per_node": 1})
    assert any("every node shares all" in w for w in job.warnings), job.warnings
    assert backend.wait(job.name, timeout=120, interval=0.1).status is Status.COMPLETE
    everything = str(sorted(os.sched_getaffinity(0)))
    assert all(everything in line for line in seen(backend, job.name).values())


def test_the_jobs_own_thread_setting_wins(backend):
    job = submit(backend, notebook(*SEES), {"cpu": "1", "env": {"OMP_NUM_THREADS": "3"}})
    assert backend.wait(job.name, timeout=120, interval=0.1).status is Status.COMPLETE
    assert seen(backend, job.name)[0].endswith("omp 3 mkl 1")


def test_a_node_over_its_memory_limit_is_stopped_with_that_reason(backend):
    # the limit counts every process of the node: torchrun itself holds ~500 MiB once it has
    # imported PyPI's CUDA build of torch, before the notebook's first line
    job = submit(backend, notebook(*GROWS), {"nodes": 2, "memory": "1Gi"})
    info = backend.wait(job.name, timeout=120, interval=0.1)
    assert info.status is Status.FAILED
    assert "killed: over its 1Gi memory limit (local)" in info.reason
    assert info.failure.signal == "killed: over its 1Gi memory limit (local)"
    failed = [n for n in info.nodes if n.reason and "memory limit" in n.reason]
    assert len(failed) == 1
    held = [line.text for line in backend.logs(job.name) if line.text.startswith("holding")]
    assert held and "holding 3200 MiB" not in held  # it ran, and was stopped on the way


@pytest.mark.parametrize(
    "options, cpu, memory",
    [
        ({}, "not limited (no CPU asked)", "not limited (no memory asked)"),
        ({"cpu": "1", "memory": "2Gi"}, "1 core per node", "2Gi per node: a node over it is"),
        ({"cpu": "1500m"}, "2 cores per node (1500m rounded up)", "not limited"),
    ],
)
def test_dry_run_says_what_a_local_run_does(backend, options, cpu, memory):
    shown = preview(backend, notebook(*SEES), options)
    assert shown.local_resources()["cpu"].startswith(cpu)
    assert shown.local_resources()["memory"].startswith(memory)
    local = [line for line in shown.summary() if line.startswith("local")]
    assert len(local) == 2 and cpu in local[0] and memory in local[1]


def test_an_mpi_jobs_memory_limit_is_every_nodes_over_its_one_mpirun():
    """An MPI job runs every node's ranks under one mpirun (mpirun.py): the watchdog holds that
    tree to the nodes' limits together, not to one node's."""
    from kale_ext.backends.local.resources import MemoryWatch

    resources = {"memory_bytes": 1 << 30, "memory": "1Gi"}
    assert MemoryWatch({"resources": resources, "num_nodes": 3}).limit == 1 << 30
    mpi = MemoryWatch({"resources": resources, "num_nodes": 3, "mpirun": "/usr/bin/mpirun"})
    assert mpi.limit == 3 << 30
