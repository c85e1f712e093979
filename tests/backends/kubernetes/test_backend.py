"""The Kubernetes backend against an in-memory API server (tests/fake_kube.py).

The fake sits where the cluster would: behind the kubernetes client's CustomObjectsApi and
CoreV1Api. Every TrainJob it receives is checked against the official v2.3.0 CRD.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from unittest import mock

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from kale_ext.backends.base import BackendError, NotFound, Status
from kale_ext.backends.kubernetes.backend import KubernetesBackend
from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook
from tests.harness.crd import runtime_manifest
from tests.harness.fake_kube import KUBECONFIG, FakeKube, plain_error, status_error

NB = notebook(
    ("lr = 0.1", ["parameters"]),
    "print(lr)",
)


@pytest.fixture
def kubeconfig(monkeypatch, tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return path


@pytest.fixture
def kube(monkeypatch, kubeconfig) -> FakeKube:
    fake = FakeKube("team")
    fake.install(monkeypatch)
    fake.add_runtime(runtime_manifest("torch-distributed"))
    return fake


@pytest.fixture
def backend(kube) -> KubernetesBackend:
    return KubernetesBackend(poll_interval=0.002)


def make_spec(options: dict | None = None, runtime: str = "torch-distributed"):
    return build_job_spec(
        compile_notebook(NB),
        {"name": "fit", **(options or {})},
        Runtime.from_manifest(runtime_manifest(runtime)),
    )


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def run(function, timeout: float = 10.0):
    """Run ``function`` in a thread; fail (instead of hanging) if it does not return in time."""
    result: dict = {}

    def target():
        try:
            result["value"] = function()
        except BaseException as e:  # re-raised below, in the test's thread
            result["error"] = e

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"still running after {timeout} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def lines(iterator) -> list[tuple]:
    return [(x.node, x.rank, x.text, x.offset) for x in run(lambda: list(iterator))]


# ----- set-up ------------------------------------------------------------------------------------


def test_importing_the_backend_stays_cheap():
    code = (
        "import sys, kale_ext.backends.kubernetes\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'kubeflow')]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_mirrored_constants_match_the_kubeflow_sdk():
    from kubeflow.trainer.constants import constants as sdk

    from kale_ext.backends.kubernetes import backend as k

    assert (k.GROUP, k.VERSION) == (sdk.GROUP, sdk.VERSION)
    assert (k.TRAINJOBS, k.RUNTIMES, k.CLUSTER_RUNTIMES) == (
        sdk.TRAINJOB_PLURAL,
        sdk.TRAINING_RUNTIME_PLURAL,
        sdk.CLUSTER_TRAINING_RUNTIME_PLURAL,
    )
    assert (k.JOBSET_LABEL, k.STEP_LABEL, k.INDEX_LABEL, k.NODE) == (
        sdk.JOBSET_NAME_LABEL,
        sdk.JOBSET_RJOB_NAME_LABEL,
        sdk.JOB_INDEX_LABEL,
        sdk.NODE,
    )
    assert k.FRAMEWORK_LABEL == sdk.RUNTIME_FRAMEWORK_LABEL


@dataclass
class NamespaceCase:
    name: str
    kwargs: dict
    expected: str
    in_cluster: str | None = None  # the service account's namespace file, when in a cluster


NAMESPACE_CASES = [
    NamespaceCase("the context's namespace", {}, "team"),
    NamespaceCase("an explicit namespace wins", {"namespace": "research"}, "research"),
    NamespaceCase("a context without a namespace", {"context": "bare"}, "default"),
    NamespaceCase("in a cluster: the service account's", {}, "ml-jobs", in_cluster="ml-jobs\n"),
    NamespaceCase("in a cluster without the file", {}, "default", in_cluster=""),
]


@pytest.mark.parametrize("case", NAMESPACE_CASES, ids=lambda c: c.name)
def test_namespace(case, kube, monkeypatch, tmp_path):
    if case.in_cluster is not None:
        monkeypatch.delenv("KUBECONFIG")
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
        monkeypatch.setattr("kubernetes.config.load_incluster_config", mock.Mock())
        path = tmp_path / "namespace"
        if case.in_cluster:
            path.write_text(case.in_cluster)
        monkeypatch.setattr(
            "kale_ext.backends.kubernetes.backend.SERVICE_ACCOUNT_NAMESPACE", str(path)
        )
    assert KubernetesBackend(**case.kwargs).namespace == case.expected


def test_the_kubeconfig_and_context_are_loaded_into_a_private_configuration(kube, kubeconfig):
    from kubernetes import client, config

    KubernetesBackend(context="bare")
    kwargs = config.load_kube_config.call_args.kwargs
    assert kwargs["config_file"] == str(kubeconfig) and kwargs["context"] == "bare"
    assert kwargs["client_configuration"] is not client.Configuration.get_default_copy()


@pytest.mark.parametrize(
    "content, expected",
    [(None, "No configuration found"), ("{not: [yaml", "kubeconfig")],
    ids=["missing", "not yaml"],
)
def test_an_unusable_kubeconfig_is_a_backend_error(content, expected, monkeypatch, tmp_path):
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(BackendError) as info:
        KubernetesBackend()
    assert info.value.status == 503 and info.value.reason == "NoKubeconfig"
    message = str(info.value)
    assert "no usable Kubernetes configuration" in message and str(path) in message
    assert "set KUBECONFIG" in message


# ----- errors ------------------------------------------------------------------------------------


@dataclass
class ErrorCase:
    name: str
    error: BaseException
    status: int
    reason: str
    says: tuple[str, ...]
    kind: type = BackendError


FORBIDDEN = (
    'trainjobs.trainer.kubeflow.org is forbidden: User "ana" cannot create resource "trainjobs" '
    'in API group "trainer.kubeflow.org" in the namespace "team"'
)
ERROR_CASES = [
    ErrorCase("401", status_error(401, "Unauthorized", "Unauthorized"), 401, "Unauthorized",
              ("Unauthorized", "refresh the kubeconfig")),
    ErrorCase("403", status_error(403, "Forbidden", FORBIDDEN), 403, "Forbidden",
              (FORBIDDEN, "HTTP 403 Forbidden")),
    ErrorCase("404 without the CRD", plain_error(404, "404 page not found\n"), 404, "NotFound",
              ("404 page not found", "is Kubeflow Trainer v2 installed?"), NotFound),
    ErrorCase("409", status_error(409, "AlreadyExists", 'trainjobs.trainer.kubeflow.org "fit" already exists'),
              409, "AlreadyExists", ('"fit" already exists', "choose another job name")),
    ErrorCase("422 with causes", status_error(
        422, "Invalid", 'TrainJob.trainer.kubeflow.org "fit" is invalid: [spec.trainer.numNodes: Invalid value]',
        [{"reason": "FieldValueInvalid", "field": "spec.trainer.numNodes", "message": "Invalid value: 0: must be >= 1"}]),
        422, "Invalid", ('"fit" is invalid', "spec.trainer.numNodes: Invalid value: 0: must be >= 1")),
    ErrorCase("400 strict decoding", status_error(
        400, "BadRequest", 'strict decoding error: unknown field "spec.trainer.numProcs"'),
        400, "BadRequest", ('unknown field "spec.trainer.numProcs"',)),
    ErrorCase("429", status_error(429, "TooManyRequests", "too many requests, please try again later"),
              429, "TooManyRequests", ("too many requests", "throttling")),
    ErrorCase("500 webhook", status_error(
        500, "InternalError", 'Internal error occurred: failed calling webhook "validate.trainjob.trainer.kubeflow.org"'),
        500, "InternalError", ('failed calling webhook "validate.trainjob', "try again later")),
    ErrorCase("503", status_error(503, "ServiceUnavailable", "the server is currently unable to handle the request"),
              503, "ServiceUnavailable", ("unable to handle the request",)),
    ErrorCase("read timeout", urllib3.exceptions.ReadTimeoutError(None, "/apis", "Read timed out."),
              504, "Timeout", ("did not answer in time", "https://cluster.invalid:6443")),
    ErrorCase("socket timeout", TimeoutError("timed out"), 504, "Timeout", ("did not answer in time",)),
    ErrorCase("connection refused", urllib3.exceptions.MaxRetryError(
        None, "/apis", urllib3.exceptions.NewConnectionError(None, "Connection refused")),
        503, "Unavailable", ("cannot reach the Kubernetes API server", "Connection refused")),
    ErrorCase("TLS failure", ApiException(status=0, reason="SSLError\n[SSL: CERTIFICATE_VERIFY_FAILED]"),
              503, "Unavailable", ("cannot reach the Kubernetes API server", "SSLError [SSL: CERTIFICATE_VERIFY_FAILED]")),
]  # fmt: skip


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_api_errors_carry_the_status_and_the_servers_own_message(case, kube):
    kube.failures["create_namespaced_custom_object"] = case.error
    backend = KubernetesBackend()
    backend.host = "https://cluster.invalid:6443"
    with pytest.raises(case.kind) as info:
        backend.submit(make_spec())
    err = info.value
    assert (err.status, err.reason) == (case.status, case.reason)
    message = str(err)
    assert message.startswith("cannot create TrainJob team/fit: ")
    for text in case.says:
        assert text in message
    assert "Traceback" not in message and "HTTP response headers" not in message
    assert err.to_dict()["status"] == case.status


def test_errors_of_reads_are_mapped_too(backend, kube):
    with pytest.raises(NotFound, match='trainjobs.trainer.kubeflow.org "nope" not found'):
        backend.get_job("nope")
    kube.failures["list_namespaced_custom_object"] = status_error(403, "Forbidden", FORBIDDEN)
    with pytest.raises(BackendError, match="cannot list TrainJobs in team") as info:
        backend.list_jobs()
    assert info.value.status == 403


# ----- runtimes ----------------------------------------------------------------------------------


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


# ----- submit ------------------------------------------------------------------------------------


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


def test_the_example_notebook_through_the_one_submit_path(kube):
    """What the end-to-end test does on a cluster, here on the fake: choose, compile, submit."""
    from kale_ext.backends.submit import choose_backend, submit_notebook
    from tests.conftest import EXAMPLES

    backend, why = choose_backend()
    assert isinstance(backend, KubernetesBackend) and why.startswith("KUBECONFIG points at")
    name, spec = submit_notebook(backend, EXAMPLES / "plain_python.ipynb", {"cpu": 1})
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


# ----- status ------------------------------------------------------------------------------------

UNSCHEDULABLE = {
    "containers": False,
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}],
}  # fmt: skip
IMAGE_PULL = {"state": {"waiting": {"reason": "ImagePullBackOff",
                                    "message": 'Back-off pulling image "repo/img:bad"'}}}  # fmt: skip
OOM = {"state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
EXIT_3 = {"state": {"terminated": {"exitCode": 3, "reason": "Error"}}}
CRASH_LOOP = {
    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting"}},
    "last_state": {"terminated": {"exitCode": 1, "reason": "Error"}},
    "restart_count": 2,
}
SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")
KUEUE = {"kueue.x-k8s.io/queue-name": "team-a"}


@dataclass
class StatusCase:
    name: str
    status: Status
    reason: str | None = None  # expected within the reason; None: no reason at all
    conditions: tuple = ()
    pods: tuple = ()  # (index, phase, extra)
    labels: dict = field(default_factory=dict)
    suspend: bool = False


STATUS_CASES = [
    StatusCase("no status and no pods yet", Status.CREATED),
    StatusCase("unschedulable", Status.QUEUED, "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
               pods=((0, "Pending", UNSCHEDULABLE),)),
    StatusCase("image pull back-off", Status.QUEUED, 'ImagePullBackOff: Back-off pulling image "repo/img:bad"',
               pods=((0, "Pending", IMAGE_PULL),)),
    StatusCase("containers being created", Status.QUEUED, "ContainerCreating", pods=((0, "Pending", {}),)),
    StatusCase("all nodes running", Status.RUNNING, pods=((0, "Running", {}), (1, "Running", {}))),
    StatusCase("one node still unscheduled", Status.QUEUED, "Unschedulable",
               pods=((0, "Running", {}), (1, "Pending", UNSCHEDULABLE))),
    StatusCase("suspended", Status.QUEUED, "suspended", conditions=(SUSPENDED,)),
    StatusCase("suspended in the spec, before the condition", Status.QUEUED, "suspended", suspend=True),
    StatusCase("waiting in a Kueue queue", Status.QUEUED, "waiting for Kueue queue team-a",
               conditions=(SUSPENDED,), labels=KUEUE, suspend=True),
    StatusCase("resumed by Kueue and running (the SDK says Created)", Status.RUNNING,
               conditions=(RESUMED,), labels=KUEUE, pods=((0, "Running", {}),)),
    StatusCase("resumed by Kueue, pods unscheduled", Status.QUEUED, "Unschedulable",
               conditions=(RESUMED,), labels=KUEUE, pods=((0, "Pending", UNSCHEDULABLE),)),
    StatusCase("a node crash-looping", Status.RUNNING, "node 1: CrashLoopBackOff after Error (exit code 1)",
               pods=((0, "Running", {}), (1, "Running", CRASH_LOOP))),
    StatusCase("pods done, condition not yet written", Status.RUNNING, pods=((0, "Succeeded", {}),)),
    StatusCase("complete", Status.COMPLETE, conditions=(
        ("Complete", "True", "AllJobsCompleted", "jobset completed successfully"),), pods=((0, "Succeeded", {}),)),
    StatusCase("a false Complete condition is not completion", Status.RUNNING, conditions=(
        ("Complete", "False", "JobsRunning", ""),), pods=((0, "Running", {}),)),
    StatusCase("out of memory", Status.FAILED, "node 0: OOMKilled (exit code 137); FailedJobs: jobset failed", conditions=(
        ("Failed", "True", "FailedJobs", "jobset failed"),), pods=((0, "Failed", OOM), (1, "Succeeded", {}))),
    StatusCase("the container's exit code", Status.FAILED, "node 0: Error (exit code 3)", conditions=(
        ("Failed", "True", "FailedJobs", "jobset failed"),), pods=((0, "Failed", EXIT_3),)),
    StatusCase("deadline exceeded", Status.FAILED, "DeadlineExceeded: TrainJob exceeded its activeDeadlineSeconds",
               conditions=(("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its activeDeadlineSeconds"),)),
    StatusCase("backoff limit", Status.FAILED, "BackoffLimitExceeded: Job has reached the specified backoff limit",
               conditions=(("Failed", "True", "FailedJobs",
                            'job "fit-node-0" failed: BackoffLimitExceeded: Job has reached the specified backoff limit'),)),
]  # fmt: skip


def add_status_case(kube: FakeKube, case: StatusCase) -> None:
    kube.add_trainjob("fit", num_nodes=2, labels=case.labels)
    if case.suspend:
        kube.get("trainjobs", "fit")["spec"]["suspend"] = True
    if case.conditions:
        kube.set_conditions("fit", *case.conditions)
    for index, phase, extra in case.pods:
        kube.add_pod("fit", index, phase, **extra)


@pytest.mark.parametrize("case", STATUS_CASES, ids=lambda c: c.name)
def test_status_from_conditions_and_pods(case, backend, kube):
    add_status_case(kube, case)
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is case.status
        if case.reason is None:
            assert info.reason is None
        else:
            assert case.reason in info.reason


def test_job_info_fields(backend, kube):
    kube.add_trainjob(
        "fit",
        num_nodes=2,
        procs=4,
        annotations={"kale-ext.io/notebook": "nb.ipynb", "kale-ext.io/source-sha256": "abc"},
    )
    kube.set_conditions(
        "fit", ("Failed", "True", "FailedJobs", "jobset failed", "2026-01-01T00:05:00Z")
    )
    kube.add_pod("fit", 0, "Failed", **OOM)
    kube.add_pod("fit", 1, "Running", suffix="old", created=1)
    kube.add_pod("fit", 1, "Succeeded", suffix="new", created=9)  # the newest pod of a node counts
    kube.add_pod("fit", 0, "Running", step="dataset-initializer")  # not a training node
    info = backend.get_job("fit")
    assert (info.name, info.backend, info.runtime) == ("fit", "kubernetes", "torch-distributed")
    assert (info.num_nodes, info.procs_per_node) == (2, 4)
    assert (info.created, info.finished) == ("2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z")
    assert info.provenance == {
        "kale-ext.io/notebook": "nb.ipynb",
        "kale-ext.io/source-sha256": "abc",
    }
    assert [(n.index, n.state, n.reason, n.exit_code) for n in info.nodes] == [
        (0, "Failed", "OOMKilled (exit code 137)", 137),
        (1, "Succeeded", None, 0),
    ]


def test_a_job_that_never_starts_says_why_from_its_events(backend, kube):
    kube.add_trainjob("fit")
    kube.add_event("TrainJob", "fit", "TrainJobResourcesCreationFailed",
                   'JobSet.jobset.x-k8s.io "fit" is invalid: pod name too long', 5, "Warning")  # fmt: skip
    info = backend.get_job("fit")
    assert info.status is Status.CREATED
    assert info.reason == (
        'TrainJobResourcesCreationFailed: JobSet.jobset.x-k8s.io "fit" is invalid: pod name too long'
    )


def test_list_jobs_takes_two_calls_however_many_jobs(backend, kube):
    for i in range(5):
        kube.add_trainjob(f"job-{i}", num_nodes=2, creationTimestamp=f"2026-01-01T00:0{i}:00Z")
        kube.add_pod(f"job-{i}", 0, "Running")
        kube.add_pod(f"job-{i}", 1, "Pending", **IMAGE_PULL)
    kube.calls.clear()
    jobs = backend.list_jobs()
    assert [j.name for j in jobs] == [f"job-{i}" for i in reversed(range(5))]  # newest first
    assert all(j.status is Status.QUEUED and "ImagePullBackOff" in j.reason for j in jobs)
    assert sorted(c[0] for c in kube.calls) == [
        "list_namespaced_custom_object",
        "list_namespaced_pod",
    ]


# ----- run policy --------------------------------------------------------------------------------


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


# ----- events ------------------------------------------------------------------------------------


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


# ----- delete ------------------------------------------------------------------------------------


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


# ----- logs --------------------------------------------------------------------------------------


def two_nodes(kube: FakeKube, phase: str = "Succeeded") -> None:
    """A job of 2 nodes × 2 processes whose lines carry torchrun's local-rank prefixes."""
    kube.add_trainjob("fit", num_nodes=2, procs=2)
    kube.logs[kube.add_pod("fit", 0, phase)].write("[default0]:a", "[default1]:b", "plain")
    kube.logs[kube.add_pod("fit", 1, phase)].write("[default0]:c", "[default1]:d")
    if phase == "Succeeded":
        for log in kube.logs.values():
            log.end()


NODE_0 = [(0, 0, "a", 1), (0, 1, "b", 2), (0, None, "plain", 3)]
NODE_1 = [(1, 2, "c", 1), (1, 3, "d", 2)]


@dataclass
class LogCase:
    name: str
    kwargs: dict
    expected: list


LOG_CASES = [
    LogCase("all nodes, one after another, ranked", {}, NODE_0 + NODE_1),
    LogCase("one node", {"node": 1}, NODE_1),
    LogCase("tail keeps the last lines of each node", {"tail": 1}, [NODE_0[-1], NODE_1[-1]]),
    LogCase("tail 0", {"tail": 0}, []),
    LogCase("resume after offsets", {"offsets": {0: 2, 1: 2}}, [NODE_0[-1]]),
    LogCase("offsets from JSON (string keys)", {"offsets": {"0": 1}}, NODE_0[1:] + NODE_1),
    LogCase("tail after offsets", {"offsets": {0: 1}, "tail": 5}, NODE_0[1:] + NODE_1),
    LogCase("follow a finished job", {"follow": True}, None),  # same lines, any interleaving
]


@pytest.mark.parametrize("case", LOG_CASES, ids=lambda c: c.name)
def test_logs(case, backend, kube):
    two_nodes(kube)
    got = lines(backend.logs("fit", **case.kwargs))
    if case.expected is None:
        assert [g for g in got if g[0] == 0] == NODE_0 and [g for g in got if g[0] == 1] == NODE_1
    else:
        assert got == case.expected


@pytest.mark.parametrize("cut", range(6))
def test_resuming_with_offsets_loses_and_repeats_nothing(cut, backend, kube):
    two_nodes(kube, phase="Running")
    first = lines(backend.logs("fit"))[:cut]
    offsets = {node: offset for node, _, _, offset in first}  # the last offset seen per node
    kube.logs["fit-node-0-0-abcde"].write("[default0]:e")
    rest = lines(backend.logs("fit", offsets=offsets))
    assert sorted(first + rest, key=repr) == sorted([*NODE_0, (0, 0, "e", 4), *NODE_1], key=repr)


def test_the_last_line_without_a_newline_is_not_lost(backend, kube):
    kube.add_trainjob("fit")
    kube.logs[kube.add_pod("fit", 0)].write(
        "Traceback (most recent call last):", "Boom", newline=False
    )
    assert [t for _, _, t, _ in lines(backend.logs("fit"))] == [
        "Traceback (most recent call last):",
        "Boom",
    ]


def test_a_restarted_container_shows_the_previous_log(backend, kube):
    kube.add_trainjob("fit")
    log = kube.logs[kube.add_pod("fit", 0, "Running", **CRASH_LOOP)]
    log.write("[default0]:loading", "[default0]:Killed")
    log.restart()  # waiting to start again: only the previous container has a log
    assert [t for _, _, t, _ in lines(backend.logs("fit"))] == ["loading", "Killed"]
    assert kube.mocks["read_namespaced_pod_log"].call_args.kwargs["previous"] is True


def test_no_logs_of_a_pending_pod_without_follow(backend, kube):
    kube.add_trainjob("fit", num_nodes=2)
    kube.logs[kube.add_pod("fit", 0)].write("x")
    kube.add_pod("fit", 1, "Pending")
    assert lines(backend.logs("fit")) == [(0, 0, "x", 1)]  # one process per node: rank = node


def test_logs_of_a_node_that_does_not_exist(backend, kube):
    kube.add_trainjob("fit", num_nodes=2)
    with pytest.raises(NotFound, match="job fit has no node 2: its nodes are 0 to 1"):
        backend.logs("fit", node=2)
    with pytest.raises(NotFound):
        backend.logs("nope")


def finish(kube: FakeKube, job: str = "fit") -> None:
    """Every container ends, every pod succeeds, the job completes."""
    for name, log in kube.logs.items():
        log.end()
        if name.startswith(f"{job}-"):
            kube.set_pod(name, "Succeeded", {"terminated": {"exitCode": 0, "reason": "Completed"}})
    kube.set_conditions(job, ("Complete", "True", "AllJobsCompleted", "done"))


def test_follow_waits_for_a_pending_pod_then_streams(backend, kube):
    kube.add_trainjob("fit")
    pod = kube.add_pod("fit", 0, "Pending")

    def scheduled(calls):  # the third look finds the pod running
        if calls == 3:
            kube.set_pod(pod, "Running")
            kube.logs[pod].write("[default0]:started")

    kube.hooks["list_namespaced_pod"] = scheduled
    stream = backend.logs("fit", follow=True)
    assert run(lambda: next(stream)).text == "started"
    assert kube.count("list_namespaced_pod") >= 3  # it waited instead of returning nothing
    kube.logs[pod].write("[default0]:step 1")
    assert run(lambda: next(stream)).text == "step 1"  # a line written after the stream opened
    kube.logs[pod].write("[default0]:done")
    finish(kube)
    assert [x.text for x in run(lambda: list(stream))] == ["done"]


def test_follow_multiplexes_the_nodes_as_their_lines_come(backend, kube):
    two_nodes(kube, phase="Running")
    late = kube.add_pod("fit", 1, "Pending", suffix="later", created=5)  # node 1's newest pod

    def progress(calls):
        if calls == 4:
            kube.set_pod(late, "Running")
            kube.logs[late].write("[default0]:node 1 started late")
            finish(kube)

    kube.hooks["list_namespaced_pod"] = progress
    got = lines(backend.logs("fit", follow=True))
    assert [g for g in got if g[0] == 0] == NODE_0
    assert [g for g in got if g[0] == 1] == [(1, 2, "node 1 started late", 1)]


def test_follow_resumes_after_offsets(backend, kube):
    two_nodes(kube)
    got = lines(backend.logs("fit", follow=True, offsets={0: 2, 1: 1}))
    assert sorted(got, key=str) == sorted([NODE_0[2], NODE_1[1]], key=str)


def test_follow_with_tail_then_new_lines(backend, kube):
    two_nodes(kube, phase="Running")
    stream = backend.logs("fit", node=0, follow=True, tail=1)
    assert run(lambda: next(stream)).text == "plain"
    kube.logs["fit-node-0-0-abcde"].write("[default1]:new")
    line = run(lambda: next(stream))
    assert (line.rank, line.text, line.offset) == (1, "new", 4)
    finish(kube)
    assert run(lambda: list(stream)) == []


def test_follow_ends_when_the_job_fails_before_its_pod_runs(backend, kube):
    kube.add_trainjob("fit")
    kube.add_pod("fit", 0, "Pending", **IMAGE_PULL)

    def fail(calls):
        if calls == 3:
            kube.set_conditions("fit", ("Failed", "True", "DeadlineExceeded", "too slow"))
            del kube.objects[("pods", "team")]["fit-node-0-0-abcde"]

    kube.hooks["get_namespaced_custom_object"] = fail
    assert lines(backend.logs("fit", follow=True)) == []


def test_follow_reads_a_restarted_container_from_its_first_line(backend, kube):
    kube.add_trainjob("fit")
    pod = kube.add_pod("fit", 0, "Running")
    log = kube.logs[pod]
    log.write("[default0]:try 1", "[default0]:Killed")
    log.end()  # the container died; it restarts

    def restarted(calls):
        if calls == 3:
            log.restart()
            log.write("[default0]:try 2")
            log.end()
            status = kube.get("pods", pod)["status"]["containerStatuses"][0]
            status["containerID"], status["restartCount"] = "containerd://second", 1
        if calls == 5:
            finish(kube)

    kube.hooks["list_namespaced_pod"] = restarted
    assert lines(backend.logs("fit", follow=True)) == [
        (0, 0, "try 1", 1),
        (0, 0, "Killed", 2),
        (0, 0, "try 2", 1),
    ]


def test_closing_a_followed_log_closes_its_streams(backend, kube):
    two_nodes(kube, phase="Running")
    stream = backend.logs("fit", follow=True)
    got = run(lambda: [next(stream) for _ in NODE_0 + NODE_1])  # both streams open, then quiet
    assert len(got) == 5
    stream.close()  # the reader goes away, e.g. a browser tab closed
    assert len(kube.streams) == 2 and all(s.closed for s in kube.streams)
