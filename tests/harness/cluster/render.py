"""The pods Kubeflow Trainer v2.3 (with JobSet) makes for a TrainJob, as pure functions.

From the runtime's JobSet template: the TrainJob's ``runtimePatches`` strategic-merged in list
order; the trainer (the replicated job whose template is labelled ``trainjob-ancestor-step:
trainer``, container ``node``) takes the TrainJob's image, command and args in place of the
runtime's, its env upserted by name, its ``resourcesPerNode`` merged over the runtime's (keys
in the TrainJob win); the torch plugin's ``PET_*`` variables (or the xgboost and jax plugins' own, from
kale_ext/job/framework_env.py) and container port 29500 (reference/kubeflow-trainer.md §3); then JobSet's defaults (``restartPolicy: OnFailure``, DNS
hostnames ``<job>-node-0-<i>`` under the subdomain ``<job>``), its and the Job controller's
labels and annotations (JobSet v0.12.0's whole set, uids included), the Job controller's
``JOB_COMPLETION_INDEX`` on every container, and what the API server's defaulting adds
(``api_defaults``). The other replicated jobs (``render_jobs``: initializers) get a pod each,
with the initializer plugin's ``STORAGE_URI``; JobSet's claim volumes (``claim_volumes``:
``volumeClaimPolicies``) go on any pod that mounts them; JobSet's index labels count every
replicated job.
tests/harness/controlplane/test_conformance.py checks these pods against the ones the real
controllers make.
"""

from __future__ import annotations

import copy
import hashlib
import math
import uuid
from dataclasses import dataclass, field

from kale_ext.job.framework_env import FRAMEWORK_ENV, cluster_env, gpu_count
from tests.harness.cluster.objects import strategic_merge
from tests.harness.runtimes import ANCESTOR

NODE = "node"
MASTER_PORT = 29500
INDEX = "batch.kubernetes.io/job-completion-index"
#: The Job controller's, on every container of an Indexed Job's pods.
COMPLETION_INDEX_ENV = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
    "apiVersion": "v1", "fieldPath": f"metadata.labels['{INDEX}']"}}}  # fmt: skip
JOBSET = "jobset.sigs.k8s.io/"


@dataclass
class Rendered:
    """One Job of a TrainJob's JobSet (one replicated job): its pods (without names' random
    suffixes) and what it is made of."""

    job: str  # the Job's name: <trainjob>-<replicated job>-0
    replicated_job: dict  # the runtime's replicated job, patched (its Job spec: backoffLimit)
    trainer: bool = True  # the trainer job (else an initializer, an MPI node job)
    pods: list[dict] = field(default_factory=list)
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))  # the Job's


def quantity(text) -> float:
    """A Kubernetes quantity as a number (cpu "500m" is 0.5, memory "1Ki" is 1024)."""
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
             "Gi": 2**30, "Ti": 2**40}  # fmt: skip
    text = str(text)
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def num_proc_per_node(trainer: dict, container: dict) -> str:
    """PET_NPROC_PER_NODE: the TrainJob's numProcPerNode, else from the resources the TrainJob
    (else the runtime's container) asks for: `auto` with GPUs, else the CPUs rounded up (≥ 1)."""
    if trainer.get("numProcPerNode"):
        return str(trainer["numProcPerNode"])
    resources = trainer.get("resourcesPerNode") or container.get("resources") or {}
    for kind in ("requests", "limits"):
        gpus = [v for k, v in (resources.get(kind) or {}).items() if "gpu" in k.lower()]
        if gpus:
            return "auto" if quantity(gpus[0]) > 0 else "1"
    cpu = (resources.get("requests") or {}).get("cpu") or (resources.get("limits") or {}).get("cpu")
    return str(max(1, math.ceil(quantity(cpu)))) if cpu else "1"


def _upsert(items: list[dict], new: list[dict], key: str = "name") -> list[dict]:
    out = [i for i in items if i.get(key) not in {n.get(key) for n in new}]
    return out + copy.deepcopy(new)


def _trainer_container(tj: dict, pod: dict, plugin: str | None, nodes: int) -> None:
    """The TrainJob's trainer, and its ML policy plugin's variables (torch's PET_*, xgboost's
    DMLC_*, jax's JAX_*: kale_ext/job/framework_env.py), on the `node` container."""
    trainer = (tj.get("spec") or {}).get("trainer") or {}
    name = tj["metadata"]["name"]
    container = next((c for c in pod.get("containers") or [] if c.get("name") == NODE), None)
    if container is None:
        return
    for key in ("image", "command", "args"):
        if trainer.get(key):
            container[key] = copy.deepcopy(trainer[key])
    container["env"] = _upsert(container.get("env") or [], trainer.get("env") or [])
    asked = trainer.get("resourcesPerNode") or {}
    if asked:
        had = container.get("resources") or {}
        merged = {k: {**(had.get(k) or {}), **(asked.get(k) or {})} for k in ("requests", "limits")}
        container["resources"] = {k: v for k, v in merged.items() if v}
    if plugin is None:
        return
    env = cluster_env(plugin, name, nodes, gpu_count(container.get("resources") or {}))
    if plugin == "torch":
        env = [
            {"name": "PET_NNODES", "value": str(nodes)},
            {"name": "PET_NPROC_PER_NODE", "value": num_proc_per_node(trainer, container)},
            {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{INDEX}']"}}},
            {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
            {"name": "PET_MASTER_PORT", "value": str(MASTER_PORT)},
        ]  # fmt: skip
    container["env"] = _upsert(container["env"], env)
    container["ports"] = _upsert(container.get("ports") or [], [{"containerPort": MASTER_PORT}],
                                 "containerPort")  # fmt: skip


def jobset_template(tj: dict, runtime: dict) -> dict:
    """The runtime's JobSet spec with the TrainJob's runtime patches applied, in order."""
    template = copy.deepcopy(runtime["spec"]["template"])
    for patch in (tj.get("spec") or {}).get("runtimePatches") or []:
        template = strategic_merge(template, (patch.get("trainingRuntimeSpec") or {}).get(
            "template") or {})  # fmt: skip
    return template


def _initializer_env(tj: dict, pod: dict, step: dict) -> None:
    """The initializer plugin's: the TrainJob's ``spec.initializer.dataset`` (``model``) on the
    initializer job of that kind (its ancestor label ``dataset-initializer``), container of the
    same name: ``STORAGE_URI`` from ``storageUri``, its ``env`` upserted, ``secretRef`` as
    ``envFrom``."""
    kind = ((step["template"].get("metadata") or {}).get("labels") or {}).get(ANCESTOR, "")
    asked = ((tj.get("spec") or {}).get("initializer") or {}).get(kind.removesuffix(
        "-initializer")) if kind.endswith("-initializer") else None  # fmt: skip
    container = next((c for c in pod.get("containers") or [] if c.get("name") == kind), None)
    if not asked or container is None:
        return
    env = list(asked.get("env") or [])
    if asked.get("storageUri"):
        env.insert(0, {"name": "STORAGE_URI", "value": asked["storageUri"]})
    container["env"] = _upsert(container.get("env") or [], env)
    if asked.get("secretRef"):
        container["envFrom"] = [*(container.get("envFrom") or []), {"secretRef": copy.deepcopy(
            asked["secretRef"])}]  # fmt: skip


def claim_volumes(spec: dict, policies: list[dict], jobset_name: str) -> None:
    """JobSet's ``volumeClaimPolicies``: a pod ``spec`` with a container mounting a claim
    template's name gets the volume of the claim ``<template>-<jobset>`` (made by the trainer), after
    the volumes the Trainer's plugins added (JobSet adds it as it makes the Job)."""
    mounted = {m.get("name") for c in spec.get("initContainers", []) + spec.get("containers", [])
               for m in c.get("volumeMounts") or []}  # fmt: skip
    for policy in policies:
        for template in policy.get("templates") or []:
            name = (template.get("metadata") or {}).get("name")
            if name in mounted:
                spec.setdefault("volumes", []).append({"name": name, "persistentVolumeClaim": {
                    "claimName": f"{name}-{jobset_name}"}})  # fmt: skip


def render_jobs(
    tj: dict, runtime: dict, uid: str | None = None, attempt: int = 0
) -> list[Rendered]:
    """Every replicated job of the TrainJob's JobSet, in the runtime's order, each with its
    pods (in Kubernetes JSON form, names without suffix); one Job per replicated job (replica
    index 0). The trainer job (ancestor label ``trainer``) has a pod per node. ``uid``: the
    JobSet's (a new one when None); ``attempt``: its restart attempt (its failure policy's)."""
    name, namespace = tj["metadata"]["name"], tj["metadata"].get("namespace")
    policy = runtime["spec"].get("mlPolicy") or {}
    trainer = (tj.get("spec") or {}).get("trainer") or {}
    nodes = int(trainer.get("numNodes") or policy.get("numNodes") or 1)
    plugin = next((k for k in ("torch", *FRAMEWORK_ENV) if k in policy), None)
    spec = jobset_template(tj, runtime)["spec"]
    jobs = spec["replicatedJobs"]
    if not any(_ancestor(j) == "trainer" for j in jobs):
        raise ValueError(f"runtime {runtime['metadata']['name']} has no trainer replicated job")
    uid = uid or str(uuid.uuid4())  # the JobSet's
    replicas = [int(j.get("replicas") or 1) for j in jobs]
    groups = [j.get("groupName") or "default" for j in jobs]
    out = []
    for at, step in enumerate(jobs):
        group = groups[at]
        job_name = f"{name}-{step['name']}-0"
        before_in_group = sum(r for r, g in zip(replicas[:at], groups[:at], strict=True)
                              if g == group)  # fmt: skip
        jobset = {  # JobSet's labels and annotations of the Job's pods (labelAndAnnotateObject)
            "jobset-name": name, "replicatedjob-name": step["name"], "job-index": "0",
            "job-global-index": str(sum(replicas[:at])),
            "replicatedjob-replicas": str(replicas[at]), "global-replicas": str(sum(replicas)),
            "group-name": group,
            "group-replicas": str(sum(r for r, g in zip(replicas, groups, strict=True)
                                      if g == group)),
            "job-group-index": str(before_in_group), "restart-attempt": str(attempt), "jobset-uid": uid,
            "job-key": hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest(),
        }  # fmt: skip
        is_trainer = _ancestor(step) == "trainer"
        rendered = Rendered(job_name, step, trainer=is_trainer)
        template = step["template"]["spec"]["template"]
        for index in range(nodes if is_trainer else 1):
            pod = copy.deepcopy(template.get("spec") or {})
            if is_trainer:
                _trainer_container(tj, pod, plugin, nodes)
            _initializer_env(tj, pod, step)
            for container in pod.get("initContainers", []) + pod.get("containers", []):
                container["env"] = _upsert(container.get("env") or [], [COMPLETION_INDEX_ENV])
            pod.setdefault("restartPolicy", "OnFailure")
            pod.update(hostname=f"{job_name}-{index}", subdomain=name)
            meta = copy.deepcopy(template.get("metadata") or {})
            meta["labels"] = {
                **(meta.get("labels") or {}),
                **{JOBSET + k: v for k, v in jobset.items()},
                JOBSET + "priority": "0",
                "batch.kubernetes.io/job-name": job_name,
                "job-name": job_name,
                "batch.kubernetes.io/controller-uid": rendered.uid,
                "controller-uid": rendered.uid,
                INDEX: str(index),
            }
            meta["annotations"] = {**(meta.get("annotations") or {}), INDEX: str(index),
                                   **{JOBSET + k: v for k, v in jobset.items()}}  # fmt: skip
            meta.update(generateName=f"{job_name}-{index}-", namespace=namespace)
            rendered.pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                  "spec": pod})  # fmt: skip
        out.append(rendered)
    return out


def render(tj: dict, runtime: dict) -> Rendered:
    """The TrainJob's trainer job (``render_jobs``)."""
    return next(r for r in render_jobs(tj, runtime) if r.trainer)


def _ancestor(step: dict) -> str | None:
    labels = ((step.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(ANCESTOR)


def _default_field_refs(node) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("fieldRef"), dict):
            node["fieldRef"].setdefault("apiVersion", "v1")
        for value in node.values():
            _default_field_refs(value)
    elif isinstance(node, list):
        for value in node:
            _default_field_refs(value)


def api_defaults(pod: dict) -> dict:
    """What the API server's defaulting adds to a pod that the tests compare (in place): a
    fieldRef's ``apiVersion: v1``, a port's ``protocol: TCP``, a container's ``resources: {}``
    (its requests default to its limits),
    a configMap, secret, projected or downwardAPI volume's ``defaultMode: 420`` (0644), and
    ``serviceAccountName: default``. (Its other defaults, and the ServiceAccount admission
    plugin's ``kube-api-access-*`` volume, are not emulated.)"""
    spec = pod["spec"]
    _default_field_refs(spec)
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        resources = container.setdefault("resources", {})
        if resources.get("limits"):  # a request not given is its limit
            resources["requests"] = {**resources["limits"], **(resources.get("requests") or {})}
        for port in container.get("ports") or []:
            port.setdefault("protocol", "TCP")
    for volume in spec.get("volumes") or []:
        for kind in ("configMap", "secret", "projected", "downwardAPI"):
            if isinstance(volume.get(kind), dict):
                volume[kind].setdefault("defaultMode", 420)
    spec.setdefault("serviceAccountName", "default")
    return pod
