"""Kubeflow Trainer's progress API both ways, on the emulated cluster with its TrainJobStatus
feature on: a compiled notebook's rank 0 posts its progress and metrics to the Trainer's status
server (real HTTPS, the projected token), which writes them to the TrainJob, and kale_ext shows
them; a TrainJob someone else made and reported to (the Kubeflow SDK's update_trainjob_status)
is shown in `kale-ext jobs`, `kale-ext status` and REST GET jobs/{name}."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.cli import cli  # noqa: E402
from tests.conftest import notebook  # noqa: E402
from tests.harness.emulated import (  # noqa: E402
    node_state,
    submit,
    trainer_status,
    trainer_status_env,
    trainjob,
)

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

ON = pytest.mark.parametrize("emulated_cluster", [{"trainer_status": True}], indirect=True)
K8S = ("--backend", "kubernetes")
TRAINING = notebook(
    ("import time\nfrom kale_ext import report", ["imports"]),
    "for step in range(1, 9):\n"
    "    time.sleep(0.3)\n"
    "    report(step=step, total=8, loss=1 / step)\n"
    "print('trained')",
)


@pytest.fixture
def kale_config(emulated_cluster) -> dict:
    """The REST server's backend: Kubernetes, through KUBECONFIG (the emulated cluster's)."""
    return {"backend": "kubernetes", "poll_interval": 0.1, "warm_up": False}


@ON
def test_a_compiled_jobs_progress_and_metrics_reach_its_trainjob_and_kale_ext_shows_them(
    emulated_cluster, tmp_path
):
    (tmp_path / "train.ipynb").write_text(json.dumps(TRAINING))
    out = cli("run", tmp_path / "train.ipynb", *K8S, "--nodes", "2", "--follow")
    assert out.returncode == 0, out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    assert "trained" in out.stdout and "progress not sent" not in out.stdout + out.stderr
    posts = emulated_cluster.status_server.received
    assert posts and all(p.code == 200 for p in posts), [(p.code, p.body) for p in posts]
    assert emulated_cluster.status_server.base.startswith("https://")
    assert {p.path for p in posts} == {
        f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/{name}/status"
    }
    node0 = emulated_cluster.pods(name)[0]["metadata"]["name"]
    assert {p.pod for p in posts} == {node0}  # rank 0's pod only; rank 1 reports, not posts
    first = json.loads(posts[0].body)["trainerStatus"]
    assert first["progressPercentage"] < 100  # the first report went at once
    held = trainer_status(emulated_cluster, name)
    assert held["progressPercentage"] == 100  # the last report, sent as the job ended
    assert {"name": "loss", "value": "0.125"} in held["metrics"]
    assert {"name": "total", "value": "8"} in held["metrics"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", held["lastUpdatedTime"])
    status = cli("status", name, *K8S)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].startswith(f"{name}: Complete (kubernetes, torch-distributed, 2 nodes")
    assert any(re.fullmatch(r"progress\s+reached 100%", line) for line in lines), lines
    assert any(line.startswith("trainer ") and "loss 0.125" in line for line in lines), lines


@ON
async def test_a_trainjob_someone_else_made_and_reported_to_is_shown(
    emulated_cluster, kube_api, tmp_path, monkeypatch, api
):
    from kubeflow.trainer.backends.kubernetes import utils

    submit(kube_api[1], trainjob("theirs", script="import time; time.sleep(120)"))
    emulated_cluster.wait_for(
        lambda: [p for p in emulated_cluster.pods("theirs") if "running" in node_state(p)],
        what="their pod running",
    )
    for key, value in trainer_status_env(emulated_cluster, "theirs", tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(utils, "_last_update_time", 0.0)
    monkeypatch.setattr(utils, "_cached_token", None)
    assert utils.update_trainjob_status(45, 125, {"loss": 0.25, "epoch": 3}) is True

    job = (await api.get("jobs/theirs")).json
    assert job["status"] == "Running"
    assert job["progress"]["percent"] == 45 and job["progress"]["eta_seconds"] == 125
    assert job["progress"]["source"] == "trainer" and job["progress"]["step"] is None
    assert job["trainer_metrics"] == {"loss": "0.25", "epoch": "3"}
    listed = {j["name"]: j for j in (await api.get("jobs")).json["jobs"]}
    assert listed["theirs"]["progress"] == job["progress"]

    jobs = cli("jobs", *K8S)
    assert jobs.returncode == 0, jobs.stderr
    [row] = [line for line in jobs.stdout.splitlines() if line.startswith("theirs ")]
    assert re.search(r"Running.*45%\s+2m 05s", row), jobs.stdout
    status = cli("status", "theirs", *K8S).stdout.splitlines()
    assert any(line.startswith("progress") and "45%, ETA 2m 05s" in line for line in status)
    assert "trainer       loss 0.25, epoch 3" in status
