"""Kueue in the control plane: its CRDs (with the conversion webhook its kustomization adds to
the CRDs served at two versions, v1beta1 and v1beta2), its webhook configurations (with the
kustomization's namespace selectors), pointed at ``https://127.0.0.1:PORT``, and its manager's
configuration: the TrainJob and JobSet integrations, no visibility server, certificates given.

Kueue reads its metrics server's certificate from a fixed path, /etc/kueue/metrics/certs,
when it does not manage its certificates itself: it runs in a mount namespace of its own whose
/etc is this machine's with that folder laid over it (a read-only overlay)."""

from __future__ import annotations

import base64
import copy

import yaml

from tests.harness.controlplane.manifests import _docs, json_patch, module_dir

NAMESPACE = "kueue-system"
FRAMEWORKS = ("trainer.kubeflow.org/trainjob", "jobset.x-k8s.io/jobset")
#: The webhooks served: Kueue's own kinds' and the enabled integrations'. Kueue also answers the
#: others' with a no-op, but v0.17.0's no-op for batch Jobs panics (every Job JobSet creates is
#: refused), so their configurations are left out.
SERVED = ("kueue-x-k8s-io", "trainer-kubeflow-org-v1alpha1-trainjob", "jobset-x-k8s-io")


def crds(port: int, ca: bytes) -> list[dict]:
    root = module_dir("kueue") / "config/components/crd"
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text())
    conversion = {}
    for patch in kustomization.get("patches") or []:
        doc = yaml.safe_load((root / patch["path"]).read_text())
        if "conversion" in (doc.get("spec") or {}):
            conversion[doc["metadata"]["name"]] = doc["spec"]["conversion"]
    bundle = base64.b64encode(ca).decode()
    out = []
    for path in sorted((root / "bases").glob("*.yaml")):
        for doc in _docs(path):
            found = conversion.get(doc["metadata"]["name"])
            if found:
                found = copy.deepcopy(found)
                config = found["webhook"]["clientConfig"]
                path_ = config["service"].get("path", "/convert")
                found["webhook"]["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path_}",
                                                    "caBundle": bundle}  # fmt: skip
                doc["spec"]["conversion"] = found
            out.append(doc)
    return out


def webhook_configurations(port: int, ca: bytes) -> list[dict]:
    root = module_dir("kueue") / "config/components/webhook"
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text())
    selectors = {}  # (kind, webhook name) → the patch's fields
    for patch in kustomization.get("patches") or []:
        doc = yaml.safe_load(patch["patch"]) if "patch" in patch else None
        for hook in (doc or {}).get("webhooks") or []:
            selectors[(doc["kind"], hook["name"])] = {k: v for k, v in hook.items() if k != "name"}
    bundle = base64.b64encode(ca).decode()
    out = []
    for doc in _docs(root / "manifests.yaml"):
        doc = json_patch(doc, [])
        doc["metadata"]["name"] = "kueue-" + doc["metadata"]["name"]
        doc["webhooks"] = [h for h in doc["webhooks"]
                           if any(s in h["clientConfig"]["service"].get("path", "") for s in SERVED)]  # fmt: skip
        for hook in doc["webhooks"]:
            hook.update(selectors.get((doc["kind"], hook["name"]), {}))
            path = hook["clientConfig"]["service"].get("path", "/")
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        out.append(doc)
    return out


def configuration(webhook_port: int, health_port: int, cert_dir: str) -> dict:
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": cert_dir},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "manageJobsWithoutQueueName": False,
        "integrations": {"frameworks": list(FRAMEWORKS)},
        "featureGates": {"VisibilityOnDemand": False},
    }  # fmt: skip
