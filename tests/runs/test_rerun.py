"""A rerun is the recorded job: the defaults that shaped it come from its record, not from
today's settings (which may have changed since)."""

from __future__ import annotations

import json

from kale_ext.backends.kubernetes import KubernetesBackend
from kale_ext.backends.snapshots import load
from kale_ext.backends.submit import submit
from kale_ext.job.defaults import RECORDED, resolve
from kale_ext.runs.rerun import rerun
from tests.conftest import notebook
from tests.harness.emulated import TRAINJOBS

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster

THEN = {"image": "python:3.11-slim", "nodes": 2, "cpu": "2", "memory": "4Gi"}
NOW = {"image": "python:3.12-slim", "nodes": 3, "cpu": "1", "memory": "1Gi", "stall_seconds": 9}


def test_a_rerun_runs_with_the_defaults_its_job_ran_with(emulated_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))  # where snapshots are kept
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook(("epochs = 2", ["parameters"]), "print(epochs)")))
    backend = KubernetesBackend(config_file=str(emulated_cluster.kubeconfig))
    first = submit(backend, path, {"name": "first"}, resolve(("site", THEN)), str(path))
    assert load(backend, "first", first.spec.job.notebook_sha256).defaults == {
        **THEN, "runtime": "torch-distributed", "pip_index_urls": [], "gpu": None,
    }  # fmt: skip

    today = resolve(("site", NOW))  # the site's defaults changed since
    again = rerun(backend, "first", "second", defaults=today)
    shaped = ("image", "numNodes", "resourcesPerNode")
    jobs = {
        n: {k: emulated_cluster.get(TRAINJOBS, n)["spec"]["trainer"].get(k) for k in shaped}
        for n in ("first", "second")
    }
    assert jobs["second"] == jobs["first"]  # image, nodes, resources: as the first ran
    assert jobs["first"]["numNodes"] == 2 and jobs["first"]["resourcesPerNode"]
    assert (again.spec.nodes, again.spec.image) == (2, "python:3.11-slim")
    fresh = submit(backend, path, {"name": "third"}, today, str(path))
    assert (fresh.spec.nodes, fresh.spec.image) == (3, "python:3.12-slim")  # a new job: today's

    recorded = today.with_recorded(THEN)
    assert recorded.stall_seconds == 9  # how jobs are watched stays today's
    assert recorded.sources["nodes"] == RECORDED and recorded.sources["stall_seconds"] == "site"
