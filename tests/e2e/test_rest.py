"""The REST API of a real Jupyter server (pytest-jupyter) configured with the Kubernetes
backend, against the emulated cluster through the generated kubeconfig: submit, the log
stream of both nodes, status, events, delete; faults said in plain words."""

from __future__ import annotations

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

pytest.register_assert_rewrite("tests.harness.server")
from tests.harness.emulated import TRAINJOBS, node_state  # noqa: E402
from tests.harness.server import lines  # noqa: E402

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


@pytest.fixture
def kale_config(emulated_cluster) -> dict:
    """The server's backend: Kubernetes, through KUBECONFIG (the emulated cluster's)."""
    return {"backend": "kubernetes", "poll_interval": 0.1, "warm_up": False}


async def test_a_two_node_job_from_submit_to_delete(api, emulated_cluster):
    backend = (await api.get("backend")).json
    assert backend == {"name": "kubernetes", "reason": "set in the server configuration",
                       "namespace": "team"}  # fmt: skip
    options = {"nodes": 2, "parameters": {"steps": 100}}
    name = await api.submit(options, path="plain_python.ipynb")  # an example: no torch imported
    assert emulated_cluster.get(TRAINJOBS, name)["spec"]["trainer"]["numNodes"] == 2
    events = await api.follow(name)
    assert events[-1].data["status"] == "Complete"
    seen = lines(events)
    for node in (0, 1):
        assert any(n == node and text.startswith("fitted a=") for n, text in seen), seen[-6:]
    job = (await api.get(f"jobs/{name}")).json
    assert job["status"] == "Complete" and job["backend"] == "kubernetes"
    assert [n["state"] for n in job["nodes"]] == ["Succeeded", "Succeeded"]
    one = lines(await api.logs(name, {"node": "1"}))
    assert {n for n, _ in one} == {1} and any(t.startswith("fitted a=") for _, t in one)
    reasons = [e["reason"] for e in (await api.get(f"jobs/{name}/events")).json["events"]]
    assert reasons.count("Started") == 2 and "AllJobsCompleted" in reasons
    assert [j["name"] for j in (await api.get("jobs")).json["jobs"]] == [name]
    assert (await api.delete(f"jobs/{name}")).json == {"deleted": name, "outputs": None}
    emulated_cluster.wait_for(lambda: emulated_cluster.get(TRAINJOBS, name) is None, 60, "gone")
    gone = await api.get(f"jobs/{name}")
    assert gone.status == 404 and name in gone.json["message"]


async def test_a_fault_is_said_in_plain_words(api, emulated_cluster):
    emulated_cluster.faults.image_pull("registry.invalid/*")
    name = await api.submit({"image": "registry.invalid/train:1"}, path="plain_python.ipynb")
    emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods(name) if node_state(
        p).get("waiting", {}).get("reason") == "ImagePullBackOff"])  # fmt: skip
    job = (await api.get(f"jobs/{name}")).json
    assert job["status"] == "Queued"
    assert "registry.invalid/train:1" in job["reason"] and "ImagePullBackOff" in job["reason"]


async def test_the_api_servers_refusal_reaches_the_client_with_its_reason(api, emulated_cluster):
    emulated_cluster.faults.api(429, verb="list", resource="trainjobs", times=1)
    refused = await api.get("jobs")
    assert refused.status == 429
    assert "the API server is throttling requests: try again shortly" in refused.json["message"]
    assert (await api.get("jobs")).json["jobs"] == []
