"""Kubernetes backend: jobs as Kubeflow Trainer v2.3.0 TrainJobs on a cluster.

Which library does what, and why:

- The TrainJob body is :func:`kale_ext.trainjob.trainjob_dict`, built from the Kubeflow SDK's
  own models (``kubeflow_trainer_api``). The SDK's ``train()`` cannot express requests ≠ limits,
  ``numProcPerNode``, ``suspend``, env ``valueFrom`` or our byte-exact command, and it posts
  without ``fieldValidation=Strict``, so the server would prune unknown fields silently.
- Every call goes through the kubernetes client directly rather than through ``TrainerClient``.
  The SDK 0.5.0's KubernetesBackend does the following, each of which is wrong for us:

  * it hides the API server's message behind ``RuntimeError("Failed to ...")`` and lets a
    ``ConfigException`` escape when there is no kubeconfig;
  * it loads the kubeconfig into the process-wide default configuration, takes the namespace
    from the default kubeconfig even when given another ``config_file``, and reads a ConfigMap
    in ``kubeflow-system`` at start-up (a 403 warning in multi-tenant clusters);
  * it tolerates only a 404 on the namespaced runtime list (not a 403), and its Runtime type
    lacks the replicated job names that the job-name length check needs;
  * it never reports Running for a Kueue-resumed job (sdk#803), has no Queued state, and looks
    up the runtime once per job (N+1 calls in ``list_jobs``);
  * it returns no logs for a Pending pod (sdk#182), one node per call, with no tail and no resume;
  * it misses the events of the Jobs (named ``<job>-node-0``).

  The SDK's constants (group, plurals, labels) are mirrored below; a test checks that they match.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ...job.distributed import quantity_value
from ...job.runtimes import FRAMEWORK_LABEL, Runtime
from ...job.spec import JobSpec
from ...job.trainjob import ANNOTATION, KUEUE_QUEUE, trainjob_dict
from ..base import (
    Backend,
    BackendError,
    Event,
    JobInfo,
    LogLine,
    NodeState,
    NotFound,
    Status,
    Submitted,
    split_rank,
)

log = logging.getLogger(__name__)

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
_DONE_PHASES = ("Succeeded", "Failed")


# ----- errors --------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _transport_errors() -> tuple[type[BaseException], ...]:
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


def _load_config(config_file: str | None, context: str | None, in_cluster: bool):
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


def _default_namespace(config_file: str | None, context: str | None, in_cluster: bool) -> str:
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


# ----- job status from the TrainJob and its pods ------------------------------------------------


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _said(reason: str | None, message: str | None) -> str | None:
    """Reason and message as kubectl describe joins them."""
    if reason and message:
        return f"{reason}: {message}"
    return reason or message or None


def _exit(terminated) -> str:
    return f"{terminated.reason or 'exited'} (exit code {terminated.exit_code})"


def _node_container(pod):
    return next((c for c in pod.status.container_statuses or [] if c.name == NODE), None)


def _restarts(pod) -> int:
    container = _node_container(pod)
    return (container.restart_count or 0) if container else 0


def _log_source(pod) -> tuple[str, str | None]:
    """Which container log the API serves for the node: a new one after a restart or a new pod
    (while a restarted container waits, the API still serves the one that ended)."""
    container = _node_container(pod)
    return pod.metadata.name, container.container_id if container else None


def _node_reason(pod) -> str | None:
    """Why a node is not simply running or done: an exit, a wait, an eviction, the scheduler."""
    status = pod.status
    container = _node_container(pod)
    state = container.state if container else None
    ended = state.terminated if state else None
    waiting = state.waiting if state else None
    last = container.last_state.terminated if container and container.last_state else None
    if ended and (ended.exit_code or ended.reason not in (None, "Completed")):
        return _exit(ended)
    if waiting and waiting.reason:
        return f"{waiting.reason} after {_exit(last)}" if last else _said(*_wait(waiting))
    if status.reason:
        return _said(status.reason, status.message)
    unscheduled = next(
        (c for c in status.conditions or [] if c.type == "PodScheduled" and c.status == "False"),
        None,
    )
    return _said(unscheduled.reason, unscheduled.message) if unscheduled else None


def _wait(waiting) -> tuple[str, str | None]:
    # ContainerCreating and PodInitializing are normal steps: their reason alone says enough
    normal = waiting.reason in ("ContainerCreating", "PodInitializing")
    return waiting.reason, None if normal else waiting.message


def node_states(pods: Iterable) -> list[NodeState]:
    """One state per node index, from the newest pod of each index."""
    newest: dict[int, Any] = {}
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    for pod in sorted(pods, key=lambda p: p.metadata.creation_timestamp or epoch):
        index = (pod.metadata.labels or {}).get(INDEX_LABEL)
        if index is not None:
            newest[int(index)] = pod
    out = []
    for index in sorted(newest):
        pod = newest[index]
        container = _node_container(pod)
        ended = container.state.terminated if container and container.state else None
        out.append(
            NodeState(
                index=index,
                state=pod.status.phase or "Pending",
                reason=_node_reason(pod),
                exit_code=ended.exit_code if ended else None,
            )
        )
    return out


def _conditions(obj: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}


def _finished_condition(obj: dict) -> dict | None:
    conditions = _conditions(obj)
    for kind in ("Failed", "Complete"):
        if (conditions.get(kind) or {}).get("status") == "True":
            return conditions[kind]
    return None


def job_status(obj: dict, nodes: list[NodeState]) -> tuple[Status, str | None]:
    """The status and its plain reason: conditions first, then what the pods say.

    Trainer v2.3.0 has no Running condition, and a Kueue-resumed job keeps `Suspended=False`:
    running pods make a job Running; a pending pod makes it Queued with the scheduler's reason.
    """
    finished = _finished_condition(obj)
    if finished is not None and finished["type"] == "Failed":
        culprit = next((f"node {n.index}: {n.reason}" for n in nodes if n.reason), None)
        base = _said(finished.get("reason"), finished.get("message"))
        return Status.FAILED, "; ".join(x for x in (culprit, base) if x) or None
    if finished is not None:
        return Status.COMPLETE, None
    suspended = (_conditions(obj).get("Suspended") or {}).get("status") == "True"
    if suspended or (obj.get("spec") or {}).get("suspend"):
        queue_name = (obj["metadata"].get("labels") or {}).get(KUEUE_QUEUE)
        return Status.QUEUED, f"waiting for Kueue queue {queue_name}" if queue_name else "suspended"
    pending = [n for n in nodes if n.state == "Pending"]
    if pending:
        return Status.QUEUED, next((n.reason for n in pending if n.reason), "pods are starting")
    if nodes:
        trouble = (f"node {n.index}: {n.reason}" for n in nodes if n.reason)
        return Status.RUNNING, next(trouble, None)
    return Status.CREATED, None


def job_info(obj: dict, pods: Iterable) -> JobInfo:
    """A JobInfo from a TrainJob (Kubernetes JSON form) and its node pods."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    trainer = spec.get("trainer") or {}
    nodes = node_states(pods)
    status, reason = job_status(obj, nodes)
    if meta.get("deletionTimestamp"):  # Foreground deletion: gone once its pods are
        reason = f"being deleted; {reason}" if reason else "being deleted"
    finished = _finished_condition(obj)
    notes = meta.get("annotations") or {}
    return JobInfo(
        name=meta["name"],
        status=status,
        backend=KubernetesBackend.name,
        runtime=(spec.get("runtimeRef") or {}).get("name", ""),
        num_nodes=trainer.get("numNodes") or max(len(nodes), 1),
        procs_per_node=trainer.get("numProcPerNode") or 1,
        reason=reason,
        nodes=nodes,
        created=meta.get("creationTimestamp"),
        finished=finished.get("lastTransitionTime") if finished else None,
        provenance={k: v for k, v in notes.items() if k.startswith(ANNOTATION)},
    )


def _belongs_to(job: str) -> Callable[[str | None, str | None], bool]:
    """Whether an event's object (kind, name) is the job's TrainJob, JobSet, a Job, a pod, or
    its Kueue Workload: matched by the names Trainer and JobSet give them, not just prefixes."""
    j, steps = re.escape(job), "|".join(STEPS)
    patterns = {
        "TrainJob": re.compile(j),
        "JobSet": re.compile(j),
        "Job": re.compile(rf"{j}-({steps})-\d+"),
        "Pod": re.compile(rf"{j}-({steps})-\d+-\d+-[a-z0-9]+"),
        "Workload": re.compile(rf"trainjob-{j}-[0-9a-f]{{5}}"),
    }
    return lambda kind, name: kind in patterns and bool(patterns[kind].fullmatch(name or ""))


# ----- resources -------------------------------------------------------------------------------


def _per_node_request(spec: JobSpec) -> dict[str, str]:
    """What one training node asks the scheduler for: requests, else limits."""
    return {**spec.config.limits, **spec.config.requests}


def _allocatable(node) -> dict[str, str]:
    return (node.status.allocatable if node.status else None) or {}


def _has_room(node, need: dict[str, str]) -> bool:
    allocatable = _allocatable(node)
    return all(
        k in allocatable and quantity_value(allocatable[k]) >= quantity_value(v)
        for k, v in need.items()
    )


def _shortfall(nodes: list, need: dict[str, str]) -> str:
    """Per resource that no node has enough of: what was asked and the most any node has."""
    parts = []
    for key, asked in need.items():
        node = max(nodes, key=lambda n: quantity_value(_allocatable(n).get(key, "0")))
        held = _allocatable(node).get(key, "0")
        if quantity_value(held) < quantity_value(asked):
            most = f"the most a node has is {held} ({node.metadata.name})"
            parts.append(f"{key}: asked {asked}, {most}")
    return "; ".join(parts) or "no single node has all of it at once"


def _describe(need: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in need.items())


# ----- logs ------------------------------------------------------------------------------------


def _split_lines(chunks: Iterable) -> Iterator[str]:
    """Lines from a byte stream, the last one even without its newline."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "replace").rstrip("\r")
    if buffer:
        yield buffer.decode("utf-8", "replace").rstrip("\r")


class _Session:
    """The open log streams of one logs() call, all closed when its reader stops."""

    def __init__(self):
        self.stop = threading.Event()
        self._open: set = set()
        self._lock = threading.Lock()

    def opened(self, response) -> None:
        with self._lock:
            self._open.add(response)
        if self.stop.is_set():
            response.close()

    def closed(self, response) -> None:
        with self._lock:
            self._open.discard(response)

    def put(self, lines: queue.Queue, item) -> bool:
        while not self.stop.is_set():
            try:
                lines.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def close(self) -> None:
        self.stop.set()
        with self._lock:
            responses = list(self._open)
        for response in responses:
            response.close()


_END = object()


def _multiplex(streams: list[Iterator[LogLine]], session: _Session) -> Iterator[LogLine]:
    """Lines of several nodes as they come: one thread per node feeding a bounded queue."""
    lines: queue.Queue = queue.Queue(maxsize=1000)

    def pump(stream: Iterator[LogLine]) -> None:
        try:
            for line in stream:
                if not session.put(lines, line):
                    return
        except Exception as e:  # handed to the reader, which raises it
            session.put(lines, e)
        finally:
            session.put(lines, _END)

    for stream in streams:
        threading.Thread(target=pump, args=(stream,), daemon=True).start()
    try:
        running = len(streams)
        while running:
            item = lines.get()
            if item is _END:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item
    finally:
        session.close()


def _closing(stream: Iterator[LogLine], session: _Session) -> Iterator[LogLine]:
    try:
        yield from stream
    finally:
        session.close()


# ----- the backend -----------------------------------------------------------------------------


class KubernetesBackend(Backend):
    """TrainJobs on a Kubernetes cluster with Kubeflow Trainer v2.3.0.

    The kubeconfig (``config_file``, else ``KUBECONFIG``, else ``~/.kube/config``) or, inside a
    cluster without one, the service account. The namespace is the given one, else the
    context's, else the service account's, else ``default``.

    Run policy: TrainJob v2.3.0 has no TTL and no clean-pod policy, so whenever ``get_job`` or
    ``list_jobs`` sees a finished job it applies the job's ``kale-ext.io/`` annotations itself:
    ``ttl-seconds-after-finished`` deletes the TrainJob once that many seconds have passed since
    it finished (that call still reports the final state, once), and ``clean-pod-policy: All``
    deletes its remaining pods (logs go with them) while the TrainJob stays listed.
    """

    name = "kubernetes"

    def __init__(
        self,
        namespace: str | None = None,
        config_file: str | None = None,
        context: str | None = None,
        poll_interval: float = 2.0,
    ):
        from kubernetes import client

        config_file = config_file or os.environ.get("KUBECONFIG") or None
        in_cluster = config_file is None and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        configuration = _load_config(config_file, context, in_cluster)
        self.namespace = namespace or _default_namespace(config_file, context, in_cluster)
        self.host = configuration.host
        self.poll_interval = poll_interval
        api = client.ApiClient(configuration)
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)

    def _call(self, what: str, method: Callable, *args, **kwargs):
        """One API call; every failure becomes a BackendError with the server's message."""
        kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
        try:
            return method(*args, **kwargs)
        except _transport_errors() as e:
            raise api_error(e, what, self.host) from e

    def _custom(self, what: str, verb: str, plural: str, *args, **kwargs):
        """``verb`` (get, list, create, delete) on trainer.kubeflow.org objects: the namespace's,
        or the cluster's for ClusterTrainingRuntimes."""
        if plural == CLUSTER_RUNTIMES:
            method = getattr(self.custom, f"{verb}_cluster_custom_object")
            return self._call(what, method, GROUP, VERSION, plural, *args, **kwargs)
        method = getattr(self.custom, f"{verb}_namespaced_custom_object")
        return self._call(what, method, GROUP, VERSION, self.namespace, plural, *args, **kwargs)

    # -- runtimes --

    def runtime_packages(self, name: str) -> dict[str, str] | None:
        """The packages of a runtime's image, once probed (`kale-ext runtimes --packages`)."""
        from ..runtime_packages import cached

        return cached(self, name)

    def list_runtimes(self) -> list[Runtime]:
        """ClusterTrainingRuntimes and the namespace's TrainingRuntimes (which win on a clash);
        runtimes without the framework label are skipped, as the Kubeflow SDK does."""
        cluster = self._custom("list ClusterTrainingRuntimes", "list", CLUSTER_RUNTIMES)["items"]
        found = {m["metadata"]["name"]: m for m in cluster}
        try:
            what = f"list TrainingRuntimes in {self.namespace}"
            namespaced = self._custom(what, "list", RUNTIMES)["items"]
        except BackendError as e:
            if e.status not in (403, 404):
                raise
            log.debug("namespaced runtimes skipped: %s", e)
            namespaced = []
        found.update({m["metadata"]["name"]: m for m in namespaced})
        out = []
        for name in sorted(found):
            if FRAMEWORK_LABEL in (found[name]["metadata"].get("labels") or {}):
                out.append(Runtime.from_manifest(found[name]))
            else:
                log.warning("runtime %s has no %s label: skipped", name, FRAMEWORK_LABEL)
        return out

    def get_runtime(self, name: str) -> Runtime:
        """The namespace's TrainingRuntime of that name, else the ClusterTrainingRuntime."""
        manifest = self._runtime_manifest("TrainingRuntime", name) or self._runtime_manifest(
            "ClusterTrainingRuntime", name
        )
        if manifest is None:
            raise self._missing_runtime(name)
        if FRAMEWORK_LABEL not in (manifest["metadata"].get("labels") or {}):
            raise BackendError(
                f"runtime {name} has no {FRAMEWORK_LABEL} label, so kale_ext cannot tell how to "
                "launch it",
                422,
                "Invalid",
            )
        return Runtime.from_manifest(manifest)

    def _runtime_manifest(self, kind: str, name: str) -> dict | None:
        """The runtime object of that kind and name; None when it is missing (or, namespaced,
        forbidden)."""
        plural = RUNTIMES if kind == "TrainingRuntime" else CLUSTER_RUNTIMES
        try:
            return self._custom(f"get {kind} {name}", "get", plural, name)
        except BackendError as e:
            if e.status == 404 or (kind == "TrainingRuntime" and e.status == 403):
                return None
            raise

    def _missing_runtime(self, name: str) -> NotFound:
        try:
            known = ", ".join(r.name for r in self.list_runtimes()) or "none"
        except BackendError:
            known = "unknown"
        return NotFound(
            f"runtime {name!r} not found in the cluster or namespace {self.namespace} "
            f"(available: {known})"
        )

    # -- submit --

    def submit(self, spec: JobSpec, notebook_path: str | None = None) -> Submitted:
        """Check what the SDK does not (the runtime exists, one node has room), then create the
        TrainJob with strict field validation. Checks that cannot run become warnings."""
        if self._runtime_manifest(spec.runtime.kind, spec.runtime.name) is None:
            raise self._missing_runtime(spec.runtime.name)
        warnings = self._check_room(spec)
        body = trainjob_dict(spec, notebook_path, self._env_from_keys)
        what = f"create TrainJob {self.namespace}/{spec.name}"
        # Strict: the server rejects unknown fields instead of pruning them silently
        self._custom(what, "create", TRAINJOBS, body, field_validation="Strict")
        for warning in warnings:
            log.warning("%s: %s", spec.name, warning)
        return Submitted(spec.name, tuple(warnings))

    def _check_room(self, spec: JobSpec) -> list[str]:
        """Raise when no node could ever hold one training node; warnings when unsure."""
        need = _per_node_request(spec)
        if not need:
            return []
        try:
            nodes = self._call("list the cluster's nodes", self.core.list_node).items
        except BackendError as e:
            return [f"could not check that a node has room for {_describe(need)}: {e}"]
        selector = spec.config.node_selector
        usable = [
            n
            for n in nodes
            if not (n.spec and n.spec.unschedulable)
            and selector.items() <= (n.metadata.labels or {}).items()
        ]
        if not usable:
            which = f" with labels {_describe(selector)}" if selector else ""
            return [f"no schedulable node{which} now: the job waits until one joins"]
        if any(_has_room(n, need) for n in usable):
            return []
        raise BackendError(
            f"no node has room for one training node's {_describe(need)}: "
            f"{_shortfall(usable, need)}",
            422,
            "Unschedulable",
        )

    def _env_from_keys(self, kind: str, name: str) -> list[str]:
        """The keys of a Secret or ConfigMap (KeyError when it does not exist); never values."""
        secret = kind == "Secret"
        read = self.core.read_namespaced_secret if secret else self.core.read_namespaced_config_map
        try:
            obj = self._call(f"read {kind} {self.namespace}/{name}", read, name, self.namespace)
        except NotFound:
            raise KeyError(name) from None
        keys = list(obj.data or {})
        if not secret:
            keys += list(obj.binary_data or {})
        return keys

    # -- jobs --

    def _get_trainjob(self, name: str) -> dict:
        return self._custom(f"get TrainJob {self.namespace}/{name}", "get", TRAINJOBS, name)

    def _delete_trainjob(self, what: str, name: str) -> None:
        """Foreground: the TrainJob goes once its JobSet and pods are gone, so a new job of the
        same name cannot start while the old pods still run."""
        self._custom(what, "delete", TRAINJOBS, name, propagation_policy="Foreground")

    def _pods(self, selector: str) -> list:
        return self._call(
            f"list the pods in {self.namespace} ({selector})",
            self.core.list_namespaced_pod,
            self.namespace,
            label_selector=selector,
        ).items

    def get_job(self, name: str) -> JobInfo:
        obj = self._get_trainjob(name)
        info = job_info(obj, self._pods(f"{JOBSET_LABEL}={name},{STEP_LABEL}={NODE}"))
        if info.status is Status.CREATED:
            info.reason = self._latest_warning(name)  # e.g. the JobSet could not be created
        self._apply_run_policy(obj, info)
        return info

    def list_jobs(self) -> list[JobInfo]:
        """Every TrainJob in the namespace, newest first: two calls, however many jobs."""
        items = self._custom(f"list TrainJobs in {self.namespace}", "list", TRAINJOBS)["items"]
        pods_of: dict[str, list] = {}
        for pod in self._pods(f"{STEP_LABEL}={NODE}"):
            pods_of.setdefault((pod.metadata.labels or {}).get(JOBSET_LABEL), []).append(pod)
        infos = []
        for obj in items:
            info = job_info(obj, pods_of.get(obj["metadata"]["name"], []))
            self._apply_run_policy(obj, info)
            infos.append(info)
        return sorted(infos, key=lambda i: i.created or "", reverse=True)

    def _apply_run_policy(self, obj: dict, info: JobInfo) -> None:
        """ttl-seconds-after-finished and clean-pod-policy All (see the class docstring)."""
        if info.finished is None or obj["metadata"].get("deletionTimestamp"):
            return
        notes = obj["metadata"].get("annotations") or {}
        age = (datetime.now(timezone.utc) - _parse_time(info.finished)).total_seconds()
        ttl = notes.get(TTL)
        if ttl is not None and ttl.isdigit() and age >= int(ttl):
            what = f"delete TrainJob {self.namespace}/{info.name} after its TTL"
            self._tidy(self._delete_trainjob, what, info.name)
            ended = f"deleted {ttl} s after it finished (ttl_seconds_after_finished)"
            info.reason = f"{info.reason}; {ended}" if info.reason else ended
        elif notes.get(CLEAN_POD_POLICY) == "All" and info.nodes:
            self._tidy(
                self._call,
                f"delete the pods of job {info.name} (clean_pod_policy All)",
                self.core.delete_collection_namespaced_pod,
                self.namespace,
                label_selector=f"{JOBSET_LABEL}={info.name}",
            )

    @staticmethod
    def _tidy(call: Callable, *args, **kwargs) -> None:
        """A clean-up that must not fail the look at the job: failures are logged."""
        try:
            call(*args, **kwargs)
        except NotFound:
            pass
        except BackendError as e:
            log.warning("%s", e)

    def _job_ended(self, name: str) -> bool:
        try:
            return _finished_condition(self._get_trainjob(name)) is not None
        except NotFound:
            return True

    # -- events --

    def events(self, name: str) -> list[Event]:
        """Events of the TrainJob, its JobSet, Jobs, pods and Kueue Workload, oldest first."""
        self._get_trainjob(name)
        return self._events(name)

    def _events(self, name: str) -> list[Event]:
        belongs = _belongs_to(name)
        out = []
        for e in self._call(
            f"list the events in {self.namespace}", self.core.list_namespaced_event, self.namespace
        ).items:
            thing = e.involved_object
            if not belongs(thing.kind, thing.name):
                continue
            moment = e.last_timestamp or e.event_time or e.first_timestamp
            out.append(
                Event(
                    time=_iso(moment or e.metadata.creation_timestamp),
                    type=e.type or "Normal",
                    reason=e.reason or "",
                    message=e.message or "",
                    object=f"{thing.kind}/{thing.name}",
                )
            )
        return sorted(out, key=lambda e: e.time or "")

    def _latest_warning(self, name: str) -> str | None:
        try:
            warnings = [e for e in self._events(name) if e.type == "Warning"]
        except BackendError:
            return None
        return _said(warnings[-1].reason, warnings[-1].message) if warnings else None

    # -- delete --

    def delete(self, name: str) -> None:
        """Delete the TrainJob, its JobSet and pods (see ``_delete_trainjob``)."""
        try:
            self._delete_trainjob(f"delete TrainJob {self.namespace}/{name}", name)
        except NotFound as e:
            raise NotFound(
                f"job {name} does not exist in namespace {self.namespace}: it was already "
                f"deleted, or never created ({e})"
            ) from None

    # -- logs --

    def logs(
        self,
        name: str,
        node: int | None = None,
        follow: bool = False,
        tail: int | None = None,
        offsets: dict[int, int] | None = None,
    ) -> Iterator[LogLine]:
        """Lines of the ``node`` container of one node, or of all (one after another, or as
        they come with ``follow``, which waits for pending pods and ends with the job).

        ``LogLine.offset`` counts the lines of the node's container log up to that line;
        ``offsets`` resumes after them, so no line comes twice. A restarted container (or a
        replaced pod) starts a new log, counted from 1 again. ``tail`` keeps the last lines of
        each node: the log streams through a window of that size, so memory stays bounded and
        offsets stay exact (the kubelet's own tail cannot tell where its lines are).
        """
        obj = self._get_trainjob(name)
        trainer = (obj.get("spec") or {}).get("trainer") or {}
        count, procs = trainer.get("numNodes") or 1, trainer.get("numProcPerNode") or 1
        if node is not None and not 0 <= node < count:
            raise NotFound(f"job {name} has no node {node}: its nodes are 0 to {count - 1}")
        if tail is not None and tail < 0:
            raise BackendError(f"tail must be 0 or more, not {tail}", 400, "BadRequest")
        starts = {int(k): int(v) for k, v in (offsets or {}).items()}
        session = _Session()

        def lines(index: int) -> Iterator[LogLine]:
            start = starts.get(index, 0)
            for position, text in self._node_log(name, index, follow, tail, start, session):
                rank, text = split_rank(index, procs, text)
                yield LogLine(node=index, text=text, rank=rank, offset=position)

        indices = [node] if node is not None else list(range(count))
        if follow and len(indices) > 1:
            return _multiplex([lines(i) for i in indices], session)
        return _closing((line for i in indices for line in lines(i)), session)

    def _node_log(
        self, name: str, index: int, follow: bool, tail: int | None, start: int, session: _Session
    ) -> Iterator[tuple[int, str]]:
        """(position, text) of one node's log after line ``start``."""
        pod = self._wait_for_pod(name, index, session) if follow else self._node_pod(name, index)
        if pod is None or pod.status.phase == "Pending":
            return
        if tail is not None:
            window: deque = deque(maxlen=tail)
            for position, text in enumerate(self._lines(pod, False, session), 1):
                if position > start:
                    window.append((position, text))
                    start = position
            yield from window
            if not follow:
                return
        live = follow
        while pod is not None:
            source = _log_source(pod)
            for position, text in enumerate(self._lines(pod, live, session), 1):
                if position > start:
                    start = position
                    yield position, text
            if not live:
                return
            pod, live = self._after_stream(name, index, session)
            if pod is not None and _log_source(pod) != source:
                start = 0  # a new container: its log starts over

    def _node_pod(self, name: str, index: int):
        """The newest pod of node ``index``, or None."""
        pods = self._pods(f"{JOBSET_LABEL}={name},{STEP_LABEL}={NODE},{INDEX_LABEL}={index}")
        epoch = datetime.min.replace(tzinfo=timezone.utc)
        return max(pods, key=lambda p: p.metadata.creation_timestamp or epoch, default=None)

    def _wait_for_pod(self, name: str, index: int, session: _Session):
        """The node's pod once it has left Pending; None if the job ends (or goes) first."""
        while not session.stop.is_set():
            pod = self._node_pod(name, index)
            if pod is not None and pod.status.phase != "Pending":
                return pod
            if self._job_ended(name):
                return None
            session.stop.wait(self.poll_interval)
        return None

    def _after_stream(self, name: str, index: int, session: _Session):
        """Where a followed log goes once its stream ended: (pod, follow). A node or job that is
        done gets one last plain read, which catches up if the connection dropped early."""
        if session.stop.is_set():
            return None, False
        pod = self._node_pod(name, index)
        if self._job_ended(name) or (pod is not None and pod.status.phase in _DONE_PHASES):
            return pod, False
        session.stop.wait(self.poll_interval)  # the container restarts, or the stream dropped
        return self._wait_for_pod(name, index, session), True

    def _lines(self, pod, follow: bool, session: _Session, previous: bool = False):
        """The lines of the pod's `node` container; ``previous`` for the one before a restart.

        A followed stream that cannot open yet (container waiting) or drops just ends: the
        caller looks at the pod again.
        """
        what = f"read the log of pod {self.namespace}/{pod.metadata.name}"
        try:
            response = self._call(
                what,
                self.core.read_namespaced_pod_log,
                pod.metadata.name,
                self.namespace,
                container=NODE,
                follow=follow,
                previous=previous,
                _preload_content=False,
                _request_timeout=STREAM_TIMEOUT if follow else REQUEST_TIMEOUT,
            )
        except BackendError as e:
            if follow and e.status in (400, 503, 504):
                return
            if e.status == 400 and not previous and _restarts(pod):
                yield from self._lines(pod, False, session, previous=True)
                return
            raise
        session.opened(response)
        try:
            yield from _split_lines(response.stream(amt=None, decode_content=False))
        except _transport_errors() as e:
            if not (follow or session.stop.is_set()):
                raise api_error(e, what, self.host) from e
        finally:
            session.closed(response)
            response.release_conn()
