"""The emulated API server's store and its rules: the objects it keeps (on kmock's
``ObjectsArray``, with every version, and its watch buses), the metadata it sets on create,
deletion with finalizers and the garbage collector's rule for owner references, and Events.
Its methods run on the server's event loop; the emulated controllers call them directly."""

from __future__ import annotations

import copy
import json
import secrets
import time
import uuid
from typing import Any

import kmock

from tests.harness.cluster.objects import now

#: Every resource the cluster serves: kind, and whether it lives in a namespace.
RESOURCES: dict[str, tuple[str, bool]] = {
    "v1/namespaces": ("Namespace", False),
    "v1/nodes": ("Node", False),
    "v1/pods": ("Pod", True),
    "v1/configmaps": ("ConfigMap", True),
    "v1/secrets": ("Secret", True),
    "v1/events": ("Event", True),
    "v1/persistentvolumeclaims": ("PersistentVolumeClaim", True),
    "trainer.kubeflow.org/v1alpha1/trainjobs": ("TrainJob", True),
    "trainer.kubeflow.org/v1alpha1/trainingruntimes": ("TrainingRuntime", True),
    "trainer.kubeflow.org/v1alpha1/clustertrainingruntimes": ("ClusterTrainingRuntime", False),
    "kueue.x-k8s.io/v1beta2/workloads": ("Workload", True),  # Kueue runs if asked: kueue.py
    "kueue.x-k8s.io/v1beta2/localqueues": ("LocalQueue", True),  # stored, as a test makes them
}
VERBS = {"create", "delete", "deletecollection", "get", "list", "patch", "watch"}
NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes draws generated names from
Key = tuple[Any, str | None, str]


def status_error(code: int, reason: str, message: str, **details: Any) -> kmock.KubernetesError:
    """A failure as the API server answers it (kmock renders it as a ``Status`` body)."""
    return kmock.KubernetesError(status=code, reason=reason, message=message, details=details)


def random_suffix(n: int = 5) -> str:
    return "".join(secrets.choice(NAME_CHARS) for _ in range(n))


def qualified(resource: Any) -> str:
    """How the API server names a resource in messages: `pods`, `trainjobs.trainer.kubeflow.org`."""
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def not_found(resource: Any, name: str) -> kmock.KubernetesError:
    what = f'{qualified(resource)} "{name}" not found'
    return status_error(404, "NotFound", what, name=name, kind=resource.plural)


class Store:
    """The store half of ``ApiServer`` (which provides ``objects``, ``_buses``, ``_counter``,
    ``_version``, ``watchers`` and ``graceful``)."""

    def _info(self, resource: Any) -> tuple[str, bool]:
        for key, info in RESOURCES.items():
            if kmock.resource(key) == resource:
                return info
        raise status_error(404, "NotFound", "the server could not find the requested resource")

    def get(self, resource: Any, namespace: str | None, name: str) -> dict | None:
        """A copy of the object, or None."""
        key = (kmock.resource(resource), namespace, name)
        found = self.objects[key] if key in self.objects else None
        return None if found is None or found.deleted else copy.deepcopy(found.raw)

    def items(self, resource: Any, namespace: str | None = None) -> list[dict]:
        """Copies of the objects of a resource (in one namespace, or all), ordered by name."""
        resource = kmock.resource(resource)
        found = [
            (ns or "", name, copy.deepcopy(o.raw))
            for (res, ns, name), o in self.objects.items()
            if res == resource and not o.deleted and (namespace is None or ns == namespace)
        ]
        return [obj for _, _, obj in sorted(found, key=lambda x: x[:2])]

    async def create(self, resource: Any, namespace: str | None, obj: dict) -> dict:
        """Store a new object with the metadata the API server sets; 409 if the name is taken."""
        resource = kmock.resource(resource)
        kind, namespaced = self._info(resource)
        meta = obj.setdefault("metadata", {})
        name = meta.get("name") or ""
        if namespaced and namespace and self.get("v1/namespaces", None, namespace) is None:
            raise not_found(kmock.resource("v1/namespaces"), namespace)
        if self.get(resource, namespace, name) is not None:
            what = f'{qualified(resource)} "{name}" already exists'
            raise status_error(409, "AlreadyExists", what, name=name, kind=resource.plural)
        obj.setdefault("apiVersion", f"{resource.group}/{resource.version}".lstrip("/"))
        obj.setdefault("kind", kind)
        if namespaced:
            meta["namespace"] = namespace
        meta.update(uid=str(uuid.uuid4()), creationTimestamp=now())
        if resource.group:
            meta["generation"] = 1
        return await self.put(resource, namespace, obj, "ADDED")

    async def put(self, resource: Any, namespace: str | None, obj: dict, event="MODIFIED") -> dict:
        """Store a new version of an object (its resourceVersion moves on) and tell watchers."""
        resource = kmock.resource(resource)
        self._version = next(self._counter)
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self._version)
        key = (resource, namespace, obj["metadata"]["name"])
        if key in self.objects:
            self.objects[key].create(obj)
        else:
            self.objects[key] = obj
        await self._tell(event, resource, obj)
        return copy.deepcopy(obj)

    async def delete(self, resource: Any, namespace: str | None, name: str, policy=None) -> dict:
        """Delete as the API server does: at once, or (Foreground, finalizers, a pod a kubelet
        stops first) marked with a deletionTimestamp until it may go."""
        resource = kmock.resource(resource)
        obj = self.get(resource, namespace, name)
        if obj is None:
            raise not_found(resource, name)
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        waits = finalizers or (self.graceful is not None and self.graceful(resource, obj))
        if waits:
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = now()
                if finalizers:
                    meta["finalizers"] = finalizers
                obj = await self.put(resource, namespace, obj)
            return obj
        await self.remove(resource, namespace, name)
        details = {"name": name, "kind": resource.plural, "uid": meta["uid"]}
        if resource.group:
            details["group"] = resource.group
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": details}  # fmt: skip

    async def finalize(self, resource: Any, namespace: str | None, name: str, finalizer: str):
        """A finalizer is done: the object goes once it has none left and is being deleted."""
        obj = self.get(resource, namespace, name)
        if obj is None:
            return
        left = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        if obj["metadata"].get("deletionTimestamp") and not left:
            await self.remove(resource, namespace, name)
        elif left != (obj["metadata"].get("finalizers") or []):
            obj["metadata"]["finalizers"] = left
            await self.put(resource, namespace, obj)

    async def remove(self, resource: Any, namespace: str | None, name: str) -> None:
        """The object goes now; so do its dependents whose last owner it was."""
        resource = kmock.resource(resource)
        key = (resource, namespace, name)
        if key not in self.objects or self.objects[key].deleted:
            return
        obj = copy.deepcopy(self.objects[key].raw)
        self.objects[key].delete()
        await self._tell("DELETED", resource, obj)
        await self._collect_garbage(obj["metadata"]["uid"])

    async def _collect_garbage(self, uid: str) -> None:
        for (res, ns, name), o in list(self.objects.items()):
            if o.deleted:
                continue
            owners = o.raw.get("metadata", {}).get("ownerReferences") or []
            left = [ref for ref in owners if ref.get("uid") != uid]
            if len(left) == len(owners):
                continue
            if left:
                obj = copy.deepcopy(o.raw)
                obj["metadata"]["ownerReferences"] = left
                await self.put(res, ns, obj)
            else:
                await self.delete(res, ns, name)

    async def _tell(self, event: str, resource: Any, obj: dict) -> None:
        await self._buses[resource].put({"type": event, "object": copy.deepcopy(obj)})
        for watcher in list(self.watchers):
            watcher(event, resource, copy.deepcopy(obj))

    async def record_event(
        self, involved: dict, kind: str, reason: str, message: str, source: str
    ) -> None:
        """An Event about ``involved`` (a stored object or {kind, name, namespace}); the same
        reason and message again counts up, as the API server's event aggregation does."""
        meta = involved.get("metadata") or {}
        who = {
            "kind": involved.get("kind"),
            "name": meta.get("name", involved.get("name")),
            "namespace": meta.get("namespace", involved.get("namespace")),
            "uid": meta.get("uid", involved.get("uid", "")),
            "apiVersion": involved.get("apiVersion", "v1"),
        }
        ns, stamp = who["namespace"], now()
        for event in self.items("v1/events", ns):
            same = event["involvedObject"] == who and (event["reason"], event["message"]) == (
                reason,
                message,
            )
            if same:
                event.update(count=event["count"] + 1, lastTimestamp=stamp)
                await self.put("v1/events", ns, event)
                return
        name = f"{who['name']}.{json.dumps(time.time_ns())[-12:]}{random_suffix(3)}"
        body = {
            "metadata": {"name": name},
            "involvedObject": who,
            "type": kind,
            "reason": reason,
            "message": message,
            "count": 1,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "source": {"component": source},
            "reportingComponent": source,
        }
        await self.create("v1/events", ns, body)
