"""The connection to the cluster (kale_ext/backends/kubernetes/config.py): the kubeconfig, the
namespace, and every API failure as a BackendError with the server's own message, through the
backend against the fake cluster (tests/harness/fake_kube.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException
from packaging.specifiers import SpecifierSet

from kale_ext.backends.base import BackendError, NotFound
from kale_ext.backends.kubernetes import KubernetesBackend, config
from kale_ext.job.runtimes import FRAMEWORK_LABEL
from tests.harness.fake_kube import plain_error, status_error
from tests.harness.kube_fixtures import make_spec

# ----- set-up -------------------------------------------------------------------------------------


def test_the_mirrored_constants_match_the_kubeflow_sdk():
    from kubeflow.trainer.constants import constants as sdk

    from kale_ext.backends.kubernetes import config as k

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
    assert FRAMEWORK_LABEL == sdk.RUNTIME_FRAMEWORK_LABEL


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
            "kale_ext.backends.kubernetes.config.SERVICE_ACCOUNT_NAMESPACE", str(path)
        )
    assert KubernetesBackend(**case.kwargs).namespace == case.expected


def test_the_kubeconfig_and_context_are_loaded_into_a_private_configuration(kube, kubeconfig):
    from kubernetes import client, config

    KubernetesBackend(context="bare")
    kwargs = config.load_kube_config.call_args.kwargs
    assert kwargs["config_file"] == str(kubeconfig) and kwargs["context"] == "bare"
    assert kwargs["client_configuration"] is not client.Configuration.get_default_copy()


def test_the_models_read_share_the_clients_configuration(kube, monkeypatch):
    """A pod is about a hundred models, each of which made a Configuration() of its own (30 µs:
    6-7 ms of CPU for a job's two pods, read every poll of `--follow`): the same models now,
    equal to the client's own, and not one Configuration made for them."""
    from kubernetes import client

    pods = json.loads((Path(__file__).parent / "recorded" / "evicted.json").read_text())["pods"]
    answer = mock.Mock(data=json.dumps({"items": pods * 3, "metadata": {}}))
    theirs = client.ApiClient().deserialize(answer, "V1PodList")
    api = KubernetesBackend().core.api_client
    made = []
    real_init = client.Configuration.__init__
    monkeypatch.setattr(client.Configuration, "__init__",
                        lambda self, *a, **k: made.append(1) or real_init(self, *a, **k))  # fmt: skip
    ours = api.deserialize(answer, "V1PodList")
    assert made == []  # before: one a model, 62 here
    assert ours == theirs and ours.items[0].status.start_time == theirs.items[0].status.start_time
    assert ours.items[0].metadata.local_vars_configuration is api.configuration


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


# ----- errors -------------------------------------------------------------------------------------


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


def test_every_cluster_shares_one_client_class_and_one_set_of_pool_classes(kube):
    """The ApiClient subclass and the deadline's connection pools are made once a process, not
    once a Cluster (each new class costs its creation and keeps its own method caches)."""
    first, second = KubernetesBackend(), KubernetesBackend()
    one, other = first.core.api_client, second.core.api_client
    assert type(one) is type(other) is config.api_client_class()
    pools = [a.rest_client.pool_manager.pool_classes_by_scheme for a in (one, other)]
    assert pools[0] == pools[1] and pools[0] is not pools[1]  # the same classes, a dict each
    assert set(pools[0]) == {"http", "https"}


@pytest.fixture
def fresh_client_class():
    config.api_client_class.cache_clear()
    yield
    config.api_client_class.cache_clear()


@pytest.mark.parametrize("missing", ("_ApiClient__deserialize_model", "_ApiClient__deserialize"))
def test_a_kubernetes_client_without_the_private_method_overridden_is_refused_saying_so(
    kube, monkeypatch, fresh_client_class, missing
):
    """A client whose ApiClient lost the private method the backend overrides (or calls) is a
    clear error, not an override that never runs or an AttributeError inside a read."""
    import kubernetes
    from kubernetes import client

    monkeypatch.delattr(client.ApiClient, missing)
    with pytest.raises(BackendError) as caught:
        KubernetesBackend()
    said = str(caught.value)
    assert said.startswith(
        f"the installed kubernetes client {kubernetes.__version__} has no ApiClient."
        f"{missing.removeprefix('_ApiClient')}, which kale_ext's Kubernetes backend overrides "
        "(its models then share the client's Configuration): install a kubernetes client "
        "kale_ext supports ("
    )
    supported = SpecifierSet(said.rsplit("(", 1)[1].rstrip(")"))  # pyproject.toml's range
    assert kubernetes.__version__ in supported and "27.1" not in supported
    assert caught.value.reason == "UnsupportedClient"
