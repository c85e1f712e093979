"""The Kubernetes backend's verbs against an in-memory API server (tests/harness/fake_kube.py):
runtimes, submit, the run policy, events and delete.

The fake sits where the cluster would: behind the kubernetes client's CustomObjectsApi and
CoreV1Api. Every TrainJob it receives must pass tests/harness/crd.py (the models' strict schema,
the official CRD where ../shared is present, the Trainer's CEL and webhook rules).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from unittest import mock

import pytest

from kale_ext.backends.base import BackendError, NotFound, Status
from kale_ext.backends.kubernetes import KubernetesBackend
from kale_ext.errors import ConfigError
from tests.harness.fake_kube import FakeKube, status_error
from tests.harness.kube_fixtures import make_spec
from tests.harness.runtimes import runtime_manifest


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# ----- set-up -------------------------------------------------------------------------------------


def test_importing_the_backend_stays_cheap():
    code = (
        "import sys, kale_ext.backends.kubernetes\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'kubeflow')]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ----- runtimes -----------------------------------------------------------------------------------


def unlabelled(name: str) -> dict:
    manifest = runtime_manifest("torch-distributed")
    return {**manifest, "metadata": {"name": name}}


@pytest.fixture
def runtimes(kube) -> FakeKube:
    for name in ("deepspeed-distributed", "torch-distributed-with-cache"):
        kube.add_runtime(runtime_manifest(name))
    kube.add_runtime(unlabelled("no-framework"))
    mine = runtime_manifest("torch-distributed")
    mine["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]["image"] = "registry.example.com/torch:team"
    kube.add_runtime(mine, namespaced=True)
    return kube


def test_list_runtimes_merges_cluster_and_namespace(backend, runtimes):
    found = {r.name: r for r in backend.list_runtimes()}
    assert list(found) == [
        "deepspeed-distributed",
        "torch-distributed",
        "torch-distributed-with-cache",
    ]  # no-framework is skipped: the SDK could not launch it either
    torch = found["torch-distributed"]
    assert torch.kind == "TrainingRuntime" and torch.image == "registry.example.com/torch:team"
    assert found["torch-distributed-with-cache"].replicated_jobs == ("dataset-initializer", "node")
    assert found["deepspeed-distributed"].mpi


@pytest.mark.parametrize(
    "status, reason, tolerated",
    [(403, "Forbidden", True), (404, "NotFound", True), (500, "InternalError", False)],
)
def test_the_namespaced_runtime_list_may_be_forbidden(backend, runtimes, status, reason, tolerated):
    runtimes.failures["list_namespaced_custom_object"] = status_error(status, reason, "no")
    if tolerated:
        names = [r.name for r in backend.list_runtimes()]
        assert "torch-distributed" in names and "deepspeed-distributed" in names
    else:
        with pytest.raises(BackendError, match="cannot list TrainingRuntimes in team"):
            backend.list_runtimes()


@dataclass
class RuntimeCase:
    name: str
    runtime: str
    kind: str | None = None  # expected kind, or None for an error
    error: str = ""
    namespaced_forbidden: bool = False


RUNTIME_CASES = [
    RuntimeCase("namespaced first", "torch-distributed", "TrainingRuntime"),
    RuntimeCase("cluster fallback", "deepspeed-distributed", "ClusterTrainingRuntime"),
    RuntimeCase("forbidden namespaced read falls back", "torch-distributed", "ClusterTrainingRuntime",
                namespaced_forbidden=True),
    RuntimeCase("missing", "nope", error="runtime 'nope' not found in the cluster or namespace team "
                "(available: deepspeed-distributed, torch-distributed, torch-distributed-with-cache)"),
    RuntimeCase("no framework label", "no-framework", error="has no trainer.kubeflow.org/framework label"),
]  # fmt: skip


@pytest.mark.parametrize("case", RUNTIME_CASES, ids=lambda c: c.name)
def test_get_runtime(case, backend, runtimes):
    if case.namespaced_forbidden:
        runtimes.failures["get_namespaced_custom_object"] = status_error(403, "Forbidden", "no")
    if case.kind is None:
        with pytest.raises(BackendError) as info:
            backend.get_runtime(case.runtime)
        assert case.error in str(info.value)
    else:
        assert backend.get_runtime(case.runtime).kind == case.kind


# ----- submit -------------------------------------------------------------------------------------


def test_submit_creates_a_valid_trainjob_with_strict_field_validation(backend, kube):
    submitted = backend.submit(make_spec(), "work/fit.ipynb")
    assert submitted.name == "fit"
    call = kube.mocks["create_namespaced_custom_object"].call_args
    assert call.args[:4] == ("trainer.kubeflow.org", "v1alpha1", "team", "trainjobs")
    assert call.kwargs["field_validation"] == "Strict"
    stored = kube.get("trainjobs", "fit")  # validated against the CRD by the fake on the way in
    assert stored["metadata"]["annotations"]["kale-ext.io/notebook"] == "work/fit.ipynb"
    assert submitted.warnings == ()
    assert backend.get_job("fit").provenance["kale-ext.io/notebook"] == "work/fit.ipynb"


def test_a_folder_of_this_machine_for_checkpoints_is_refused_before_anything_is_made(backend, kube):
    with pytest.raises(ConfigError, match="folder of this machine"):
        backend.submit(make_spec({"checkpoints": "ckpt"}))
    assert kube.mocks["create_namespaced_custom_object"].call_count == 0
    submitted = backend.submit(make_spec({"keep_checkpoints": 3}))  # kept with the pods
    assert "go with each pod" in submitted.warnings[0]


def test_the_example_notebook_through_the_one_submit_path(kube):
    """What the end-to-end test does on a cluster, here on the fake: choose, compile, submit."""
    from kale_ext.backends.choose import choose_backend
    from kale_ext.backends.submit import submit
    from tests.conftest import EXAMPLES

    backend, why = choose_backend()
    assert isinstance(backend, KubernetesBackend) and why.startswith("KUBECONFIG points at")
    submitted = submit(backend, EXAMPLES / "plain_python.ipynb", {"cpu": 1})
    name, spec = submitted.name, submitted.spec
    assert name == spec.name and name.startswith("plain-python-")  # from the notebook's name
    body = kube.get("trainjobs", name)  # valid against the CRD, or the fake would have refused it
    assert body["spec"]["trainer"]["resourcesPerNode"]["requests"] == {"cpu": "1"}
    assert body["metadata"]["annotations"]["kale-ext.io/notebook"].endswith("plain_python.ipynb")


def test_this_kubernetes_client_sends_field_validation_to_the_server():
    """The real client (not the fake) turns field_validation into ?fieldValidation=Strict."""
    from kubernetes import client

    api = client.ApiClient()
    with mock.patch.object(api, "call_api", return_value={}) as call_api:
        client.CustomObjectsApi(api).create_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", "team", "trainjobs", {}, field_validation="Strict"
        )
    path, method, _, query = call_api.call_args.args[:4]
    assert (path, method) == ("/apis/{group}/{version}/namespaces/{namespace}/{plural}", "POST")
    assert ("fieldValidation", "Strict") in query


def test_a_second_job_of_the_same_name_is_refused(backend, kube):
    backend.submit(make_spec())
    with pytest.raises(BackendError, match='"fit" already exists') as info:
        backend.submit(make_spec())
    assert info.value.status == 409


def test_env_from_takes_the_keys_of_the_secret_never_its_values(backend, kube):
    values = {"TOKEN": "s3cret-token", "PASSWORD": "hunter2-password"}
    kube.put(
        "secrets",
        {
            "metadata": {"name": "creds"},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()},
        },
    )
    kube.put("configmaps", {"metadata": {"name": "cfg"}, "data": {"MODE": "fast-mode"}})
    backend.submit(make_spec({"config": {"env_from": [
        {"secretRef": {"name": "creds"}}, {"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}]}}))  # fmt: skip
    body = kube.mocks["create_namespaced_custom_object"].call_args.args[4]
    assert body["spec"]["trainer"]["env"] == [
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "PASSWORD"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "TOKEN"}}},
        {"name": "CFG_MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "MODE"}}},
    ]
    text = json.dumps(body)
    for value in [*values.values(), "fast-mode"]:
        assert value not in text and base64.b64encode(value.encode()).decode() not in text


def test_env_from_a_missing_secret_is_refused_before_creating(backend, kube):
    with pytest.raises(ConfigError, match=r"env_from\[0\]: Secret 'gone' does not exist"):
        backend.submit(make_spec({"config": {"env_from": [{"secretRef": {"name": "gone"}}]}}))
    assert kube.count("create_namespaced_custom_object") == 0


def test_a_missing_runtime_is_refused_before_creating(backend, kube):
    del kube.objects[("clustertrainingruntimes", None)]["torch-distributed"]
    with pytest.raises(NotFound, match="runtime 'torch-distributed' not found"):
        backend.submit(make_spec())
    assert kube.count("create_namespaced_custom_object") == 0


def test_a_notebook_too_large_to_embed_is_refused_before_creating(backend, kube, monkeypatch):
    """The TrainJob carries the notebook's code: over MAX_EMBEDDED_CODE (here made 8 bytes) it
    is a config error on `source` naming the notebook's code, and nothing is created."""
    from kale_ext.job import embed

    monkeypatch.setattr(embed, "MAX_EMBEDDED_CODE", 8)
    with pytest.raises(ConfigError, match="the notebook's code is too large to embed") as e:
        backend.submit(make_spec())
    assert e.value.field == "source"
    assert kube.count("create_namespaced_custom_object") == 0


@dataclass
class RoomCase:
    name: str
    options: dict
    nodes: list = field(default_factory=list)  # (name, labels, unschedulable, allocatable)
    error: str = ""
    warning: str = ""
    nodes_forbidden: bool = False


SMALL = ("small", {"pool": "cpu"}, False, {"cpu": "3800m", "memory": "15Gi"})
BIG = ("big", {"gpu": "a100"}, False, {"cpu": "16", "memory": "65536Mi", "nvidia.com/gpu": "4"})
BIG_CORDONED = (*BIG[:2], True, BIG[3])
ROOM_CASES = [
    RoomCase("fits the big node", {"gpu": 2, "cpu": 8, "memory": "32Gi"}, [SMALL, BIG]),
    RoomCase("millicores and mebibytes compare by value", {"cpu": "15500m", "memory": "64Gi"}, [BIG]),
    RoomCase("too many GPUs", {"gpu": 8}, [SMALL, BIG],
             error="nvidia.com/gpu: asked 8, the most a node has is 4 (big)"),
    RoomCase("too much memory", {"memory": "70000Mi"}, [SMALL, BIG],
             error="memory: asked 70000Mi, the most a node has is 65536Mi (big)"),
    RoomCase("no single node has both", {"gpu": 1, "cpu": 8},
             [("gpu-only", {}, False, {"cpu": "2", "nvidia.com/gpu": "1"}), ("cpu-only", {}, False, {"cpu": "32"})],
             error="no single node has all of it at once"),
    RoomCase("a cordoned node does not count", {"gpu": 1}, [SMALL, BIG_CORDONED],
             error="nvidia.com/gpu: asked 1, the most a node has is 0 (small)"),
    RoomCase("only nodes matching the node selector", {"cpu": 8, "config": {"node_selector": {"pool": "cpu"}}},
             [SMALL, BIG], error="cpu: asked 8, the most a node has is 3800m (small)"),
    RoomCase("requests count, not limits", {"config": {"requests": {"cpu": "2"}, "limits": {"cpu": "64"}}}, [SMALL]),
    RoomCase("no node matches: the job waits", {"cpu": 1, "config": {"node_selector": {"pool": "tpu"}}},
             [SMALL, BIG], warning="no schedulable node with labels pool=tpu now"),
    RoomCase("listing nodes is forbidden: a warning", {"gpu": 1}, nodes_forbidden=True,
             warning='could not check that a node has room for nvidia.com/gpu=1: cannot list the '
                     "cluster's nodes: nodes is forbidden"),
]  # fmt: skip


@pytest.mark.parametrize("case", ROOM_CASES, ids=lambda c: c.name)
def test_one_node_must_have_room_for_one_training_node(case, backend, kube):
    for name, labels, unschedulable, allocatable in case.nodes:
        kube.add_node(
            name, labels, unschedulable, **{k.replace("/", "_"): v for k, v in allocatable.items()}
        )
    if case.nodes_forbidden:
        kube.failures["list_node"] = status_error(
            403, "Forbidden", 'nodes is forbidden: User "ana" cannot list resource "nodes"'
        )
    if case.error:
        with pytest.raises(BackendError) as info:
            backend.submit(make_spec(case.options))
        assert info.value.status == 422 and info.value.reason == "Unschedulable"
        assert case.error in str(info.value)
        assert kube.count("create_namespaced_custom_object") == 0
        return
    submitted = backend.submit(make_spec(case.options))
    assert submitted.name == "fit"
    assert [case.warning in w for w in submitted.warnings] == ([True] if case.warning else [])


def test_no_resources_asked_means_no_node_listing(backend, kube):
    backend.submit(make_spec())
    assert kube.count("list_node") == 0


# ----- run policy ---------------------------------------------------------------------------------


@dataclass
class PolicyCase:
    name: str
    annotations: dict
    finished_ago: float | None  # seconds; None: still running
    job_deleted: bool = False
    pods_deleted: bool = False


POLICY_CASES = [
    PolicyCase("ttl passed", {"kale-ext.io/ttl-seconds-after-finished": "60"}, 120, job_deleted=True),
    PolicyCase("ttl 0", {"kale-ext.io/ttl-seconds-after-finished": "0"}, 1, job_deleted=True),
    PolicyCase("ttl not yet", {"kale-ext.io/ttl-seconds-after-finished": "3600"}, 10),
    PolicyCase("ttl of a running job", {"kale-ext.io/ttl-seconds-after-finished": "0"}, None),
    PolicyCase("clean pods: All", {"kale-ext.io/clean-pod-policy": "All"}, 5, pods_deleted=True),
    PolicyCase("clean pods: All, still running", {"kale-ext.io/clean-pod-policy": "All"}, None),
    PolicyCase("clean pods: None", {"kale-ext.io/clean-pod-policy": "None"}, 5),
]  # fmt: skip


@pytest.mark.parametrize("case", POLICY_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("look", ["get_job", "list_jobs"])
def test_run_policy_is_applied_when_a_finished_job_is_seen(case, look, backend, kube):
    kube.add_trainjob("fit", annotations=case.annotations)
    kube.add_pod("fit", 0, "Running" if case.finished_ago is None else "Succeeded")
    if case.finished_ago is not None:
        done = iso(datetime.now(timezone.utc) - timedelta(seconds=case.finished_ago))
        kube.set_conditions("fit", ("Complete", "True", "AllJobsCompleted", "done", done))
    info = backend.get_job("fit") if look == "get_job" else backend.list_jobs()[0]
    assert info.status is (Status.RUNNING if case.finished_ago is None else Status.COMPLETE)
    assert (kube.get("trainjobs", "fit") is None) == case.job_deleted
    assert (kube.get("pods", "fit-node-0-0-abcde") is None) == (
        case.job_deleted or case.pods_deleted
    )
    if case.job_deleted:
        assert "ttl_seconds_after_finished" in info.reason
        assert kube.mocks["delete_namespaced_custom_object"].call_args.kwargs == {
            "propagation_policy": "Foreground",
            "_request_timeout": (10, 60),
        }
        with pytest.raises(NotFound):
            backend.get_job("fit")
    if case.pods_deleted:
        assert backend.get_job("fit").nodes == []
        assert kube.count("delete_collection_namespaced_pod") == 1  # once, not on every look


def test_a_job_being_deleted_says_so_and_is_not_deleted_again(backend, kube):
    kube.add_trainjob("fit", deletionTimestamp="2026-01-01T00:09:00Z",
                      annotations={"kale-ext.io/ttl-seconds-after-finished": "0"})  # fmt: skip
    kube.set_conditions("fit", ("Complete", "True", "AllJobsCompleted", "done"))
    assert backend.get_job("fit").reason == "being deleted"
    assert kube.count("delete_namespaced_custom_object") == 0


def test_a_forbidden_cleanup_does_not_break_get_job(backend, kube, caplog):
    kube.add_trainjob("fit", annotations={"kale-ext.io/ttl-seconds-after-finished": "0"})
    kube.set_conditions("fit", ("Complete", "True", "AllJobsCompleted", "done"))
    kube.failures["delete_namespaced_custom_object"] = status_error(403, "Forbidden", "no delete")
    assert backend.get_job("fit").status is Status.COMPLETE
    assert "no delete" in caplog.text


# ----- events -------------------------------------------------------------------------------------


def test_events_of_the_job_and_everything_it_made_in_time_order(backend, kube):
    kube.add_trainjob("fit")
    kube.add_trainjob("fit-b")
    for kind, name, reason, seconds in [
        ("Pod", "fit-node-0-0-x7k2p", "FailedScheduling", 4),
        ("TrainJob", "fit", "Created", 1),
        ("Job", "fit-node-0", "SuccessfulCreate", 5),  # the SDK misses these
        ("JobSet", "fit", "JobSetCreated", 2),
        ("Workload", "trainjob-fit-3f2a1", "Admitted", 3),
        ("Pod", "fit-dataset-initializer-0-0-ab12c", "Pulled", 6),
        ("Job", "fit-b-node-0", "SuccessfulCreate", 5),  # another job whose name starts alike
        ("Pod", "fit-b-node-0-0-x7k2p", "Scheduled", 4),
        ("TrainJob", "fit-b", "Created", 1),
        ("ConfigMap", "fit", "Updated", 1),
    ]:
        kube.add_event(kind, name, reason, f"{reason} message", seconds)
    events = backend.events("fit")
    assert [(e.object, e.reason) for e in events] == [
        ("TrainJob/fit", "Created"),
        ("JobSet/fit", "JobSetCreated"),
        ("Workload/trainjob-fit-3f2a1", "Admitted"),
        ("Pod/fit-node-0-0-x7k2p", "FailedScheduling"),
        ("Job/fit-node-0", "SuccessfulCreate"),
        ("Pod/fit-dataset-initializer-0-0-ab12c", "Pulled"),
    ]
    assert events[0].time == "2026-01-01T00:00:01Z" and events[0].message == "Created message"


def test_events_of_a_missing_job(backend):
    with pytest.raises(NotFound):
        backend.events("nope")


# ----- delete -------------------------------------------------------------------------------------


def test_delete_and_delete_again(backend, kube):
    kube.add_trainjob("fit")
    kube.add_pod("fit", 0, "Running")
    backend.delete("fit")
    assert kube.mocks["delete_namespaced_custom_object"].call_args.kwargs["propagation_policy"] == (
        "Foreground"
    )
    assert kube.get("trainjobs", "fit") is None and kube.get("pods", "fit-node-0-0-abcde") is None
    with pytest.raises(NotFound) as info:
        backend.delete("fit")
    assert "job fit does not exist in namespace team: it was already deleted" in str(info.value)
    assert info.value.status == 404
