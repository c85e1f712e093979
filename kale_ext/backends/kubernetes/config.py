"""The connection to the cluster: the kubeconfig (or the in-cluster service account), the
namespace, and every API call's failure as a BackendError with the server's own message.

The SDK's constants (group, plurals, labels) are mirrored here; a test checks that they match.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ...job.trainjob import ANNOTATION
from ..base import BackendError, NotFound
from . import deadline

BACKEND = "kubernetes"
GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
TRAINJOBS = "trainjobs"
CLUSTER_RUNTIMES, RUNTIMES = "clustertrainingruntimes", "trainingruntimes"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
STEP_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
NODE = "node"  # the trainer's replicated job, and its container
STEPS = ("node", "launcher", "dataset-initializer", "model-initializer")
TTL = ANNOTATION + "ttl-seconds-after-finished"
CLEAN_POD_POLICY = ANNOTATION + "clean-pod-policy"
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
REQUEST_TIMEOUT = (10, 60)  # seconds to connect, and between bytes of an answer
STREAM_TIMEOUT = (10, None)  # a followed log may stay quiet for hours
#: Seconds a whole API call may take (connect, send, every byte of the answer; deadline.py): a
#: server that trickles its answer or never sends it is an error naming it, not a hang.
CALL_SECONDS = 60.0


# ----- errors --------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def transport_errors() -> tuple[type[BaseException], ...]:
    """What a kubernetes client call raises when the server says no or cannot be reached."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    return (ApiException, urllib3.exceptions.HTTPError, OSError)


_HINTS = {
    401: "the cluster rejected the credentials: refresh the kubeconfig (log in again)",
    403: "ask a cluster administrator for this permission",
    409: "choose another job name, or delete the existing job first",
    429: "the API server is throttling requests: try again shortly",
}


def api_error(exc: BaseException, what: str, host: str = "") -> BackendError:
    """The BackendError for a failed call: the HTTP status, the server's reason and message."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    if isinstance(exc, ApiException) and exc.status:
        return _status_error(exc.status, exc.reason or "", exc.body, what)
    at = f" at {host}" if host else ""
    # status 0: the client's own failure before any answer, e.g. TLS ("SSLError ...")
    cause = exc.reason if isinstance(exc, (ApiException, urllib3.exceptions.MaxRetryError)) else exc
    cause = " ".join(str(cause).split()) if isinstance(cause, str) else cause
    # urllib3 2 makes a refused connection (NewConnectionError) a kind of timeout: not here
    refused = isinstance(cause, urllib3.exceptions.NewConnectionError)
    if not refused and isinstance(cause, (TimeoutError, urllib3.exceptions.TimeoutError)):
        return BackendError(
            f"cannot {what}: the Kubernetes API server{at} did not answer in time", 504, "Timeout"
        )
    return BackendError(
        f"cannot {what}: cannot reach the Kubernetes API server{at}: {cause}", 503, "Unavailable"
    )


def _status_error(status: int, http_reason: str, body: Any, what: str) -> BackendError:
    """From a `Status` answer: {"message", "reason", "details": {"causes": [...]}}."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        answer = {}
    message = answer.get("message") or text.strip()[:500] or http_reason or "no message"
    reason = answer.get("reason") or http_reason
    causes = ((answer.get("details") or {}).get("causes")) or []
    extra = [
        f"{c.get('field')}: {c.get('message')}" if c.get("field") else c.get("message", "")
        for c in causes
        if c.get("message") and c["message"] not in message
    ]
    if extra:
        message += " (" + "; ".join(extra) + ")"
    out = f"cannot {what}: {message} (HTTP {status} {reason})"
    if status == 404 and (not answer or "could not find the requested resource" in message):
        out += "; the API server does not serve this resource: is Kubeflow Trainer v2 installed?"
    hint = _HINTS.get(status) or ("the API server failed: try again later" if status >= 500 else "")
    if hint:
        out += f"; {hint}"
    return NotFound(out) if status == 404 else BackendError(out, status, reason)


# ----- configuration ---------------------------------------------------------------------------


def load_config(config_file: str | None, context: str | None, in_cluster: bool):
    """A client Configuration of its own (never the process-wide default)."""
    import yaml
    from kubernetes import client, config

    configuration = client.Configuration()
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(
                config_file=config_file, context=context, client_configuration=configuration
            )
    except (config.ConfigException, OSError, ValueError, yaml.YAMLError) as e:
        where = "the in-cluster service account" if in_cluster else config_file or "~/.kube/config"
        raise BackendError(
            f"no usable Kubernetes configuration ({where}): {e}; set KUBECONFIG, pass "
            "config_file, or run inside a cluster",
            503,
            "NoKubeconfig",
        ) from None
    return configuration


#: The kubernetes client's private ApiClient methods api_client_class overrides or calls (every
#: client in pyproject.toml's range has them).
PRIVATE_METHODS = ("_ApiClient__deserialize_model", "_ApiClient__deserialize")


def _unsupported_client(missing: str) -> BackendError:
    """The error for a kubernetes client without ``missing``: which client, which to install."""
    from importlib import metadata

    import kubernetes

    try:  # the range pyproject.toml states, as installed
        wanted = [r for r in metadata.requires("kale_ext") or [] if r.startswith("kubernetes")]
    except metadata.PackageNotFoundError:
        wanted = []
    supported = wanted[0].replace("kubernetes", "", 1) if wanted else "see its pyproject.toml"
    return BackendError(
        f"the installed kubernetes client {kubernetes.__version__} has no ApiClient."
        f"{missing.removeprefix('_ApiClient')}, which kale_ext's Kubernetes backend overrides "
        f"(its models then share the client's Configuration): install a kubernetes client "
        f"kale_ext supports ({supported})",
        500,
        "UnsupportedClient",
    )


@lru_cache(maxsize=1)
def api_client_class() -> type:
    """The kubernetes client's ApiClient whose models share its Configuration (one class per
    process, for every Cluster).

    The client's generated models each make a ``Configuration()`` of their own when given none
    (about 30 µs: a logger and the CPU count), and its deserializer gives none: a pod is about a
    hundred models, so reading a job's two pods cost 6-7 ms of CPU, and a followed job is read
    every half second. The same classes with the same values are made here, each given the
    client's own Configuration (what their setters read: ``client_side_validation``). That
    overrides a private method of the client: a client without it is refused, saying so
    (otherwise the override would silently never run, or fail inside a read).
    """
    from kubernetes import client

    for name in PRIVATE_METHODS:
        if not callable(getattr(client.ApiClient, name, None)):
            raise _unsupported_client(name)

    class ApiClient(client.ApiClient):
        def _ApiClient__deserialize_model(self, data, klass):  # the client's, with the config
            if not klass.openapi_types and not hasattr(klass, "get_real_child_model"):
                return data
            kwargs = {}
            if (
                data is not None
                and klass.openapi_types is not None
                and isinstance(data, (list, dict))
            ):
                for attr, attr_type in klass.openapi_types.items():
                    if klass.attribute_map[attr] in data:
                        value = data[klass.attribute_map[attr]]
                        kwargs[attr] = self._ApiClient__deserialize(value, attr_type)
            instance = klass(**kwargs, local_vars_configuration=self.configuration)
            if hasattr(instance, "get_real_child_model"):
                klass_name = instance.get_real_child_model(data)
                if klass_name:
                    instance = self._ApiClient__deserialize(data, klass_name)
            return instance

    return ApiClient


def default_namespace(config_file: str | None, context: str | None, in_cluster: bool) -> str:
    """The kubeconfig context's namespace, or the service account's in a cluster, else default."""
    if in_cluster:
        try:
            with open(SERVICE_ACCOUNT_NAMESPACE) as f:
                return f.read().strip() or "default"
        except OSError:
            return "default"
    from kubernetes import config

    try:
        contexts, current = config.list_kube_config_contexts(config_file)
    except (config.ConfigException, OSError, ValueError):
        return "default"
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else current
    return ((chosen or {}).get("context") or {}).get("namespace") or "default"


# ----- the API of one namespace ----------------------------------------------------------------


class Cluster:
    """One namespace of a cluster through the kubernetes client; every failure a BackendError.

    The kubeconfig (``config_file``, else ``KUBECONFIG``, else ``~/.kube/config``) or, inside a
    cluster without one, the service account. The namespace is the given one, else the
    context's, else the service account's, else ``default``.
    """

    def __init__(
        self,
        namespace: str | None = None,
        config_file: str | None = None,
        context: str | None = None,
    ):
        from kubernetes import client

        config_file = config_file or os.environ.get("KUBECONFIG") or None
        in_cluster = config_file is None and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        configuration = load_config(config_file, context, in_cluster)
        self.namespace = namespace or default_namespace(config_file, context, in_cluster)
        self.host = configuration.host
        api = api_client_class()(configuration)
        deadline.install(api)  # every call within CALL_SECONDS in all
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        #: An optional API this cluster did not serve (or let the user read), and until when
        #: (time.monotonic) it is not asked again: kueue.py's visibility API
        self.unserved: dict[str, float] = {}

    def call(self, what: str, method: Callable, *args, **kwargs):
        """One API call, within CALL_SECONDS in all (a log read as a stream: until its answer
        begins; its lines then come as they come); every failure becomes a BackendError with the
        server's message."""
        kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
        seconds = CALL_SECONDS
        with deadline.within(seconds) as bound:
            try:
                return method(*args, **kwargs)
            except transport_errors() as e:
                if bound is not None and bound.expired:
                    raise BackendError(
                        f"cannot {what}: the Kubernetes API server at {self.host} did not answer "
                        f"within {seconds:g} s (kubernetes.config.CALL_SECONDS)",
                        504,
                        "Timeout",
                    ) from e
                raise api_error(e, what, self.host) from e

    def trainer_objects(self, what: str, verb: str, plural: str, *args, **kwargs):
        """``verb`` (get, list, create, delete) on trainer.kubeflow.org objects: the namespace's,
        or the cluster's for ClusterTrainingRuntimes."""
        if plural == CLUSTER_RUNTIMES:
            method = getattr(self.custom, f"{verb}_cluster_custom_object")
            return self.call(what, method, GROUP, VERSION, plural, *args, **kwargs)
        method = getattr(self.custom, f"{verb}_namespaced_custom_object")
        return self.call(what, method, GROUP, VERSION, self.namespace, plural, *args, **kwargs)

    def trainjob(self, name: str) -> dict:
        """The TrainJob in Kubernetes JSON form (NotFound when it does not exist)."""
        return self.trainer_objects(f"get TrainJob {self.namespace}/{name}", "get", TRAINJOBS, name)

    def pods(self, selector: str) -> list:
        """The namespace's pods that match the label ``selector``."""
        return self.call(
            f"list the pods in {self.namespace} ({selector})",
            self.core.list_namespaced_pod,
            self.namespace,
            label_selector=selector,
        ).items
