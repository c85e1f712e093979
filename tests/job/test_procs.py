"""Processes per node: the Trainer v2.3.0 torch and MPI plugins' rules (job/procs.py), the
TrainJob's numProcPerNode only when asked, and what every view says the runtime will choose."""

import dataclasses
from dataclasses import dataclass

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job import limits, limits_held
from kale_ext.job.preview import render
from kale_ext.job.procs import cpu_count, gpu_count, mpi_procs, procs_per_node
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_procs
from tests.conftest import notebook
from tests.harness.crd import runtime_manifest

NB = notebook("print('hello')")
GPU_RUNTIME = {"requests": {}, "limits": {"nvidia.com/gpu": "2"}}


@dataclass
class Case:
    name: str
    job: dict | None  # the TrainJob's resourcesPerNode
    runtime: dict | None  # the runtime's node container's resources
    count: int
    why: str  # in the reason shown
    asked: int | None = None
    launcher: str = "torchrun"


CASES = [
    Case("nothing stated", None, None, 1, "the runtime's choice: 1, no CPUs or GPUs"),
    Case("cpu request", {"requests": {"cpu": "4"}, "limits": {"cpu": "8"}}, None, 4,
         "4 CPUs per node"),
    Case("cpu limit when no request", {"limits": {"cpu": "3"}}, None, 3, "3 CPUs"),
    Case("cpu request zero: the limit", {"requests": {"cpu": "0"}, "limits": {"cpu": "2"}}, None,
         2, "2 CPUs"),
    Case("fractional cpu rounds up", {"requests": {"cpu": "500m"}}, None, 1, "1 CPU"),
    Case("2.5 cpus are 3", {"requests": {"cpu": "2.5"}}, None, 3, "3 CPUs"),
    Case("gpu request before limit", {"requests": {"nvidia.com/gpu": "1"},
                                      "limits": {"nvidia.com/gpu": "4", "cpu": "16"}}, None, 1,
         "1 GPU per node"),
    Case("gpu limit over cpus", {"requests": {"cpu": "8"}, "limits": {"nvidia.com/gpu": "2"}},
         None, 2, "2 GPUs per node"),
    Case("any resource named gpu", {"limits": {"amd.com/gpu": "3"}}, None, 3, "3 GPUs"),
    Case("mig is no gpu to the rule", {"limits": {"nvidia.com/mig-1g.5gb": "1", "cpu": "2"}},
         None, 2, "2 CPUs"),
    Case("the runtime's gpus", None, GPU_RUNTIME, 2, "2 GPUs per node (from the runtime's"),
    Case("the runtime's cpus", None, {"requests": {"cpu": "6"}, "limits": {}}, 6,
         "6 CPUs per node (from the runtime's"),
    Case("v2.3.0 bug: resourcesPerNode hides the runtime's gpus",
         {"requests": {"memory": "4Gi", "cpu": "2"}}, GPU_RUNTIME, 2,
         "the runtime's 2 GPUs are not counted"),
    Case("asked wins", {"requests": {"cpu": "8"}}, GPU_RUNTIME, 3, "asked", asked=3),
    Case("python launcher: one per node", {"requests": {"cpu": "8"}}, None, 1,
         "one process per node", launcher="python"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_trainers_rule(case):
    procs = procs_per_node(case.launcher, case.asked, case.job, case.runtime)
    assert procs.count == case.count
    assert case.why in procs.why
    assert procs.asked == (case.asked is not None)


def test_counts_round_up_as_quantity_value():
    assert cpu_count({"requests": {"cpu": "100m"}}) == 1
    assert cpu_count({"limits": {"cpu": "1.01"}}) == 2
    assert cpu_count(None) == 0
    assert gpu_count({"limits": {"nvidia.com/gpu": "0.5"}}) == 1
    assert gpu_count({"requests": {"nvidia.com/GPU": "2"}}) == 2


def spec(options=None, runtime=None):
    return build_job_spec(compile_notebook(NB), options, runtime)


@pytest.mark.parametrize(
    "options, written, count",
    [({}, None, 1), ({"cpu": "4"}, None, 4), ({"gpu": 2, "cpu": 8}, None, 2),
     ({"procs_per_node": 1}, 1, 1), ({"procs_per_node": 2, "cpu": 8}, 2, 2)],
)  # fmt: skip
def test_num_proc_per_node_only_when_asked(options, written, count):
    shown = render(spec(options))
    assert shown.trainjob["spec"]["trainer"].get("numProcPerNode") == written
    assert shown.spec.procs_per_node == count
    assert trainjob_procs(shown.trainjob).count == count  # the status views read it back


def test_preview_says_what_the_runtime_will_choose():
    shown = render(spec({"nodes": 2, "cpu": "4"}))
    assert shown.shape == "2 nodes × 4 processes (the runtime's choice: 4 CPUs per node)"
    assert any(line.endswith(shown.shape) for line in shown.summary())
    asked = render(spec({"nodes": 2, "cpu": "4", "procs_per_node": 1}))
    assert asked.shape == "2 nodes × 1 process (asked)"


def test_a_runtime_with_gpus_of_its_own():
    manifest = runtime_manifest("torch-distributed")
    pod = manifest["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    pod["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 4}}
    runtime = Runtime.from_manifest(manifest)
    assert runtime.resources == {"requests": {}, "limits": {"nvidia.com/gpu": "4"}}
    shown = render(spec({}, runtime))
    assert (
        shown.spec.procs_per_node == 4 and "numProcPerNode" not in shown.trainjob["spec"]["trainer"]
    )
    assert trainjob_procs(shown.trainjob).count == 4  # the runtime's resources recorded
    hidden = render(spec({"memory": "1Gi"}, runtime))  # Trainer v2.3.0 then counts CPUs
    assert hidden.spec.procs_per_node == 1 and "not counted" in hidden.spec.procs.why


def test_a_non_torch_runtime_starts_one_per_node():
    shown = render(spec({"cpu": "4"}, Runtime(name="jax-distributed", framework="jax")))
    assert shown.spec.procs_per_node == 1
    assert "numProcPerNode" not in shown.trainjob["spec"]["trainer"]
    assert trainjob_procs(shown.trainjob).count == 1


def test_a_choice_beyond_the_site_limit_is_refused_saying_how_to_ask(monkeypatch):
    limits_held.release()  # a server's limits another test of this process left held
    limits.configure({"procs_per_node": 4})
    try:
        with pytest.raises(ConfigError) as e:
            spec({"cpu": "8"})
        assert e.value.field == "procs_per_node"
        assert "the runtime's choice: 8 CPUs per node" in e.value.message
        assert "--procs-per-node" in e.value.message
        assert spec({"cpu": "8", "procs_per_node": 4}).procs_per_node == 4
    finally:
        limits_held.release()


def test_a_foreign_trainjob_without_resources():
    tj = {"metadata": {"name": "x"}, "spec": {"trainer": {"numNodes": 2}}}
    procs = trainjob_procs(tj)
    assert procs.count == 1 and "not known here" in procs.why


def mpi_runtime(**changes) -> Runtime:
    """The official deepspeed-distributed runtime (mlPolicy.mpi.numProcPerNode 1), changed."""
    official = Runtime.from_manifest(runtime_manifest("deepspeed-distributed"))
    return dataclasses.replace(official, **changes)


@pytest.mark.parametrize(
    "runtime, asked, resources, count, why",
    [
        (mpi_runtime(), None, None, 1, "its MPI numProcPerNode, 1"),
        (mpi_runtime(), None, {"requests": {"cpu": "8"}}, 1, "its MPI numProcPerNode, 1"),  # no CPUs
        (mpi_runtime(), None, {"limits": {"nvidia.com/gpu": "4"}}, 4, "4 GPUs per node"),
        (mpi_runtime(), None, {"limits": {"nvidia.com/gpu": "1"}}, 1, "its MPI numProcPerNode, 1"),
        (mpi_runtime(resources={"requests": {}, "limits": {"nvidia.com/gpu": "2"}}), None, None, 2,
         "2 GPUs per node (from the runtime's container)"),
        (mpi_runtime(mpi_procs_per_node=3), None, {"limits": {"nvidia.com/gpu": "4"}}, 3,
         "its MPI numProcPerNode, 3"),  # the GPUs count only when the runtime says 1
        (mpi_runtime(), 2, {"limits": {"nvidia.com/gpu": "4"}}, 2, "asked"),
    ],
)  # fmt: skip
def test_processes_per_node_are_the_mpi_plugins_slots(runtime, asked, resources, count, why):
    procs = mpi_procs(runtime.mpi_procs_per_node, asked, resources, runtime.resources)
    assert procs.count == count and why in procs.why
    assert procs.asked == (asked is not None)
