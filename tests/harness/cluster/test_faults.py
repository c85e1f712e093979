"""Injected faults, as a real cluster shows them: in the pods' states and events, and in what
kale_ext's Kubernetes backend makes of them (the facts its reason must carry: its wording is
kale_ext's, tested with the backend)."""

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from kale_ext.backends.base import BackendError  # noqa: E402
from tests.harness.emulated import (  # noqa: E402
    finished,
    node_state,
    submit,
    trainjob,
)

LINES = "import time\nfor i in range(100):\n    print('step', i, flush=True); time.sleep(0.05)"


@pytest.fixture
def backend(emulated_cluster):
    from kale_ext.backends.kubernetes import KubernetesBackend

    return KubernetesBackend(poll_interval=0.05)


def waiting_pod(cluster, job: str, reason: str) -> dict:
    return cluster.wait_for(lambda: [p for p in cluster.pods(job) if node_state(p).get(
        "waiting", {}).get("reason") == reason], 60, reason)[0]  # fmt: skip


def test_an_image_that_cannot_be_pulled(emulated_cluster, kube_api, backend):
    emulated_cluster.faults.image_pull("registry.invalid/*")
    submit(kube_api[1], trainjob("fit", image="registry.invalid/train:1"))
    waiting_pod(emulated_cluster, "fit", "ImagePullBackOff")
    info = backend.get_job("fit")
    assert info.status.value == "Queued"
    assert "ImagePullBackOff" in info.reason and "registry.invalid/train:1" in info.reason
    failed = [e.message for e in backend.events("fit") if e.reason == "Failed"]
    assert failed and 'Failed to pull image "registry.invalid/train:1"' in failed[0]


def test_a_pod_no_node_can_take(emulated_cluster, kube_api, backend):
    emulated_cluster.faults.unschedulable(node=1)
    submit(kube_api[1], trainjob("fit", nodes=2, script="import time; time.sleep(60)"))
    emulated_cluster.wait_for(lambda: backend.get_job("fit").reason)
    info = backend.get_job("fit")
    assert info.status.value == "Queued"
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu" in info.reason


@pytest.mark.parametrize(
    "kind, reason, fact", [("oom", "OOMKilled", "OOMKilled"), ("crash", "Error", "137")]
)
def test_a_node_killed_while_it_runs(emulated_cluster, kube_api, backend, kind, reason, fact):
    getattr(emulated_cluster.faults, kind)(node=1, after_lines=2)
    submit(kube_api[1], trainjob("fit", nodes=2, script=LINES))
    pod = waiting_pod(emulated_cluster, "fit", "CrashLoopBackOff")
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (137, reason)
    assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"
    said = emulated_cluster.wait_for(lambda: (backend.get_job("fit").reason or "").startswith(
        "node 1") and backend.get_job("fit").reason)  # fmt: skip
    assert "CrashLoopBackOff" in said and fact in said
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Failed"


@pytest.mark.parametrize(
    "status, said",
    [
        (429, "(HTTP 429 TooManyRequests); the API server is throttling requests: try again shortly"),
        (500, "(HTTP 500 InternalError); the API server failed: try again later"),
        (504, "Timeout: request did not complete within requested timeout - context deadline "
              "exceeded (HTTP 504 Timeout); the API server failed: try again later"),
    ],
)  # fmt: skip
def test_the_api_server_says_no(emulated_cluster, backend, status, said):
    emulated_cluster.faults.api(status, verb="list", resource="trainjobs", times=1)
    with pytest.raises(BackendError) as refused:
        backend.list_jobs()
    assert refused.value.status == status and said in str(refused.value)
    assert str(refused.value).startswith("cannot list TrainJobs in team: ")
    assert backend.list_jobs() == []  # once only
