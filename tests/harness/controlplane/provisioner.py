"""Persistent volumes for the process kubelet's pods: a default StorageClass whose provisioner is
this harness. For each claim of that class it makes a PersistentVolume (a hostPath folder,
pre-bound to the claim), which kube-controller-manager's PV binder then binds, as an external
provisioner's would be; the kubelet mounts a claim as its folder (``volumes.py``: one folder
per claim that outlives the pods)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.harness.controlplane.kube import ApiError, Kube

CLASS = "standard"
PROVISIONER = "kale-ext.local/process-folders"


def storage_class() -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": CLASS, "annotations": {
                "storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate"}  # fmt: skip


def volume_for(claim: dict, claims: Path) -> dict:
    meta, spec = claim["metadata"], claim["spec"]
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"pvc-{meta['uid']}",
                     "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER}},
        "spec": {"capacity": {"storage": size},
                 "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Delete", "storageClassName": CLASS,
                 "hostPath": {"path": str(claims / meta["namespace"] / meta["name"]),
                              "type": "DirectoryOrCreate"},
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "namespace": meta["namespace"], "name": meta["name"],
                              "uid": meta["uid"]}},
    }  # fmt: skip


async def provision(kube: Kube, claims: Path) -> None:
    """Forever: a volume for each pending claim of the class; a released volume deleted."""
    async for kind, claim in kube.watch("/api/v1/persistentvolumeclaims"):
        spec, status = claim["spec"], claim.get("status") or {}
        if kind == "DELETED" or claim["metadata"].get("deletionTimestamp"):
            with contextlib.suppress(ApiError):
                await kube.request(
                    "DELETE", f"/api/v1/persistentvolumes/pvc-{claim['metadata']['uid']}"
                )
            continue
        if spec.get("storageClassName") != CLASS or spec.get("volumeName"):
            continue
        if status.get("phase") not in (None, "Pending"):
            continue
        (claims / claim["metadata"]["namespace"] / claim["metadata"]["name"]).mkdir(
            parents=True, exist_ok=True
        )
        try:
            await kube.request("POST", "/api/v1/persistentvolumes", volume_for(claim, claims))
        except ApiError as e:
            if e.status != 409:
                raise
