"""What the control plane installs, read from the Go modules' own source (the module zips hold
the whole repositories): JobSet's and the Trainer's CRDs, their webhook configurations (with
the kustomize patches their repos apply) and the Trainer's ClusterTrainingRuntimes (as its
release overlay ``manifests/overlays/runtimes`` installs them: labelled
``trainer.kubeflow.org/webhook-validation: disabled``, its own images pinned to the release).

Webhooks are pointed at ``https://127.0.0.1:PORT`` with the harness's CA, as controller-runtime's
envtest does.
"""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from functools import cache
from pathlib import Path

import yaml

from tests.harness.controlplane.build import go_binary
from tests.harness.controlplane.versions import BY_NAME

TRAINER_IMAGES = "ghcr.io/kubeflow/trainer/"


@cache
def module_dir(name: str) -> Path:
    """The module's source folder in Go's module cache (downloaded through the proxy if not)."""
    component = BY_NAME[name]
    found = subprocess.run(
        [go_binary(), "mod", "download", "-json", f"{component.module}@{component.version}"],
        capture_output=True, text=True, check=True, cwd="/",
    )  # fmt: skip
    return Path(json.loads(found.stdout)["Dir"])


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def crds() -> list[dict]:
    """JobSet's CRD, then the Trainer's."""
    jobset = module_dir("jobset") / "config/components/crd/bases"
    trainer = module_dir("trainer") / "manifests/base/crds"
    return [d for folder in (jobset, trainer) for f in sorted(folder.glob("*.yaml"))
            for d in _docs(f) if d.get("kind") == "CustomResourceDefinition"]  # fmt: skip


def _pointer(doc, path: str):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc, parts[-1]


def json_patch(doc: dict, ops: list[dict]) -> dict:
    """RFC 6902 ``add``/``replace``/``remove`` (what these kustomize patches use)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        parent, last = _pointer(doc, op["path"])
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(index, op["value"])
            elif op["op"] == "replace":
                parent[index] = op["value"]
            else:
                parent.pop(index)
        elif op["op"] == "remove":
            parent.pop(last)
        else:
            parent[last] = op["value"]
    return doc


def _webhooks(folder: Path, patches: dict[str, list[Path]]) -> list[dict]:
    out = []
    for doc in _docs(folder / "manifests.yaml"):
        for patch in patches.get(doc["kind"], ()):
            doc = json_patch(doc, yaml.safe_load(patch.read_text()))
        out.append(doc)
    return out


def webhook_configurations(trainer_port: int, jobset_port: int, ca: bytes) -> list[dict]:
    """The two projects' webhook configurations, each webhook's service replaced by
    ``https://127.0.0.1:PORT<path>`` and the CA bundle given."""
    jobset = module_dir("jobset") / "config/components/webhook"
    trainer = module_dir("trainer") / "manifests/base/webhook"
    found = [
        ("jobset-", jobset_port, _webhooks(jobset, {
            "MutatingWebhookConfiguration": [jobset / "patches/mutating-patch.yaml"],
            "ValidatingWebhookConfiguration": [jobset / "patches/validating-patch.yaml"]})),
        ("", trainer_port, _webhooks(trainer, {
            "MutatingWebhookConfiguration": [trainer / "patch_mutating.yaml"],
            "ValidatingWebhookConfiguration": [trainer / "patch_validating.yaml"]})),
    ]  # fmt: skip
    bundle = base64.b64encode(ca).decode()
    out = []
    for prefix, port, docs in found:
        for doc in docs:
            doc["metadata"]["name"] = prefix + doc["metadata"]["name"]
            for hook in doc["webhooks"]:
                path = hook["clientConfig"]["service"].get("path", "/")
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}",
                                        "caBundle": bundle}  # fmt: skip
            out.append(doc)
    return out


def _kustomized(folder: Path) -> list[Path]:
    """The files a kustomization's ``resources`` name, folders followed."""
    listed = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    out = []
    for item in listed:
        path = folder / item
        out += _kustomized(path) if path.is_dir() else [path]
    return out


def runtimes() -> list[dict]:
    """The ClusterTrainingRuntimes of ``manifests/overlays/runtimes`` (base + labels + images)."""
    root = module_dir("trainer") / "manifests"
    overlay = yaml.safe_load((root / "overlays/runtimes/kustomization.yaml").read_text())
    labels = {k: v for entry in overlay.get("labels") or [] for k, v in entry["pairs"].items()}
    tags = {i["name"]: i["newTag"] for i in overlay.get("images") or []}
    out = []
    for path in _kustomized(root / "base/runtimes"):
        for doc in _docs(path):
            doc["metadata"].setdefault("labels", {}).update(labels)
            _retag(doc, tags)
            out.append(doc)
    return out


def _retag(node, tags: dict[str, str]) -> None:
    if isinstance(node, dict):
        image = node.get("image")
        if isinstance(image, str) and image.split(":")[0] in tags:
            node["image"] = f"{image.split(':')[0]}:{tags[image.split(':')[0]]}"
        for value in node.values():
            _retag(value, tags)
    elif isinstance(node, list):
        for value in node:
            _retag(value, tags)


def trainer_public(namespace: str) -> list[dict]:
    """What the Trainer's manager overlay installs for its SDK beside the controller: the
    ``configMapGenerator`` ConfigMaps (``kubeflow-trainer-public``: the Trainer's version, read
    by the Kubeflow SDK) and the Role and RoleBinding that let every user read them."""
    root = module_dir("trainer") / "manifests"
    overlay = yaml.safe_load((root / "overlays/manager/kustomization.yaml").read_text())
    out = []
    for generated in overlay.get("configMapGenerator") or []:
        data = dict(item.split("=", 1) for item in generated.get("literals") or [])
        out.append({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": generated["name"], "namespace": namespace},
                    "data": data})  # fmt: skip
    for path in sorted((root / "base/rbac").glob("public_configmap_*.yaml")):
        for doc in _docs(path):
            doc["metadata"]["namespace"] = namespace
            out.append(doc)
    return out
