"""The TrainJob validator (tests/harness/crd.py) refuses what a strict API server refuses, with
every schema it has: the models' always, the official CRD's wherever ../shared is present."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.harness.crd import models_schema, schema_validators, validate_trainjob
from tests.harness.runtimes import official_runtimes, runtime_manifest


def generated() -> dict:
    """A TrainJob as kale_ext makes one: resources, env, a runtime patch, provenance."""
    pod = {"nodeSelector": {"pool": "gpu"}}
    node = {"name": "node", "template": {"spec": {"template": {"spec": pod}}}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "fit", "annotations": {"kale-ext.io/notebook": "fit.ipynb"}},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
            "trainer": {
                "command": ["bash", "-c", "torchrun fit.py"],
                "numNodes": 2,
                "numProcPerNode": 1,
                "env": [{"name": "MODE", "value": "fast"}],
                "resourcesPerNode": {"limits": {"cpu": "2", "memory": "4Gi"}},
            },
            "runtimePatches": [
                {
                    "manager": "kale-ext.io/jupyterlab",
                    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [node]}}},
                }
            ],
        },
    }


def _container_patch(tj: dict) -> dict:
    jobs = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    pod = jobs["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"] = [{"name": "node"}]
    return pod["containers"][0]


@dataclass
class SchemaCase:
    name: str
    change: Callable[[dict], None]
    says: str  # within the complaint


SCHEMA_CASES = [
    SchemaCase("an unknown top-level field", lambda tj: tj.update(extra=1), "'extra' was unexpected"),
    SchemaCase("a removed v2.1 field", lambda tj: tj["spec"].update(podTemplateOverrides=[]),
               "'podTemplateOverrides' was unexpected"),
    SchemaCase("a misspelt trainer field", lambda tj: tj["spec"]["trainer"].update(numProcs=2),
               "'numProcs' was unexpected"),
    SchemaCase("an unknown env field", lambda tj: tj["spec"]["trainer"]["env"][0].update(secret=True),
               "'secret' was unexpected"),
    SchemaCase("resources in a pod spec patch", lambda tj: _container_patch(tj).update(resources={}),
               "'resources' was unexpected"),
    SchemaCase("a number as a string", lambda tj: tj["spec"]["trainer"].update(numNodes="2"),
               "'2' is not of type 'integer'"),
    SchemaCase("a malformed quantity",
               lambda tj: tj["spec"]["trainer"]["resourcesPerNode"]["limits"].update(memory="4 GB"),
               "'4 GB' does not match"),
    SchemaCase("a null field", lambda tj: tj["spec"]["trainer"].update(image=None),
               "None is not of type 'string'"),
    SchemaCase("a runtime without a name", lambda tj: tj["spec"]["runtimeRef"].pop("name"),
               "'name' is a required property"),
]  # fmt: skip


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=lambda c: c.name)
def test_every_schema_refuses(case):
    tj = generated()
    validate_trainjob(tj)  # valid before the change
    case.change(tj)
    for source, validator in schema_validators():
        messages = [e.message for e in validator.iter_errors(tj)]
        assert any(case.says in m for m in messages), (source, messages)
    with pytest.raises(AssertionError, match="kubeflow_trainer_api: "):
        validate_trainjob(tj)


def test_the_models_schema_is_strict_everywhere():
    """No object takes fields it does not name, nothing may be null, no oneOf wrapper is left."""
    schema = models_schema()
    text = json.dumps(schema)
    assert '{"type": "null"}' not in text and "actual_instance" not in text

    def walk(node):
        if isinstance(node, dict):
            if "properties" in node:
                assert node.get("additionalProperties") is False, sorted(node["properties"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)


def test_quantities_are_strings_or_integers():
    tj = generated()
    limits = tj["spec"]["trainer"]["resourcesPerNode"]["limits"]
    limits.update({"cpu": 2, "memory": "4Gi", "nvidia.com/gpu": "1"})
    validate_trainjob(tj)
    limits["cpu"] = {"actual_instance": "2"}  # the models' own wrapper is no JSON form
    with pytest.raises(AssertionError, match="is not valid under any of the given schemas"):
        validate_trainjob(tj)


def test_runtimes_pass_the_strict_runtime_schemas():
    """The runtimes the tests build, and the official files wherever ../shared is present,
    are valid ClusterTrainingRuntimes: the strict schema refuses nothing real."""
    manifests = [runtime_manifest("torch-distributed"), *(official_runtimes() or {}).values()]
    for manifest in manifests:
        for source, validator in schema_validators("ClusterTrainingRuntime"):
            errors = [e.message for e in validator.iter_errors(manifest)]
            assert not errors, (manifest["metadata"]["name"], source, errors)
