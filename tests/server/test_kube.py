"""The REST API on the Kubernetes backend, with the kubernetes client's boundary faked
(tests/fake_kube.py: an in-memory API server that checks every TrainJob against the CRD), and a
backend class swapped in through `c.KaleExtApp.backend_class`, as jupyter-scheduler does."""

from __future__ import annotations

import asyncio
import time

import pytest
from tornado.httpclient import HTTPClientError
from traitlets import TraitError

from kale_ext.backends.base import Backend, BackendError, JobInfo, LogLine, Status
from kale_ext.job.runtimes import TORCH_DISTRIBUTED
from kale_ext.server.app import KaleExtApp
from tests.conftest import notebook
from tests.harness.fake_kube import FakeKube, status_error

pytest.register_assert_rewrite("tests.harness.server")
from tests.harness.server import parse_sse  # noqa: E402

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

NB = notebook(("lr = 0.1", ["parameters"]), "print(lr)")


@pytest.fixture
def kale_config(kube):
    return {"backend": "kubernetes", "poll_interval": 0.01, "warm_up": False}


def running_job(kube: FakeKube, name: str = "fit", nodes: int = 2) -> list[str]:
    """A TrainJob whose pods run; each node has written two lines."""
    kube.add_trainjob(name, num_nodes=nodes)
    pods = [kube.add_pod(name, k) for k in range(nodes)]
    for k, pod in enumerate(pods):
        kube.logs[pod].write(f"node {k} line 1", f"node {k} line 2")
    return pods


def finish(kube: FakeKube, name: str = "fit") -> None:
    for pod, log in kube.logs.items():
        log.end()
        if pod.startswith(f"{name}-"):
            kube.set_pod(pod, "Succeeded", {"terminated": {"exitCode": 0, "reason": "Completed"}})
    kube.set_conditions(name, ("Complete", "True", "AllJobsCompleted", "done"))


async def test_backend_and_runtimes(api, kube):
    assert (await api.get("backend")).json == {
        "name": "kubernetes",
        "reason": "set in the server configuration",
        "namespace": "team",
    }
    runtimes = (await api.get("runtimes")).json["runtimes"]
    assert [r["name"] for r in runtimes] == ["torch-distributed"]
    assert (await api.get("runtimes/torch-distributed")).json["kind"] == "ClusterTrainingRuntime"
    missing = await api.get("runtimes/deepspeed-distributed")
    assert missing.status == 404 and "deepspeed-distributed" in missing.json["message"]


async def test_queues_are_the_namespaces_local_queues_as_the_document_says(api, kube):
    from pathlib import Path

    import yaml

    from kale_ext.server import handlers

    assert (await api.get("queues")).json == {
        "queues": [], "reason": "namespace team has no Kueue LocalQueue"}  # fmt: skip
    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"},
                             "status": {"pendingWorkloads": 3, "admittedWorkloads": 1}})  # fmt: skip
    data = (await api.get("queues")).json
    assert data == {"queues": [{"name": "team-a", "cluster_queue": "cq", "pending": 3,
                                "admitted": 1}], "reason": None}  # fmt: skip
    openapi = yaml.safe_load(Path(handlers.__file__).with_name("openapi.yaml").read_text())
    schema = openapi["components"]["schemas"]["Queue"]
    assert set(schema["required"]) == set(schema["properties"]) == set(data["queues"][0])
    kube.failures["list_namespaced_custom_object"] = status_error(
        403, "Forbidden", 'localqueues.kueue.x-k8s.io is forbidden: User "ana" cannot list'
    )
    forbidden = (await api.get("queues")).json
    assert forbidden["queues"] == [] and "needs list on localqueues" in forbidden["reason"]


async def test_compile_and_submit_create_a_valid_trainjob(api, kube):
    preview = (await api.post("compile", {"notebook": NB, "options": {"nodes": 2}})).json
    assert preview["ok"] and preview["runtime"] == "torch-distributed"
    r = await api.post("jobs", {"notebook": NB, "options": {"name": "fit", "nodes": 2}})
    assert r.status == 201, r.text
    assert r.json["name"] == "fit" and r.json["backend"] == "kubernetes"
    created = kube.get("trainjobs", "fit")  # the fake checked it against the official CRD
    assert created["spec"]["trainer"]["numNodes"] == 2
    assert created["metadata"]["annotations"]["kale-ext.io/notebook"] == "notebook.ipynb"
    again = await api.post("jobs", {"notebook": NB, "options": {"name": "fit"}})
    assert again.status == 409 and "already exists" in again.json["message"]
    unknown = await api.post("compile", {"notebook": NB, "options": {"runtime": "nope"}})
    assert unknown.json["errors"][0]["field"] == "runtime"


async def test_status_list_events_delete(api, kube):
    running_job(kube)
    job = (await api.get("jobs/fit")).json
    assert job["status"] == "Running" and job["num_nodes"] == 2
    finish(kube)
    assert (await api.get("jobs/fit")).json["status"] == "Complete"
    assert [j["name"] for j in (await api.get("jobs")).json["jobs"]] == ["fit"]
    kube.add_event("TrainJob", "fit", "Created", "created the JobSet", 1)
    events = (await api.get("jobs/fit/events")).json["events"]
    assert any(e["reason"] == "Created" for e in events)
    assert (await api.delete("jobs/fit")).json == {"deleted": "fit", "outputs": None}
    gone = await api.delete("jobs/fit")
    assert gone.status == 404 and "does not exist" in gone.json["message"]


async def test_logs_follow_a_finished_job_and_resume(api, kube):
    running_job(kube)
    finish(kube)
    events = await api.follow("fit")
    assert events[-1].data["status"] == "Complete"
    got = {(e.data["node"], e.data["text"]) for e in events[:-1]}
    assert got == {(k, f"node {k} line {i}") for k in (0, 1) for i in (1, 2)}
    node0 = [e for e in events if e.data.get("node") == 0]
    rest = await api.logs("fit", {"node": "0"}, headers={"Last-Event-ID": node0[0].id})
    assert [e.data["text"] for e in rest[:-1]] == ["node 0 line 2"]


async def test_follow_streams_lines_as_they_come(api, kube, jp_fetch):
    pods = running_job(kube)
    chunks: list[bytes] = []
    arrived = asyncio.Event()

    def received(chunk: bytes) -> None:
        chunks.append(chunk)
        if b"node 1 line 3" in b"".join(chunks):
            arrived.set()

    fetch = asyncio.ensure_future(
        jp_fetch(
            "kale-ext",
            "jobs",
            "fit",
            "logs",
            params={"follow": "1"},
            streaming_callback=received,
            request_timeout=60,
        )
    )
    kube.logs[pods[1]].write("node 1 line 3")  # written while the stream is open
    await asyncio.wait_for(arrived.wait(), 30)
    assert not fetch.done()  # the job runs: the stream stays open
    finish(kube)
    r = await asyncio.wait_for(fetch, 30)
    events = parse_sse(b"".join(chunks).decode())
    assert r.code == 200 and events[-1].event == "end"
    assert events[-1].data["status"] == "Complete"
    assert sum(e.data.get("text") == "node 1 line 3" for e in events) == 1


async def test_a_client_that_goes_away_stops_its_stream(api, kube, jp_fetch, kale_app):
    pods = running_job(kube)
    app = kale_app
    got_one = asyncio.Event()

    def hang_up(chunk: bytes) -> None:
        if b"data:" in chunk:
            got_one.set()
            raise ConnectionAbortedError("the client goes away")

    with pytest.raises((ConnectionAbortedError, HTTPClientError)):
        await jp_fetch(
            "kale-ext",
            "jobs",
            "fit",
            "logs",
            params={"follow": "1"},
            streaming_callback=hang_up,
            request_timeout=60,
        )
    assert got_one.is_set()
    deadline = time.monotonic() + 20
    while app._streams and time.monotonic() < deadline:  # the handler noticed and left
        await asyncio.sleep(0.02)
    assert not app._streams
    kube.logs[pods[0]].write("one more line")  # the reader thread leaves at its next line
    while not all(s.closed for s in kube.streams) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert all(s.closed for s in kube.streams), "the pod log streams were not closed"


@pytest.mark.parametrize(
    ("failure", "status", "says"),
    [
        (
            status_error(403, "Forbidden", 'trainjobs is forbidden: User "u" cannot list'),
            403,
            "trainjobs is forbidden",
        ),
        (status_error(500, "InternalError", "etcd is down"), 500, "etcd is down"),
        (RuntimeError("a bug"), 500, "internal error in kale_ext: RuntimeError: a bug"),
    ],
    ids=["forbidden", "server-error", "bug"],
)
async def test_backend_failures_are_json_with_the_servers_message(api, kube, failure, status, says):
    kube.failures["list_namespaced_custom_object"] = failure
    r = await api.get("jobs")
    assert r.status == status and r.headers["Content-Type"].startswith("application/json")
    assert says in r.json["message"] and "Traceback" not in r.text
    assert r.json["status"] == status


# -- a backend class of one's own, through c.KaleExtApp.backend_class --


class TinyBackend(Backend):
    """Just enough of a backend: one finished job with two nodes."""

    name = "tiny"

    def __init__(self, namespace: str | None = None):
        self.namespace = namespace

    def list_runtimes(self):
        return [TORCH_DISTRIBUTED]

    def submit(self, spec, notebook_path=None):
        raise BackendError("tiny cannot run jobs", 503, "ServiceUnavailable")

    def list_jobs(self):
        return [self.get_job("only")]

    def get_job(self, name):
        if name != "only":
            from kale_ext.backends.base import NotFound

            raise NotFound(f"no job {name}")
        return JobInfo("only", Status.COMPLETE, self.name, num_nodes=2)

    def logs(self, name, node=None, follow=False, tail=None, offsets=None):
        self.get_job(name)
        for k in [node] if node is not None else [0, 1]:
            start = (offsets or {}).get(k, 0)
            for i in range(start + 1, 4):
                yield LogLine(k, f"{k}.{i}", k, i)

    def events(self, name):
        return []

    def delete(self, name):
        self.get_job(name)


class TestBackendClass:
    @pytest.fixture
    def kale_config(self):
        return {"backend_class": f"{__name__}.TinyBackend", "namespace": "ns", "warm_up": False}

    async def test_it_is_used_with_the_settings_it_takes(self, api):
        assert (await api.get("backend")).json == {
            "name": "tiny",
            "reason": "configured: TinyBackend",
            "namespace": "ns",
        }
        events = await api.logs("only", {"offsets": "0:1,1:2"})
        assert [e.id for e in events[:-1]] == ["0:2", "0:3", "1:3"]
        assert events[-1].data == {"status": "Complete", "status_text": "Complete", "reason": None}
        r = await api.post("jobs", {"notebook": NB})
        assert r.status == 503 and r.json == {
            "message": "tiny cannot run jobs",
            "status": 503,
            "reason": "ServiceUnavailable",
            "field": None,
        }


def test_backend_class_must_be_a_backend():
    with pytest.raises(TraitError, match="must be a Backend subclass"):
        KaleExtApp(backend_class=dict)
    with pytest.raises(TraitError):
        KaleExtApp(backend="nowhere")
