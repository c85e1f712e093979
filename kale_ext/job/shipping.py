"""The workspace on a cluster: the ConfigMaps that carry its archive and the volume that mounts
them into the training container, where the bootstrap unpacks them.

A ConfigMap holds at most 1 MiB, so the archive travels in parts (``packing.PART_SIZE`` each),
one ConfigMap per part, named by the archive's content hash: the same workspace is the same
ConfigMaps, uploaded once and shared (each job that uses them is one of their owners, so the
last job deleted takes them with it). One projected volume puts every part in one folder.
"""

from __future__ import annotations

import base64

from .packing import PART, Packed

WORKSPACE_LABEL = "kale-ext.io/workspace"  # the first 32 hex digits of the content hash
SHA_ANNOTATION = "kale-ext.io/workspace-sha256"
MANAGED_BY = {"app.kubernetes.io/managed-by": "kale-ext"}
VOLUME = "kale-ext-workspace"
MOUNT = "/var/run/kale-ext/workspace"
#: Read by the bootstrap (trainjob.BOOTSTRAP) where set: the local backend's parts and nodes.
PARTS_ENV = "KALE_EXT_WORKSPACE_PARTS"  # a folder holding the parts, instead of MOUNT
WORKDIR_ENV = "KALE_EXT_WORKDIR"  # where to unpack them, instead of a new temporary folder


def label_value(packed: Packed) -> str:
    return packed.sha256[:32]  # a label value holds at most 63 characters


def configmap_names(packed: Packed) -> list[str]:
    return [f"kale-ext-workspace-{packed.sha256[:16]}-{i}" for i in range(packed.parts)]


def configmaps(packed: Packed, with_data: bool = True) -> list[dict]:
    """The ConfigMaps of a packed workspace, in Kubernetes JSON form (``with_data=False``:
    without the archive, as a preview lists them)."""
    parts = packed.split() if with_data else {}
    out = []
    for i, name in enumerate(configmap_names(packed)):
        key = PART.format(i)
        body: dict = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "labels": {**MANAGED_BY, WORKSPACE_LABEL: label_value(packed)},
                "annotations": {SHA_ANNOTATION: packed.sha256, "kale-ext.io/part": key},
            },
            "immutable": True,
        }
        if with_data:
            body["binaryData"] = {key: base64.b64encode(parts[key]).decode("ascii")}
        out.append(body)
    return out


def volume(packed: Packed) -> dict:
    """One read-only volume holding every part (`part-000`, ...) side by side."""
    sources = [{"configMap": {"name": name}} for name in configmap_names(packed)]
    return {"name": VOLUME, "projected": {"sources": sources, "defaultMode": 0o444}}


def mount() -> dict:
    return {"name": VOLUME, "mountPath": MOUNT, "readOnly": True}


def plan(packed: Packed) -> dict:
    """What the bootstrap needs to find and check the workspace."""
    return {"sha256": packed.sha256, "parts": MOUNT}
