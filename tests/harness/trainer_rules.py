"""What Kubeflow Trainer v2.3.0 refuses in a TrainJob beyond its models' schema, as code.

- ``CEL``: the TrainJob CRD's ``x-kubernetes-validations`` that apply when a job is created (its
  ``self == oldSelf`` rules guard updates only), with the CRD's own messages;
- ``BOUNDS``: the CRD's bounds on ``spec`` and on ``status.trainerStatus``, which the Trainer's
  status server writes (the kubeflow_trainer_api models carry none), and its
  lists keyed by a field (``x-kubernetes-list-map-keys``: no two entries with the same key);
- the webhooks (reference/kubeflow-trainer.md §2–3), given the job's runtime: the JobSet
  webhook's 63-character pod names (so a job name of at most 48 characters with only `node`, 33
  with a dataset initializer), the torch plugin's reserved ``PET_*`` names, and runtime patches
  that target only the runtime's own replicated jobs and containers, never the env of `node` or
  an initializer; every patch names its manager as a domain-prefixed path.

``tests/harness/test_trainer_rules.py`` checks ``CEL`` and ``BOUNDS`` against the official CRD
wherever ``../shared`` is present.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

API_VERSION = "trainer.kubeflow.org/v1alpha1"
NAME = "^[a-z]([-a-z0-9]*[a-z0-9])?$"  # RFC 1035 label
URI = "^[A-Za-z][A-Za-z0-9+.-]*://.+$"
MANAGED_BY = ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
MANAGER = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+/[-\w./]+")
RESERVED_ENV = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
                "PET_MASTER_PORT")  # fmt: skip
POD_NAME_MAX = 63
RANDOM_SUFFIX = "-abcde"  # the Job controller's 5 random characters at the end of a pod name


@dataclass(frozen=True)
class Cel:
    """One CEL rule of the CRD: where it sits, its text and message, and the same in Python."""

    path: str  # dotted, "[]" for the items of a list, "" for the TrainJob itself
    rule: str
    message: str
    holds: Callable[[Any], bool]


def _name(tj: dict) -> str:
    return str((tj.get("metadata") or {}).get("name", ""))


def _uri(value: Any) -> bool:
    return value == "" or re.search(URI, str(value)) is not None


CEL = (
    Cel("", f"self.metadata.name.matches('{NAME}')",
        "metadata.name must match RFC 1035 DNS label format",
        lambda tj: re.search(NAME, _name(tj)) is not None),
    Cel("", "size(self.metadata.name) <= 63", "metadata.name must be no more than 63 characters",
        lambda tj: len(_name(tj)) <= 63),
    *(Cel(f"spec.initializer.{kind}.storageUri", f"self == '' || self.matches('{URI}')",
          "storageUri may be empty, or it must be a valid URI (scheme://...)", _uri)
      for kind in ("dataset", "model")),
    Cel("spec.managedBy", "self in [" + ", ".join(f"'{m}'" for m in MANAGED_BY) + "]",
        "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue "
        "if set",
        lambda value: value in MANAGED_BY),
    Cel("status.trainerStatus", "has(self.lastUpdatedTime)",
        "lastUpdatedTime is required when trainerStatus is present",
        lambda status: isinstance(status, dict) and "lastUpdatedTime" in status),
)  # fmt: skip

MAP_KEYS = "x-kubernetes-list-map-keys"
_LONG_NAME = {"minLength": 1, "maxLength": 253}
_ENV = {"maxItems": 128, MAP_KEYS: ["name"]}
_CONTAINERS = {"maxItems": 64, MAP_KEYS: ["name"]}
_BY_NAME = {"maxItems": 128, MAP_KEYS: ["name"]}
_JOBS = "spec.runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs"
_POD = _JOBS + "[].template.spec.template.spec"
BOUNDS: dict[str, dict] = {
    "spec.activeDeadlineSeconds": {"minimum": 1},
    "spec.managedBy": {"maxLength": 253},
    "spec.runtimeRef.apiGroup": {"maxLength": 253},
    "spec.runtimeRef.kind": {"maxLength": 253},
    "spec.runtimeRef.name": _LONG_NAME,
    "spec.trainer.image": {"maxLength": 500},
    "spec.trainer.command": {"maxItems": 128},
    "spec.trainer.command[]": {"maxLength": 1 << 20},
    "spec.trainer.args": {"maxItems": 128},
    "spec.trainer.args[]": {"maxLength": 1 << 20},
    "spec.trainer.env": _ENV,
    "spec.trainer.resourcesPerNode.claims": {MAP_KEYS: ["name"]},
    **{f"spec.initializer.{kind}.env": _ENV for kind in ("dataset", "model")},
    **{f"spec.initializer.{kind}.storageUri": {"maxLength": 2048} for kind in ("dataset", "model")},
    "spec.runtimePatches": {"maxItems": 16, MAP_KEYS: ["manager"]},
    "spec.runtimePatches[].manager": _LONG_NAME,
    _JOBS: {"maxItems": 100, MAP_KEYS: ["name"]},
    _JOBS + "[].name": _LONG_NAME,
    **{f"{_POD}.{kind}": _CONTAINERS for kind in ("containers", "initContainers")},
    **{f"{_POD}.{kind}[].name": _LONG_NAME for kind in ("containers", "initContainers")},
    **{f"{_POD}.{kind}[].env": _ENV for kind in ("containers", "initContainers")},
    **{f"{_POD}.{kind}[].volumeMounts": _BY_NAME for kind in ("containers", "initContainers")},
    _POD + ".imagePullSecrets": _CONTAINERS,
    _POD + ".schedulingGates": {"maxItems": 16, MAP_KEYS: ["name"]},
    _POD + ".serviceAccountName": {"maxLength": 253},
    _POD + ".terminationGracePeriodSeconds": {"minimum": 0},
    _POD + ".tolerations": {"maxItems": 128},
    _POD + ".volumes": _BY_NAME,
    "status.trainerStatus.progressPercentage": {"minimum": 0, "maximum": 100},
    "status.trainerStatus.estimatedRemainingSeconds": {"minimum": 0},
    "status.trainerStatus.metrics": {"maxItems": 256},
    "status.trainerStatus.metrics[].name": {"minLength": 1, "maxLength": 64},
    "status.trainerStatus.metrics[].value": {"minLength": 1, "maxLength": 64},
}


def values_at(obj: Any, path: str) -> list[tuple[str, Any]]:
    """(where, value) for each value present at ``path`` ("a.b[].c"; "" is ``obj`` itself)."""
    found = [("", obj)]
    for part in filter(None, path.split(".")):
        key, items = part.removesuffix("[]"), part.endswith("[]")
        deeper = []
        for where, value in found:
            if not isinstance(value, dict) or key not in value:
                continue
            at, child = f"{where}.{key}".lstrip("."), value[key]
            if not items:
                deeper.append((at, child))
            elif isinstance(child, list):
                deeper += [(f"{at}[{i}]", item) for i, item in enumerate(child)]
        found = deeper
    return found


def _bounds(tj: dict) -> list[str]:
    from jsonschema import Draft202012Validator

    out = []
    for path, bound in BOUNDS.items():
        check = Draft202012Validator({k: v for k, v in bound.items() if k != MAP_KEYS})
        for where, value in values_at(tj, path):
            out += [f"{where}: {e.message}" for e in check.iter_errors(value)]
            if MAP_KEYS in bound and isinstance(value, list):
                keys = [
                    tuple(i.get(k) for k in bound[MAP_KEYS]) for i in value if isinstance(i, dict)
                ]
                for twice in sorted({k for k in keys if keys.count(k) > 1}, key=str):
                    out.append(f"{where}: two entries with {'/'.join(bound[MAP_KEYS])} {twice}")
    return out


def _managers(tj: dict) -> list[str]:
    return [
        f"{where}: {manager!r} is not a domain-prefixed path such as example.com/jupyter"
        for where, manager in values_at(tj, "spec.runtimePatches[].manager")
        if not (isinstance(manager, str) and MANAGER.fullmatch(manager))
    ]


def _dig(node: Any, *keys: str) -> dict:
    """The mapping at ``keys`` under ``node``; empty where there is none (the schema says why)."""
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


_IN_JOB = ("template", "spec", "template", "spec")  # where a replicated job keeps its pod spec


def pod_names(tj: dict, runtime: dict) -> list[str]:
    """The longest pod name of each of the runtime's replicated jobs for this TrainJob:
    ``<job>-<replicated job>-<job index>-<completion index>-<5 random characters>``."""
    policy = runtime["spec"].get("mlPolicy") or {}
    nodes = _dig(tj, "spec", "trainer").get("numNodes") or policy.get("numNodes") or 1
    nodes = nodes if isinstance(nodes, int) else 1
    if (policy.get("mpi") or {}).get("runLauncherAsNode"):
        nodes -= 1  # the launcher is one of the nodes
    return [
        f"{_name(tj)}-{job['name']}-0-{max(nodes - 1, 0) if job['name'] == 'node' else 0}"
        + RANDOM_SUFFIX
        for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]
    ]


def _patch_targets(tj: dict, runtime: dict) -> list[str]:
    """Patches name only the runtime's replicated jobs and containers, and leave the env of
    `node` and the initializers alone."""
    out = []
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    pods = {job["name"]: _dig(job, *_IN_JOB) for job in jobs}
    for where, step in values_at(tj, _JOBS + "[]"):
        name = _dig(step).get("name")
        if name not in pods:
            out.append(f"{where}: the runtime has no replicated job {name!r}")
            continue
        for kind in ("containers", "initContainers"):
            have = {c.get("name") for c in pods[name].get(kind) or []}
            for i, patch in enumerate(_dig(step, *_IN_JOB).get(kind) or []):
                target = _dig(patch).get("name")
                if target not in have:
                    out.append(f"{where}.{kind}[{i}]: {name} has no {kind} {target!r}")
                elif "env" in patch and (target == "node" or str(target).endswith("-initializer")):
                    out.append(f"{where}.{kind}[{i}]: the env of {target} is not patched this way")
    return out


def _webhooks(tj: dict, runtime: dict) -> list[str]:
    out = [
        f"pod name {pod} has {len(pod)} characters: the JobSet webhook allows {POD_NAME_MAX}"
        for pod in pod_names(tj, runtime)
        if len(pod) > POD_NAME_MAX
    ]
    if "torch" in (runtime["spec"].get("mlPolicy") or {}):
        out += [
            f"{where}: {env.get('name')} is set by the torch plugin (reserved)"
            for where, env in values_at(tj, "spec.trainer.env[]")
            if isinstance(env, dict) and env.get("name") in RESERVED_ENV
        ]
    return out + _patch_targets(tj, runtime)


def violations(tj: dict, runtime: dict | None = None) -> list[str]:
    """What the API server and the Trainer's webhooks would refuse in ``tj`` (Kubernetes JSON
    form); the webhooks' rules need the job's ``runtime`` manifest."""
    out = []
    if (tj.get("apiVersion"), tj.get("kind")) != (API_VERSION, "TrainJob"):
        out.append(f"not a {API_VERSION} TrainJob: {tj.get('apiVersion')} {tj.get('kind')}")
    for cel in CEL:
        for where, value in values_at(tj, cel.path):
            if not cel.holds(value):
                out.append(f"{where or 'TrainJob'}: {cel.message}")
    out += _bounds(tj) + _managers(tj)
    if runtime is not None:
        out += _webhooks(tj, runtime)
    return out
