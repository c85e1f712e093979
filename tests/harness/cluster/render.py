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
(``api_defaults``). The trainer job's pods only: other replicated jobs (initializers, an MPI
launcher) are not emulated (``skipped``). tests/harness/controlplane/test_conformance.py checks
these pods against the ones the real controllers make.
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
    """The trainer job of one TrainJob: its pods (without names' random suffixes) and what it
    is made of."""

    job: str  # the Job's name: <trainjob>-node-0
    replicated_job: dict  # the runtime's replicated job, patched (its Job spec: backoffLimit)
    pods: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # replicated jobs that are not emulated
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


def render(tj: dict, runtime: dict) -> Rendered:
    """The pods of the TrainJob's trainer job, in Kubernetes JSON form (names without suffix)."""
    name, namespace = tj["metadata"]["name"], tj["metadata"].get("namespace")
    policy = runtime["spec"].get("mlPolicy") or {}
    trainer = (tj.get("spec") or {}).get("trainer") or {}
    nodes = int(trainer.get("numNodes") or policy.get("numNodes") or 1)
    plugin = next((k for k in ("torch", *FRAMEWORK_ENV) if k in policy), None)
    jobs = jobset_template(tj, runtime)["spec"]["replicatedJobs"]
    labels_of = [
        ((j.get("template") or {}).get("metadata") or {}).get("labels") or {} for j in jobs
    ]
    step = next(
        (j for j, lb in zip(jobs, labels_of, strict=True) if lb.get(ANCESTOR) == "trainer"), None
    )
    if step is None:
        raise ValueError(f"runtime {runtime['metadata']['name']} has no trainer replicated job")
    job_name = f"{name}-{step['name']}-0"
    out = Rendered(job_name, step, skipped=[j["name"] for j in jobs if j is not step])
    jobset = {  # JobSet's labels and annotations of the Job's pods (one replica, group default)
        "jobset-name": name, "replicatedjob-name": step["name"], "job-index": "0",
        "job-global-index": "0", "replicatedjob-replicas": "1", "global-replicas": "1",
        "group-name": "default", "group-replicas": "1", "job-group-index": "0",
        "restart-attempt": "0", "jobset-uid": str(uuid.uuid4()),
        "job-key": hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest(),
    }  # fmt: skip
    template = step["template"]["spec"]["template"]
    for index in range(nodes):
        pod = copy.deepcopy(template.get("spec") or {})
        _trainer_container(tj, pod, plugin, nodes)
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
            "batch.kubernetes.io/controller-uid": out.uid,
            "controller-uid": out.uid,
            INDEX: str(index),
        }
        meta["annotations"] = {**(meta.get("annotations") or {}), INDEX: str(index),
                               **{JOBSET + k: v for k, v in jobset.items()}}  # fmt: skip
        meta.update(generateName=f"{job_name}-{index}-", namespace=namespace)
        out.pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod})
    return out


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
    fieldRef's ``apiVersion: v1``, a port's ``protocol: TCP``, a container's ``resources: {}``,
    a configMap, secret, projected or downwardAPI volume's ``defaultMode: 420`` (0644), and
    ``serviceAccountName: default``. (Its other defaults, and the ServiceAccount admission
    plugin's ``kube-api-access-*`` volume, are not emulated.)"""
    spec = pod["spec"]
    _default_field_refs(spec)
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        container.setdefault("resources", {})
        for port in container.get("ports") or []:
            port.setdefault("protocol", "TCP")
    for volume in spec.get("volumes") or []:
        for kind in ("configMap", "secret", "projected", "downwardAPI"):
            if isinstance(volume.get(kind), dict):
                volume[kind].setdefault("defaultMode", 420)
    spec.setdefault("serviceAccountName", "default")
    return pod
