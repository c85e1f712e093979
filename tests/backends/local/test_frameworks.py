"""A non-torch runtime on the Local backend: each node gets the variables the runtime's own
Trainer plugin gives it on a cluster (kale_ext/job/framework_env.py), and no PET_*."""

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from tests.conftest import notebook


def printing(*names: str):
    listed = ", ".join(repr(n) for n in (*names, "PET_NODE_RANK"))
    return (
        ("import os", ["imports"]),
        f"for name in ({listed}):\n    print(name, os.environ.get(name), flush=True)",
    )


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


def environment(backend, runtime: str, names: tuple[str, ...]) -> dict[int, dict[str, str]]:
    job = submit(backend, notebook(*printing(*names)), {"runtime": runtime, "nodes": 2})
    assert any("runs once per node" in w for w in job.warnings)
    info = backend.wait(job.name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    seen: dict[int, dict[str, str]] = {0: {}, 1: {}}
    for line in backend.logs(job.name):
        name, _, value = line.text.partition(" ")
        seen[line.node][name] = value
    return seen


def test_xgboost_nodes_get_the_dmlc_settings(backend):
    names = ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
    seen = environment(backend, "xgboost-distributed", names)
    assert [seen[k]["DMLC_TASK_ID"] for k in (0, 1)] == ["0", "1"]
    for k in (0, 1):
        assert seen[k]["DMLC_NUM_WORKER"] == "2"
        assert seen[k]["DMLC_TRACKER_URI"] == "127.0.0.1"  # node 0, as the cluster's DNS name
        assert seen[k]["DMLC_TRACKER_PORT"].isdigit()
        assert seen[k]["PET_NODE_RANK"] == "None"  # a torch plugin's setting: not given
    assert seen[0]["DMLC_TRACKER_PORT"] == seen[1]["DMLC_TRACKER_PORT"]


def test_jax_nodes_get_the_coordinator(backend):
    names = ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS")
    seen = environment(backend, "jax-distributed", names)
    assert [seen[k]["JAX_PROCESS_ID"] for k in (0, 1)] == ["0", "1"]
    assert {seen[k]["JAX_NUM_PROCESSES"] for k in (0, 1)} == {"2"}
    host, port = seen[1]["JAX_COORDINATOR_ADDRESS"].split(":")
    assert host == "127.0.0.1" and port.isdigit()


def test_runtimes_offered_locally(backend):
    assert [r.name for r in backend.list_runtimes()] == [
        "torch-distributed",
        "xgboost-distributed",
        "jax-distributed",
    ]


@pytest.mark.parametrize(
    ("runtime", "name"),
    [("xgboost-distributed", "DMLC_NUM_WORKER"), ("jax-distributed", "JAX_PROCESS_ID")],
)
def test_a_job_may_not_set_what_the_runtime_sets(backend, runtime, name):
    """The Trainer's webhook refuses a TrainJob setting its plugin's variables: refused here
    first, naming the variable, and nothing starts."""
    from kale_ext.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        submit(backend, notebook("print(1)"), {"runtime": runtime, "env": {name: "3"}})
    assert refused.value.field == "env" and name in refused.value.message
    assert backend.list_jobs() == []
