"""Experiment tracking against a real MLflow server (SQLite store, loopback port): a local job is
a run (name, params, tags with hashes, metrics with their steps, outputs as artifacts, its end
status), a failed job a FAILED run, a sweep a parent run of its trials; a server that is down
never fails a job."""

import json
import os
import subprocess
import sys

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from kale_ext.backends.tracking import PARENT_TAG, start_run
from kale_ext.job.trainjob import trainjob_dict
from kale_ext.mlflow_api import END_ENV, RUN_ID_ENV, URI_ENV
from kale_ext.runs.tracking import end_parent, start_parent
from tests.backends.local.waiting import until
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob
from tests.harness.kube_fixtures import make_spec
from tests.harness.mlflow_server import free_port, mlflow_server

TRAIN = (
    "for s in range(1, 6):\n    report(step=s, loss=1.0 / s)\n"
    "with open(os.path.join(os.environ['KALE_EXT_OUTPUT_DIR'], 'model.txt'), 'w') as f:\n"
    "    f.write('weights')\n"
)


def write_notebook(folder, name, training=TRAIN):
    path = folder / f"{name}.ipynb"
    cells = (
        ("lr = 0.1\nlayers = 2", ["parameters"]),
        ("import os\nfrom kale_ext import report", ["imports"]),
        (training, ["training"]),
    )
    path.write_text(json.dumps(notebook(*cells)))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    from mlflow.tracking import MlflowClient

    return MlflowClient(server)


@pytest.fixture
def tracked(server, monkeypatch):
    monkeypatch.setenv(URI_ENV, server)
    return server


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs", capacity=2)


def run_of(client, name):
    """The run named ``name`` (a job's name), once it exists."""
    runs = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string=f"attributes.run_name = '{name}'",
    )
    assert len(runs) == 1, [r.info.run_name for r in runs]
    return runs[0]


def ended(client, run_id, timeout=60):
    """The run once it is no longer RUNNING (the supervisor ends it when the job ends)."""
    until(lambda: client.get_run(run_id).info.status != "RUNNING", f"run {run_id} to end", timeout)
    return client.get_run(run_id)


def run_job(backend, path, options):
    job = submit(backend, path, options)
    info = backend.wait(job.name, timeout=120, interval=0.1)
    return job, info


def test_a_job_is_a_run_with_params_hashes_metrics_and_outputs(tracked, client, backend, tmp_path):
    path = write_notebook(tmp_path, "tracked_fit")
    job, info = run_job(backend, path, {"name": "tracked-fit", "parameters": {"lr": 0.5}})
    assert info.status is Status.COMPLETE, info.reason
    assert not [w for w in job.warnings if "MLflow" in w]
    run = ended(client, run_of(client, "tracked-fit").info.run_id)
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "tracked_fit"
    assert run.data.params == {"lr": "0.5", "layers": "2"}
    tags = run.data.tags
    assert tags["kale_ext.job"] == "tracked-fit"
    assert tags["kale_ext.notebook"] == str(path)
    assert tags["kale_ext.notebook_sha256"] == job.spec.job.notebook_sha256
    assert tags["kale_ext.source_sha256"] == job.spec.job.source_sha256
    assert (tags["kale_ext.backend"], tags["kale_ext.nodes"]) == ("local", "1")
    history = client.get_metric_history(run.info.run_id, "loss")
    assert sorted((m.step, m.value) for m in history) == [(s, 1.0 / s) for s in range(1, 6)]
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["model.txt"]


def test_a_failed_job_is_a_failed_run_with_what_it_reported(tracked, client, backend, tmp_path):
    path = write_notebook(tmp_path, "tracked_fail", "report(step=1, loss=2.0)\nraise ValueError")
    _, info = run_job(backend, path, {"name": "tracked-fail"})
    assert info.status is Status.FAILED
    run = ended(client, run_of(client, "tracked-fail").info.run_id)
    assert run.info.status == "FAILED"
    assert run.data.metrics == {"loss": 2.0}


def test_a_sweep_is_a_parent_run_of_its_trials(tracked, client, backend, tmp_path):
    path = write_notebook(tmp_path, "tracked_sweep")
    parent = start_parent("lr-sweep", str(path), {"lr": "0.1,0.2"})
    assert parent.run_id and not parent.warnings
    names = []
    for i, lr in enumerate((0.1, 0.2)):
        options = {"name": f"lr-sweep-{i}", "parameters": {"lr": lr}}
        names.append(submit(backend, path, options, parent_run=parent.run_id).name)
    for name in names:
        assert backend.wait(name, timeout=120, interval=0.1).status is Status.COMPLETE
    end_parent(parent, "FINISHED")

    sweep = client.get_run(parent.run_id)
    assert (sweep.info.run_name, sweep.info.status) == ("lr-sweep", "FINISHED")
    assert sweep.data.params == {"lr": "0.1,0.2"}
    children = client.search_runs(
        [sweep.info.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{parent.run_id}'"
    )
    assert sorted(r.info.run_name for r in children) == names
    assert sorted(r.data.params["lr"] for r in children) == ["0.1", "0.2"]
    assert {ended(client, r.info.run_id).info.status for r in children} == {"FINISHED"}


def test_a_server_that_is_down_never_fails_the_job(monkeypatch, backend, tmp_path):
    monkeypatch.setenv(URI_ENV, f"http://127.0.0.1:{free_port()}")  # nothing listens there
    path = write_notebook(tmp_path, "untracked")
    job, info = run_job(backend, path, {"name": "untracked"})
    assert info.status is Status.COMPLETE, info.reason
    said = [w for w in job.warnings if "MLflow" in w]
    assert len(said) == 1 and "tracking is off for this job: cannot reach" in said[0]
    record = json.loads((backend.jobs_dir / "untracked" / "job.json").read_text())
    assert RUN_ID_ENV not in record["env"]
    logs = [line.text for line in backend.logs("untracked")]
    assert sum("loss" in t for t in logs) == 5 and not any("MLflow" in t for t in logs)


def test_on_kubernetes_the_trainjob_carries_the_run_and_rank_0_ends_it(tracked, client):
    spec = make_spec({"name": "cluster-fit"})
    run = start_run(spec, "kubernetes", "fit.ipynb")
    env = {e["name"]: e.get("value") for e in _container_env(trainjob_dict(spec))}
    assert env[RUN_ID_ENV] == run.run_id and env[URI_ENV] == tracked and env[END_ENV] == "1"
    validate_trainjob(trainjob_dict(spec))

    # what rank 0 does in the pod: report, then fail; the run ends FAILED as it exits
    script = "from kale_ext.tracking_sink import track\ntrack({'step': 3, 'acc': 0.5})\n1 / 0\n"
    node = {**os.environ, "RANK": "0", **env}
    done = subprocess.run([sys.executable, "-c", script], env=node, capture_output=True, text=True)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr
    ended_run = client.get_run(run.run_id)
    assert ended_run.info.status == "FAILED"
    assert [(m.step, m.value) for m in client.get_metric_history(run.run_id, "acc")] == [(3, 0.5)]


def _container_env(trainjob: dict) -> list[dict]:
    return trainjob["spec"]["trainer"].get("env", [])


def test_a_sweep_started_with_tracking_on_is_the_parent_run_of_its_trials(
    tracked, client, tmp_path, monkeypatch
):
    """The sweep itself (runs/sweep.py) makes the parent run, its trials children, and ends it."""
    from kale_ext.runs import record as rec
    from kale_ext.runs import sweep

    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = write_notebook(tmp_path, "swept")
    backend = LocalBackend(tmp_path / "jobs", capacity=2)
    name = sweep.start(backend, path, {"lr": "0.1,0.2"}, metric="loss", goal="min")["name"]
    until(lambda: rec.read(name)["status"] == "Complete", f"sweep {name} to end", 180)
    parent_id = rec.read(name)["tracking"]["run_id"]
    parent = ended(client, parent_id)
    assert (parent.info.run_name, parent.info.status) == (name, "FINISHED")
    children = client.search_runs(
        [parent.info.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{parent_id}'"
    )
    assert sorted(r.info.run_name for r in children) == [f"{name}-0", f"{name}-1"]
    assert {ended(client, r.info.run_id).info.status for r in children} == {"FINISHED"}
