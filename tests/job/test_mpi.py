"""MPI runtimes (kale_ext/job/mpi.py): the launcher's command, the processes per node asked
for, the jobs kale_ext's patch reaches, the published runtimes. The processes per node the
Trainer's MPI plugin starts are test_procs.py's; that the whole TrainJob is the Kubeflow SDK's own
is tests/compile/test_sdk_parity.py's."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from kale_ext.compile import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job import mpi
from kale_ext.job.published_runtimes import published_runtime
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import BOOTSTRAP, launcher_of, source_of, trainjob_dict, trainjob_procs
from tests.conftest import notebook
from tests.harness.runtimes import runtime_manifest

NB = notebook("import os\nprint('rank', os.environ.get('OMPI_COMM_WORLD_RANK'))")


def official(name: str = "deepspeed-distributed", **changes) -> Runtime:
    return dataclasses.replace(Runtime.from_manifest(runtime_manifest(name)), **changes)


@pytest.mark.parametrize("name", ["deepspeed-distributed", "mlx-distributed"])
def test_the_published_runtimes_are_the_official_ones(name):
    published = published_runtime(name, "no cluster is configured")
    assert dataclasses.replace(published, published="") == official(name)
    assert published.published and not official(name).published
    assert published.mpi and published.trainer_job == "launcher"


def test_the_launcher_runs_mpirun_over_the_hostfile_and_each_process_the_function():
    spec = build_job_spec(compile_notebook(NB), {"nodes": 3}, official())
    trainer = trainjob_dict(spec)["spec"]["trainer"]
    command = trainer["command"]
    assert command[:3] == ["mpirun", "--hostfile", "/etc/mpi/hostfile"]
    assert mpi.unwrap(command)[:3] == ["python", "-c", BOOTSTRAP]
    assert json.loads(command[6])["home"] == "/home/mpiuser"  # the SDK's DEFAULT_MPI_USER_HOME
    assert source_of(command) == spec.job.source and launcher_of(command) == "python"
    assert trainer["numNodes"] == 3 and "numProcPerNode" not in trainer  # the runtime's choice
    assert spec.warnings == []  # not "once per node": mpirun starts the slots per node


def test_a_job_on_a_published_runtime_says_where_its_facts_came_from():
    """The Local backend previews an MPI runtime's job from the Trainer's published runtime
    when this machine has no mpirun (a local run of it is refused then); the preview says so."""
    runtime = published_runtime("mlx-distributed", "the local backend has no cluster to ask")
    spec = build_job_spec(compile_notebook(NB), {}, runtime)
    assert spec.warnings == [
        "runtime mlx-distributed: its facts are Kubeflow Trainer v2.3.0's published runtimes, "
        "not the cluster's (the local backend has no cluster to ask)"
    ]


def test_a_command_without_mpirun_is_left_as_it_is():
    spec = build_job_spec(compile_notebook(NB), {}, Runtime(name="torch-distributed",
                                                           framework="torch"))  # fmt: skip
    command = trainjob_dict(spec)["spec"]["trainer"]["command"]
    assert command[:3] == ["python", "-c", BOOTSTRAP] and mpi.unwrap(command) == command
    assert "home" not in json.loads(command[3])


def test_asked_processes_per_node_reach_the_trainjob():
    """Unlike a python-launched runtime (one process per node), mpirun starts the hostfile's
    slots: more processes per node are the TrainJob's numProcPerNode."""
    spec = build_job_spec(compile_notebook(NB), {"procs_per_node": 2, "nodes": 2}, official())
    assert trainjob_dict(spec)["spec"]["trainer"]["numProcPerNode"] == 2
    assert spec.shape == "2 nodes × 2 processes (asked)"
    jax = Runtime(name="jax-distributed", framework="jax")
    with pytest.raises(ConfigError, match="starts one process per node"):
        build_job_spec(compile_notebook(NB), {"procs_per_node": 2}, jax)


def test_an_mpi_runtimes_patch_reaches_the_launcher_and_the_nodes():
    spec = build_job_spec(compile_notebook(NB), {"config": {"node_selector": {"pool": "cpu"}}},
                          official("mlx-distributed"))  # fmt: skip
    [patch] = trainjob_dict(spec)["spec"]["runtimePatches"]
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["launcher", "node"]
    assert jobs[0]["template"] == jobs[1]["template"]
    assert mpi.patched_jobs(Runtime(name="torch-distributed", framework="torch")) == ("node",)


def test_each_process_writes_its_files_under_the_mpi_users_home(tmp_path):
    """The bootstrap every process runs puts the function's module under the plan's home (the
    SDK writes its file to /home/mpiuser); a home that is not there leaves the default."""
    job = compile_notebook(notebook("print('ran here')"))
    command = mpi.unwrap(trainjob_dict(build_job_spec(job, {}, official()))["spec"]["trainer"]
                         ["command"])  # fmt: skip
    (tmp_path / "home").mkdir()
    for home, expect_there in ((tmp_path / "absent", False), (tmp_path / "home", True)):
        plan = {**json.loads(command[3]), "home": str(home)}
        out = subprocess.run([sys.executable, "-c", BOOTSTRAP, json.dumps(plan), command[4]],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        assert out.returncode == 0 and "ran here" in out.stdout, out.stderr
        written = list((tmp_path / "home").glob(f"kale_ext-*/{job.module_filename}"))
        assert bool(written) == expect_there


@pytest.mark.parametrize(
    "step, index, mpi_job, node",
    [("launcher", 0, True, 0), ("node", 0, True, 1), ("node", 2, True, 3),
     ("node", 0, False, 0), ("node", 2, False, 2),
     ("launcher", 0, False, None), ("launcher", 1, True, None),
     ("dataset-initializer", 0, True, None)],
)  # fmt: skip
def test_which_node_a_pod_is_as_the_sdk_counts_them(step, index, mpi_job, node):
    assert mpi.node_of(step, index, mpi_job) == node
    if node is not None:
        assert mpi.pod_of(node, mpi_job) == (step, index)


def test_an_mpi_job_is_one_mpirun_starts():
    spec = build_job_spec(compile_notebook(NB), {"nodes": 2}, official())
    assert mpi.launched(trainjob_dict(spec)["spec"]["trainer"]["command"])
    assert not mpi.launched(["torchrun", "train.py"]) and not mpi.launched(None)


@pytest.mark.parametrize("slots", [1, 3])
def test_a_submitted_mpi_jobs_processes_per_node_are_its_runtimes_slots(slots):
    """What the status views say (trainjob_procs): the runtime's mpi.numProcPerNode, recorded
    at submit, not the 1 process per node of a python launch."""
    spec = build_job_spec(compile_notebook(NB), {"nodes": 2}, official(mpi_procs_per_node=slots))
    procs = trainjob_procs(trainjob_dict(spec))
    assert procs.count == slots and f"its MPI numProcPerNode, {slots}" in procs.why


def test_an_mpi_job_kale_ext_did_not_make_has_slots_not_known_here():
    sdk_made = {"spec": {"trainer": {"numNodes": 2, "command": ["mpirun", "bash", "-c", "x"]}}}
    procs = trainjob_procs(sdk_made)
    assert procs.count == 1 and "its MPI numProcPerNode, not known here" in procs.why
