"""The Trainer's rules as code (tests/harness/trainer_rules.py): each refuses what Trainer v2.3.0
refuses and lets pass what it accepts; they are the official CRD's wherever ../shared is here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.harness.crd import models_schema, official_schema, validate_trainjob
from tests.harness.runtimes import runtime_manifest
from tests.harness.trainer_rules import (
    API_VERSION,
    BOUNDS,
    CEL,
    MAP_KEYS,
    pod_names,
    violations,
)


def trainjob() -> dict:
    """A small valid TrainJob of two nodes on torch-distributed."""
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "metadata": {"name": "fit"},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
            "trainer": {
                "numNodes": 2,
                "command": ["torchrun", "train.py"],
                "env": [{"name": "LR", "value": "0.1"}],
            },
        },
    }


def patch(manager: str = "kale-ext.io/jupyterlab", job: str = "node", **pod) -> dict:
    """A runtime patch of one replicated job's pod spec."""
    pod = pod or {"nodeSelector": {"pool": "gpu"}}
    template = {"spec": {"template": {"spec": pod}}}
    return {
        "manager": manager,
        "trainingRuntimeSpec": {
            "template": {"spec": {"replicatedJobs": [{"name": job, "template": template}]}}
        },
    }


def put(path: str, value) -> Callable[[dict], None]:
    """A change that sets ``path`` (dotted) to ``value``."""

    def change(tj: dict) -> None:
        *parents, last = path.split(".")
        node = tj
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value

    return change


@dataclass
class RuleCase:
    name: str
    change: Callable[[dict], None]
    refused: str | None  # within one of the violations; None: accepted
    runtime: str | None = "torch-distributed"  # None: rules that need no runtime


PET = [{"name": "PET_NNODES", "value": "4"}]
SIDE = {"containers": [{"name": "sidecar", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}
CASES = [
    RuleCase("valid as it is", lambda tj: None, None),
    RuleCase("48 characters with only node", put("metadata.name", "a" * 48), None),
    RuleCase("49 characters with only node", put("metadata.name", "a" * 49),
             "-node-0-1-abcde has 64 characters: the JobSet webhook allows 63"),
    RuleCase("12 nodes take one character more", lambda tj: [
        put("metadata.name", "a" * 48)(tj), put("spec.trainer.numNodes", 12)(tj)], "allows 63"),
    RuleCase("33 characters with a dataset initializer", put("metadata.name", "a" * 33), None,
             "torch-distributed-with-cache"),
    RuleCase("34 characters with a dataset initializer", put("metadata.name", "a" * 34),
             "-dataset-initializer-0-0-abcde has 64 characters", "torch-distributed-with-cache"),
    RuleCase("an upper-case name", put("metadata.name", "Fit"), "must match RFC 1035", None),
    RuleCase("a name starting with a digit", put("metadata.name", "1fit"), "must match RFC 1035", None),
    RuleCase("a name of 64 characters", put("metadata.name", "a" * 64), "no more than 63 characters", None),
    RuleCase("a storage URI without a scheme", put("spec.initializer.dataset.storageUri", "data/set"),
             "storageUri may be empty, or it must be a valid URI"),
    RuleCase("a storage URI", put("spec.initializer.model.storageUri", "hf://org/model"), None),
    RuleCase("an empty storage URI", put("spec.initializer.model.storageUri", ""), None),
    RuleCase("managed by someone else", put("spec.managedBy", "me"), "ManagedBy must be"),
    RuleCase("managed by MultiKueue", put("spec.managedBy", "kueue.x-k8s.io/multikueue"), None),
    RuleCase("a deadline of 0 s", put("spec.activeDeadlineSeconds", 0), "less than the minimum of 1"),
    RuleCase("129 command items", put("spec.trainer.command", ["x"] * 129), "is too long"),
    RuleCase("an image of 501 characters", put("spec.trainer.image", "x" * 501), "is too long"),
    RuleCase("two env entries of the same name",
             put("spec.trainer.env", [{"name": "LR", "value": "1"}, {"name": "LR", "value": "2"}]),
             "spec.trainer.env: two entries with name ('LR',)"),
    RuleCase("a PET_* name on a torch runtime", put("spec.trainer.env", PET),
             "spec.trainer.env[0]: PET_NNODES is set by the torch plugin"),
    RuleCase("a PET_* name on another runtime", put("spec.trainer.env", PET), None, "xgboost-distributed"),
    RuleCase("our runtime patch", put("spec.runtimePatches", [patch()]), None),
    RuleCase("a manager without a domain", put("spec.runtimePatches", [patch("jupyterlab")]),
             "'jupyterlab' is not a domain-prefixed path"),
    RuleCase("two patches of one manager", put("spec.runtimePatches", [patch(), patch()]),
             "two entries with manager ('kale-ext.io/jupyterlab',)"),
    RuleCase("17 patches", put("spec.runtimePatches", [patch(f"a.io/{i}") for i in range(17)]),
             "spec.runtimePatches: [{"),
    RuleCase("a patch of a job the runtime lacks", put("spec.runtimePatches", [patch(job="launcher")]),
             "the runtime has no replicated job 'launcher'"),
    RuleCase("a patch of a container the runtime lacks", put("spec.runtimePatches", [patch(**SIDE)]),
             "containers[0]: node has no containers 'sidecar'"),
    RuleCase("a patch of the node container's env", put("spec.runtimePatches", [
        patch(containers=[{"name": "node", "env": [{"name": "A", "value": "1"}]}])]),
             "the env of node is not patched this way"),
    RuleCase("a patch of the node container's mounts", put("spec.runtimePatches", [
        patch(containers=[{"name": "node", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}])]),
             None),
    RuleCase("trainer status without its time", put("status.trainerStatus", {"progressPercentage": 5}),
             "lastUpdatedTime is required when trainerStatus is present"),
    RuleCase("trainer status over 100 %", put("status.trainerStatus", {
        "progressPercentage": 101, "lastUpdatedTime": "2026-11-27T12:00:00Z"}),
             "101 is greater than the maximum of 100"),
    RuleCase("a metric name past 64 characters", put("status.trainerStatus", {
        "metrics": [{"name": "m" * 65, "value": "1"}], "lastUpdatedTime": "2026-11-27T12:00:00Z"}),
             "is too long"),
    RuleCase("another API version", put("apiVersion", "trainer.kubeflow.org/v1"),
             "not a trainer.kubeflow.org/v1alpha1 TrainJob"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_rules(case):
    tj = trainjob()
    case.change(tj)
    runtime = runtime_manifest(case.runtime) if case.runtime else None
    found = violations(tj, runtime)
    if case.refused is None:
        assert found == []
        validate_trainjob(tj, runtime)  # the schemas accept it too
    else:
        assert any(case.refused in v for v in found), found


def test_the_webhook_rules_need_the_runtime():
    tj = trainjob()
    tj["metadata"]["name"] = "a" * 60
    assert not any("JobSet webhook" in v for v in violations(tj))
    assert any("JobSet webhook" in v for v in violations(tj, runtime_manifest("torch-distributed")))


@pytest.mark.parametrize(
    "runtime, nodes, expected",
    [
        ("torch-distributed", 2, ["fit-node-0-1-abcde"]),
        ("torch-distributed-with-cache", 1,
         ["fit-dataset-initializer-0-0-abcde", "fit-node-0-0-abcde"]),
        ("deepspeed-distributed", 3, ["fit-node-0-1-abcde", "fit-launcher-0-0-abcde"]),
    ],
)  # fmt: skip
def test_pod_names_as_jobset_makes_them(runtime, nodes, expected):
    """The MPI launcher is one of the nodes: 3 nodes are 2 `node` pods and a launcher."""
    tj = trainjob()
    tj["spec"]["trainer"]["numNodes"] = nodes
    assert pod_names(tj, runtime_manifest(runtime)) == expected


def _schema_at(schema: dict, root: dict, path: str) -> dict | None:
    """The schema of the field at ``path`` in a JSON schema (following $ref), or None."""
    node = schema
    for part in filter(None, path.split(".")):
        while "$ref" in node:
            node = root["$defs"][node["$ref"].split("/")[-1]]
        node = (node.get("properties") or {}).get(part.removesuffix("[]"))
        if node is None:
            return None
        while "$ref" in node:
            node = root["$defs"][node["$ref"].split("/")[-1]]
        if part.endswith("[]"):
            node = node.get("items") or {}
    return node


def _crd_rules(node: dict, path: str = "") -> tuple[set, dict]:
    """The CRD's create-time CEL rules (path, rule, message) and its bounds on spec and on the
    trainer's status, by path."""
    rules = {
        (path, r["rule"], " ".join(r["message"].split()))
        for r in node.get("x-kubernetes-validations", [])
        if r["rule"] != "self == oldSelf"
    }
    kept = {
        k: node[k]
        for k in ("minimum", "maximum", "minLength", "maxLength", "maxItems", MAP_KEYS)
        if k in node
    }
    ours = path.startswith(("spec.", "status.trainerStatus."))
    bounds = {path: kept} if kept and ours else {}
    children = [(f"{path}.{k}".lstrip("."), v) for k, v in node.get("properties", {}).items()]
    if "items" in node:
        children.append((path + "[]", node["items"]))
    for child_path, child in children:
        more_rules, more_bounds = _crd_rules(child, child_path)
        rules |= more_rules
        bounds |= more_bounds
    return rules, bounds


def test_the_rules_are_the_crds():
    """Every rule sits on a field the models know; where ../shared is present, CEL and BOUNDS
    are exactly the official CRD's (so a new rule upstream shows up here)."""
    models = models_schema()
    for path in [c.path for c in CEL] + list(BOUNDS):
        assert _schema_at(models, models, path) is not None, path
    crd = official_schema()
    if crd is not None:
        rules, bounds = _crd_rules(crd)
        assert {(c.path, c.rule, c.message) for c in CEL} == rules
        assert BOUNDS == bounds
