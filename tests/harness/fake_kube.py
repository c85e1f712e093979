"""A small in-memory Kubernetes API server behind the kubernetes client's API classes.

It patches ``kubernetes.config.load_kube_config`` and the ``CustomObjectsApi`` / ``CoreV1Api``
methods (as the Kubeflow SDK's own tests do). Objects are stored in Kubernetes JSON form, and
CoreV1Api answers are deserialised into the client's models, as a real answer is. Failures are
``ApiException``s with a real-looking ``Status`` body (``kube_wire``).

Two checks make it strict:

- every created TrainJob must pass ``tests/harness/crd.py`` (the models' strict schema, the
  official CRD where ``../shared`` is present, the Trainer's CEL and webhook rules) with the
  runtime it names, as this cluster holds it;
- each call's keyword arguments are checked against the real method's parameters, so an
  argument this kubernetes client does not know fails here as it would for real.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import cache
from unittest import mock

from kubernetes import client

from tests.harness.cluster.objects import parse_selector, selected
from tests.harness.crd import validate_trainjob
from tests.harness.fake_configmaps import ConfigMaps
from tests.harness.kube_wire import (
    KUBECONFIG,
    ContainerLog,
    LogStream,
    not_found,
    plain_error,
    status_error,
)

__all__ = ["KUBECONFIG", "ContainerLog", "FakeKube", "at", "plain_error", "status_error"]

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    """A timestamp `seconds` after T0, in the API server's form."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@cache
def _accepted(cls: type, method: str) -> frozenset[str]:
    """The keyword arguments the real client method accepts (its `all_params`)."""
    source = inspect.getsource(getattr(cls, method + "_with_http_info"))
    block = source[source.index("all_params = [") : source.index("for key, val in")]
    return frozenset(re.findall(r"'(\w+)'", block))


def _selected(labels: dict, selector: str | None) -> bool:
    """The label selectors the backend uses: equality (`a=b`) and set-based `a in (b,c)` terms,
    comma-separated (the emulated cluster's parser: objects.parse_selector)."""
    terms = parse_selector(selector)
    assert all(op in ("=", "in") for _, op, _ in terms), f"unsupported selector {selector!r}"
    return selected(labels, terms)


class FakeKube(ConfigMaps):
    """The API server's objects by (plural, namespace or None) and name, plus container logs
    (ConfigMaps: fake_configmaps.py)."""

    def __init__(self, namespace: str = "team"):
        self.namespace = namespace
        self.objects: dict[tuple[str, str | None], dict[str, dict]] = {}
        self.logs: dict[str, ContainerLog] = {}
        self.failures: dict[str, BaseException] = {}
        self.hooks: dict[str, Callable[[int], None]] = {}
        self.calls: list[tuple[str, tuple, dict]] = []
        self.mocks: dict[str, mock.Mock] = {}
        self.streams: list[LogStream] = []  # every log stream handed out
        self._models = client.ApiClient()

    # -- wiring --

    def install(self, monkeypatch) -> None:
        monkeypatch.setattr("kubernetes.config.load_kube_config", mock.Mock(return_value=None))
        for cls, methods in (
            (
                client.CustomObjectsApi,
                (
                    "create_namespaced_custom_object",
                    "get_namespaced_custom_object",
                    "get_cluster_custom_object",
                    "list_namespaced_custom_object",
                    "list_cluster_custom_object",
                    "delete_namespaced_custom_object",
                    "patch_namespaced_custom_object",
                ),
            ),
            (
                client.CoreV1Api,
                (
                    "list_namespaced_pod",
                    "read_namespaced_pod_log",
                    "list_namespaced_event",
                    "list_node",
                    "read_namespaced_secret",
                    "read_namespaced_config_map",
                    "list_namespaced_config_map",
                    "create_namespaced_config_map",
                    "patch_namespaced_config_map",
                    "delete_namespaced_config_map",
                    "delete_collection_namespaced_pod",
                ),
            ),
        ):
            for method in methods:
                self.mocks[method] = mock.Mock(side_effect=self._serve(cls, method))
                monkeypatch.setattr(cls, method, self.mocks[method])

    def _serve(self, cls: type, method: str) -> Callable:
        handler = getattr(self, method)

        def call(*args, **kwargs):
            unknown = set(kwargs) - _accepted(cls, method)
            if unknown:
                raise TypeError(f"{method}() got unexpected keyword arguments {sorted(unknown)}")
            self.calls.append((method, args, kwargs))
            if method in self.hooks:
                self.hooks[method](sum(1 for c in self.calls if c[0] == method))
            if method in self.failures:
                raise self.failures[method]
            return handler(*args, **kwargs)

        return call

    def count(self, method: str) -> int:
        return sum(1 for c in self.calls if c[0] == method)

    def _model(self, data, kind: str):
        return self._models._ApiClient__deserialize(copy.deepcopy(data), kind)

    def _store(self, plural: str, namespace: str | None) -> dict[str, dict]:
        return self.objects.setdefault((plural, namespace), {})

    def put(self, plural: str, obj: dict, namespace: str | None = "") -> dict:
        """Store an object as the API server would hold it (namespace "" means the default)."""
        ns = self.namespace if namespace == "" else namespace
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("creationTimestamp", at(0))
        if ns is not None:
            meta["namespace"] = ns
        self._store(plural, ns)[meta["name"]] = obj
        return obj

    def get(self, plural: str, name: str, namespace: str | None = "") -> dict | None:
        ns = self.namespace if namespace == "" else namespace
        return self._store(plural, ns).get(name)

    def runtime_of(self, trainjob: dict) -> dict | None:
        """The runtime a TrainJob names, as this cluster holds it."""
        ref = trainjob["spec"].get("runtimeRef") or {}
        if ref.get("kind", "ClusterTrainingRuntime") == "ClusterTrainingRuntime":
            return self.get("clustertrainingruntimes", ref.get("name"), None)
        return self.get("trainingruntimes", ref.get("name"))

    # -- CustomObjectsApi --

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, **kw):
        assert (group, version) == (GROUP, VERSION)
        if plural == "trainjobs":
            validate_trainjob(body, self.runtime_of(body))
        name = body["metadata"]["name"]
        if name in self._store(plural, namespace):
            raise status_error(409, "AlreadyExists", f'{plural}.{group} "{name}" already exists')
        obj = copy.deepcopy(body)
        obj["metadata"]["uid"] = f"uid-{name}"
        return self.put(plural, obj, namespace)

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **kw):
        obj = self._store(plural, namespace).get(name)
        if obj is None:
            raise not_found(f"{plural}.{group}", name)
        return copy.deepcopy(obj)

    def get_cluster_custom_object(self, group, version, plural, name, **kw):
        return self.get_namespaced_custom_object(group, version, None, plural, name)

    def list_namespaced_custom_object(self, group, version, namespace, plural, **kw):
        items = [copy.deepcopy(o) for o in self._store(plural, namespace).values()]
        return {"apiVersion": f"{group}/{version}", "items": items, "metadata": {}}

    def list_cluster_custom_object(self, group, version, plural, **kw):
        return self.list_namespaced_custom_object(group, version, None, plural)

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name, **kw):
        gone = self._store(plural, namespace).pop(name, None)
        if gone is None:
            raise not_found(f"{plural}.{group}", name)
        if plural == "trainjobs":  # the garbage collector: the JobSet's pods go with it
            self.collect_garbage(namespace, gone["metadata"].get("uid"))
            pods = self._store("pods", namespace)
            for pod in [p for p in pods.values() if _job_of(p) == name]:
                del pods[pod["metadata"]["name"]]
        return {"kind": "Status", "apiVersion": "v1", "status": "Success"}

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **kw):
        """A merge patch of the object's metadata (what kale_ext patches: its owners)."""
        obj = self._store(plural, namespace).get(name)
        if obj is None:
            raise not_found(f"{plural}.{group}", name)
        assert set(body) == {"metadata"}, f"only metadata is patched here, not {sorted(body)}"
        obj["metadata"].update(copy.deepcopy(body["metadata"]))
        return copy.deepcopy(obj)

    # -- CoreV1Api --

    def list_namespaced_pod(self, namespace, label_selector=None, **kw):
        pods = self._store("pods", namespace).values()
        items = [p for p in pods if _selected(p["metadata"].get("labels", {}), label_selector)]
        return self._model({"items": items, "metadata": {}}, "V1PodList")

    def delete_collection_namespaced_pod(self, namespace, label_selector=None, **kw):
        pods = self._store("pods", namespace)
        for name in [
            n for n, p in pods.items() if _selected(p["metadata"]["labels"], label_selector)
        ]:
            del pods[name]
        return self._model({"status": "Success"}, "V1Status")

    def read_namespaced_pod_log(
        self, name, namespace, container=None, follow=False, previous=False, **kw
    ):
        pod = self._store("pods", namespace).get(name)
        if pod is None:
            raise not_found("pods", name)
        if container not in [c["name"] for c in pod["spec"]["containers"]]:
            raise status_error(
                400, "BadRequest", f"container {container} is not valid for pod {name}"
            )
        log = self.logs[name]
        if previous and log.previous is None:
            raise status_error(
                400,
                "BadRequest",
                f'previous terminated container "{container}" in pod "{name}" not found',
            )
        if not previous and not log.started:
            raise status_error(
                400,
                "BadRequest",
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating',
            )
        data = log.previous if previous else None
        if kw.get("tail_lines") is not None or kw.get("timestamps"):  # what the kubelet does
            data = log.lines(data, kw.get("tail_lines"), bool(kw.get("timestamps")))
        stream = LogStream(log, data, follow and not previous)
        self.streams.append(stream)
        if kw.get("_preload_content", True):  # read whole, then released
            text = b"".join(stream.stream()).decode()
            stream.closed = True
            return text
        return stream

    def list_namespaced_event(self, namespace, **kw):
        items = list(self._store("events", namespace).values())
        return self._model({"items": items, "metadata": {}}, "CoreV1EventList")

    def list_node(self, **kw):
        items = list(self._store("nodes", None).values())
        return self._model({"items": items, "metadata": {}}, "V1NodeList")

    def read_namespaced_secret(self, name, namespace, **kw):
        obj = self._store("secrets", namespace).get(name)
        if obj is None:
            raise not_found("secrets", name)
        return self._model(obj, "V1Secret")

    def read_namespaced_config_map(self, name, namespace, **kw):
        obj = self._store("configmaps", namespace).get(name)
        if obj is None:
            raise not_found("configmaps", name)
        return self._model(obj, "V1ConfigMap")

    # -- building a cluster's state --

    def add_runtime(self, manifest: dict, namespaced: bool = False) -> None:
        if namespaced:
            manifest = {**copy.deepcopy(manifest), "kind": "TrainingRuntime"}
            self.put("trainingruntimes", manifest)
        else:
            self.put("clustertrainingruntimes", manifest, None)

    def add_trainjob(self, name: str, num_nodes: int = 1, procs: int = 1, **meta) -> dict:
        """A TrainJob as the server holds it (status set through `set_conditions`)."""
        return self.put(
            "trainjobs",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "TrainJob",
                "metadata": {"name": name, "uid": f"uid-{name}", **meta},
                "spec": {
                    "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
                    "trainer": {"numNodes": num_nodes, "numProcPerNode": procs},
                },
            },
        )

    def set_conditions(self, name: str, *conditions: tuple) -> None:
        """(type, status, reason, message[, seconds after T0]) per condition."""
        job = self.get("trainjobs", name)
        job["status"] = {
            "conditions": [
                {
                    "type": c[0],
                    "status": c[1],
                    "reason": c[2],
                    "message": c[3],
                    "lastTransitionTime": c[4] if len(c) > 4 else at(60),
                }
                for c in conditions
            ]
        }

    def add_pod(
        self,
        job: str,
        index: int,
        phase: str = "Running",
        state: dict | None = None,
        suffix: str = "abcde",
        created: float = 1,
        step: str = "node",
        containers: bool = True,
        **status,
    ) -> str:
        """A pod of the job's JobSet with the labels JobSet and the Job controller set
        (``containers=False``: not scheduled yet, so no container statuses)."""
        name = f"{job}-{step}-0-{index}-{suffix}"
        if state is None:
            state = {"waiting": {"reason": "ContainerCreating"}} if phase == "Pending" else {}
            if phase == "Running":
                state = {"running": {"startedAt": at(created)}}
            if phase in ("Succeeded", "Failed"):
                code = 0 if phase == "Succeeded" else 1
                reason = "Completed" if phase == "Succeeded" else "Error"
                state = {"terminated": {"exitCode": code, "reason": reason}}
        container = {
            "name": "node",
            "image": "pytorch/pytorch",
            "imageID": "",
            "ready": phase == "Running",
            "restartCount": status.pop("restart_count", 0),
            "state": state,
            "containerID": f"containerd://{name}-{status.pop('container', 1)}",
        }
        if "last_state" in status:
            container["lastState"] = status.pop("last_state")
        self.put(
            "pods",
            {
                "metadata": {
                    "name": name,
                    "creationTimestamp": at(created),
                    "labels": {
                        "jobset.sigs.k8s.io/jobset-name": job,
                        "jobset.sigs.k8s.io/replicatedjob-name": step,
                        "batch.kubernetes.io/job-completion-index": str(index),
                        "batch.kubernetes.io/job-name": f"{job}-{step}-0",
                    },
                },
                "spec": {"containers": [{"name": "node", "image": "pytorch/pytorch"}]},
                "status": {
                    "phase": phase,
                    **({"containerStatuses": [container]} if containers else {}),
                    **status,
                },
            },
        )
        log = self.logs.setdefault(name, ContainerLog())
        log.started = log.started or phase != "Pending"
        return name

    def add_pod_object(self, pod: dict, log: str = "") -> str:
        """A pod as the API server returned it (a recorded object), with its container's log."""
        name = self.put("pods", copy.deepcopy(pod))["metadata"]["name"]
        self.logs[name] = ContainerLog()
        if log:
            self.logs[name].write(*log.splitlines())
        self.logs[name].started = pod["status"].get("phase") != "Pending"
        return name

    def set_pod(self, name: str, phase: str, state: dict | None = None) -> None:
        pod = self.get("pods", name)
        pod["status"]["phase"] = phase
        if state is not None:
            pod["status"]["containerStatuses"][0]["state"] = state
        if phase != "Pending":
            self.logs[name].started = True

    def add_node(self, name: str, labels: dict | None = None, unschedulable=False, **allocatable):
        self.put(
            "nodes",
            {
                "metadata": {"name": name, "labels": labels or {}},
                "spec": {"unschedulable": unschedulable},
                "status": {"allocatable": {k.replace("_", "/"): v for k, v in allocatable.items()}},
            },
            None,
        )

    def add_event(
        self, kind: str, name: str, reason: str, message: str, seconds: float, type="Normal"
    ):
        key = f"{name}.{len(self._store('events', self.namespace))}"
        self.put(
            "events",
            {
                "metadata": {"name": key},
                "involvedObject": {"kind": kind, "name": name, "namespace": self.namespace},
                "reason": reason,
                "message": message,
                "type": type,
                "lastTimestamp": at(seconds),
            },
        )


def _job_of(pod: dict) -> str | None:
    return pod["metadata"].get("labels", {}).get("jobset.sigs.k8s.io/jobset-name")
