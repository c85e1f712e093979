"""A non-torch runtime on the Local backend: each node gets the variables the runtime's own
Trainer plugin gives it on a cluster (kale_ext/job/framework_env.py), and no PET_*."""

from dataclasses import dataclass

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from kale_ext.job.runtimes import Runtime
from tests.conftest import notebook
from tests.harness.kube_fixtures import kube, kubeconfig  # noqa: F401 (fixtures)
from tests.harness.runtimes import runtime_manifest
from tests.ipython.conftest import shell  # noqa: F401 (fixture: one IPython shell)

pytest.register_assert_rewrite("tests.harness.server")
pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


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
        "deepspeed-distributed",  # under mpirun (test_mpirun.py)
        "mlx-distributed",
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


#: The Kubeflow SDK's XGBoost example, as its users write it: the function reads the runtime's
#: DMLC_* settings, node 0 runs XGBoost's own RabitTracker on DMLC_TRACKER_PORT, and every
#: worker trains on its shard of scikit-learn's built-in data (no download).
TRAIN_XGBOOST = """\
def train_xgboost():
    import os

    import numpy as np
    import xgboost as xgb
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from xgboost import collective as coll
    from xgboost.tracker import RabitTracker

    rank = int(os.environ["DMLC_TASK_ID"])
    world_size = int(os.environ["DMLC_NUM_WORKER"])
    tracker_uri = os.environ["DMLC_TRACKER_URI"]
    tracker_port = int(os.environ["DMLC_TRACKER_PORT"])

    tracker = None
    if rank == 0:
        tracker = RabitTracker(host_ip="0.0.0.0", n_workers=world_size, port=tracker_port)
        tracker.start()

    with coll.CommunicatorContext(
        dmlc_tracker_uri=tracker_uri,
        dmlc_tracker_port=tracker_port,
        dmlc_task_id=str(rank),
    ):
        X, y = load_breast_cancer(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
        shard = np.arange(len(X_train)) % world_size == rank
        dtrain = xgb.DMatrix(X_train[shard], label=y_train[shard])
        dtest = xgb.DMatrix(X_test, label=y_test)
        params = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3, "nthread": 1}
        booster = xgb.train(params, dtrain, num_boost_round=20)
        accuracy = float(((booster.predict(dtest) > 0.5) == y_test).mean())
        print(f"worker {coll.get_rank()} of {coll.get_world_size()}: accuracy {accuracy:.3f}")

    if tracker is not None:
        tracker.wait_for()
"""
SDK_DRIVER = """\
from kubeflow.trainer import CustomTrainer, TrainerClient

client = TrainerClient()
job_id = client.train(
    trainer=CustomTrainer(func=train_xgboost, num_nodes=2),
    runtime="xgboost-distributed",
)
client.wait_for_job_status(job_id)
"""


def test_the_sdk_xgboost_example_trains_on_two_nodes(backend):
    """The notebook as the SDK's users write it (no tag, no option: its train() call names the
    function, the runtime and the nodes). XGBoost's tracker binds DMLC_TRACKER_PORT itself
    (without SO_REUSEADDR): the port is claimed for the job but left unbound (ports.py)."""
    job = submit(backend, notebook(TRAIN_XGBOOST, SDK_DRIVER))
    assert job.spec.runtime.name == "xgboost-distributed" and job.spec.nodes == 2
    info = backend.wait(job.name, timeout=180, interval=0.1)
    logs = [(line.node, line.text) for line in backend.logs(job.name)]
    assert info.status is Status.COMPLETE, (info.reason, logs[-20:])
    accuracy = {node: float(text.rsplit(" ", 1)[1]) for node, text in logs if ": accuracy " in text}
    assert sorted(accuracy) == [0, 1]  # both workers trained, in one world of two
    assert all(a > 0.9 for a in accuracy.values()), accuracy
    assert sum("worker 0 of 2" in t for _, t in logs) == sum("worker 1 of 2" in t for _, t in logs)


def renamed(runtime: str, name: str) -> dict:
    manifest = runtime_manifest(runtime)
    return {**manifest, "metadata": {**manifest["metadata"], "name": name}}


@dataclass
class ClusterOnly:
    runtime: Runtime | str
    why: str  # what the refusal says the runtime needs


CLUSTER_ONLY = [
    ClusterOnly("torchtune-llama3.2-1b", "initializer jobs (the model and dataset downloads)"),
    ClusterOnly("torch-distributed-with-cache", "data cache"),
    # a cluster's own runtimes, by their shape (a spec resolved against Kubernetes)
    ClusterOnly(  # a cluster's runtime with initializers, under a name of its own
        Runtime.from_manifest(renamed("torchtune-llama3.2-1b", "team-llm")),
        "initializer jobs (dataset-initializer, model-initializer)",
    ),
]


@pytest.mark.parametrize(
    "case", CLUSTER_ONLY, ids=lambda c: str(getattr(c.runtime, "name", c.runtime))
)
def test_a_runtime_only_a_cluster_runs_is_refused_before_anything_starts(backend, case):
    from kale_ext.backends.submit import prepare
    from kale_ext.errors import ConfigError
    from kale_ext.job.spec import build_job_spec

    nb = notebook("print(1)")
    with pytest.raises(ConfigError) as refused:  # by name or by shape: the same refusal
        if isinstance(case.runtime, str):
            submit(backend, nb, {"runtime": case.runtime})
        else:
            backend.submit(build_job_spec(prepare(nb)[0], {}, case.runtime))
    assert refused.value.field == "runtime"
    message = refused.value.message
    name = getattr(case.runtime, "name", case.runtime)
    assert message.startswith(f"runtime '{name}' runs only on a cluster: it ")
    assert case.why in message and "submit it to Kubernetes" in message
    assert "\n" not in message and message.count(";") == 1  # one sentence
    assert backend.list_jobs() == [] and not (backend.jobs_dir / "queue").exists()


def test_a_cluster_runtime_compiles_for_the_cluster_and_is_refused_locally(
    kube,  # noqa: F811 (the fake cluster's fixture)
    tmp_path,
    monkeypatch,
):
    """The same notebook and options: a valid TrainJob on the cluster's data-cache runtime; on
    this machine a one-line refusal from the CLI (no traceback, no job)."""
    import json

    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.submit import preview
    from tests.cli import cli
    from tests.harness.crd import validate_trainjob
    from tests.harness.runtimes import runtime_manifest

    runtime = "torch-distributed-with-cache"
    kube.add_runtime(runtime_manifest(runtime))
    nb = notebook("print(1)")
    shown = preview(KubernetesBackend(), nb, {"runtime": runtime, "nodes": 2})
    validate_trainjob(shown.trainjob)
    assert shown.trainjob["spec"]["runtimeRef"]["name"] == runtime

    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(nb))
    jobs = tmp_path / "jobs"
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(jobs))
    out = cli("run", path, "--backend", "local", "--runtime", runtime)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"runtime '{runtime}' runs only on a cluster: it streams its dataset" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not jobs.exists() or not any(jobs.iterdir())
