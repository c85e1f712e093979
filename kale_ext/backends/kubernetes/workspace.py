"""The workspace's ConfigMaps on the cluster (job/shipping.py makes them), around the TrainJob.

The order, and why. An owner reference needs the owner's uid, which exists only once the
TrainJob does; but the Trainer's controller makes the JobSet, and so the pods, as soon as the
TrainJob is admitted, and a pod whose ConfigMap volume is missing waits in ContainerCreating
with `FailedMount` warnings until the kubelet's next try (its back-off grows to about two
minutes). So: (1) the ConfigMaps first, without an owner (those that exist already, the same
workspace of an earlier job, are reused: content-named and immutable); (2) the TrainJob; (3) the
TrainJob added to each ConfigMap's owners by a JSON patch guarded by the resourceVersion.
Deleting the job deletes a ConfigMap once no other job still owns it (the garbage collector's
rule for several owners). When step 2 fails, step 1's new ConfigMaps are deleted; when step 3
finds a ConfigMap gone (the garbage collector took it with its last owner meanwhile), it is made
again, owned from the start.
"""

from __future__ import annotations

import logging

from ...errors import BackendError, NotFound
from ...job.packing import Packed
from ...job.shipping import configmaps
from .config import GROUP, VERSION, Cluster

log = logging.getLogger(__name__)
ATTEMPTS = 5  # patches retried when another submit changed the ConfigMap meanwhile


def _existing(cluster: Cluster, name: str):
    try:
        what = f"read ConfigMap {cluster.namespace}/{name}"
        return cluster.call(what, cluster.core.read_namespaced_config_map, name, cluster.namespace)
    except NotFound:
        return None


def upload(cluster: Cluster, packed: Packed) -> list[str]:
    """Make the workspace's ConfigMaps that do not exist yet; return the names it made."""
    made = []
    try:
        for body in configmaps(packed):
            name = body["metadata"]["name"]
            if _existing(cluster, name) is not None:
                continue
            what = f"create ConfigMap {cluster.namespace}/{name} (the workspace)"
            try:
                cluster.call(what, cluster.core.create_namespaced_config_map, cluster.namespace,
                             body)  # fmt: skip
            except BackendError as e:
                if e.status != 409:  # 409: another submit made it meanwhile, the same bytes
                    raise
                continue
            made.append(name)
    except BackendError:
        remove(cluster, made)
        raise
    return made


def owner_of(trainjob: dict) -> dict:
    meta = trainjob["metadata"]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainJob",
        "name": meta["name"],
        "uid": meta["uid"],
    }


def adopt(cluster: Cluster, packed: Packed, trainjob: dict) -> None:
    """Add the TrainJob to the owners of each of the workspace's ConfigMaps."""
    owner = owner_of(trainjob)
    for body in configmaps(packed, with_data=False):
        _add_owner(cluster, packed, body["metadata"]["name"], owner)


def _add_owner(cluster: Cluster, packed: Packed, name: str, owner: dict) -> None:
    what = f"add job {owner['name']} to the owners of ConfigMap {cluster.namespace}/{name}"
    for _ in range(ATTEMPTS):
        current = _existing(cluster, name)
        if current is None:  # collected with its last owner meanwhile: make it again, owned
            [body] = [b for b in configmaps(packed) if b["metadata"]["name"] == name]
            body["metadata"]["ownerReferences"] = [owner]
            cluster.call(what, cluster.core.create_namespaced_config_map, cluster.namespace, body)
            return
        owners = current.metadata.owner_references or []
        if any(o.uid == owner["uid"] for o in owners):
            return
        guard = {"op": "test", "path": "/metadata/resourceVersion",
                 "value": current.metadata.resource_version}  # fmt: skip
        add = (
            {"op": "add", "path": "/metadata/ownerReferences/-", "value": owner}
            if owners
            else {"op": "add", "path": "/metadata/ownerReferences", "value": [owner]}
        )
        try:
            patch = cluster.core.patch_namespaced_config_map
            cluster.call(what, patch, name, cluster.namespace, [guard, add])
            return
        except BackendError as e:
            if e.status not in (404, 409, 422):  # 422: the guard failed, someone changed it
                raise
    raise BackendError(f"cannot {what}: it kept changing ({ATTEMPTS} tries)", 409, "Conflict")


def remove(cluster: Cluster, names: list[str]) -> None:
    """Delete ConfigMaps this submit made (a failed submit leaves nothing behind)."""
    for name in names:
        what = f"delete ConfigMap {cluster.namespace}/{name}"
        try:
            cluster.call(what, cluster.core.delete_namespaced_config_map, name, cluster.namespace)
        except NotFound:
            pass
        except BackendError as e:
            log.warning("%s", e)
