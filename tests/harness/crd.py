"""TrainJobs checked as a Kubeflow Trainer v2.3.0 cluster would check them, with or without
``../shared``:

1. the JSON schema of the installed ``kubeflow_trainer_api`` models (pydantic v2), made strict:
   every object refuses unknown fields (Kubernetes would prune them silently, or refuse them
   with ``fieldValidation=Strict``), nothing is null, quantities are strings or integers;
2. wherever the shared Trainer folder is present (always in CI), also the official CRD's
   ``openAPIV3Schema``, as strict;
3. the CRD's CEL rules and bounds, and the Trainer's webhook rules (``trainer_rules``).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from tests.harness import trainer_rules
from tests.harness.runtimes import RUNTIMES, runtime_manifest
from tests.harness.shared import trainer_dir

__all__ = ["models_schema", "runtime_manifest", "schema_validators", "validate_trainjob"]

#: Kubernetes' quantity grammar, as the CRDs write it
QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+"
    r"(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
#: The JSON form of the models' oneOf wrappers (the models hold them as objects)
JSON_FORMS = {
    "IoK8sApimachineryPkgApiResourceQuantity": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY,
    },
    "IoK8sApimachineryPkgUtilIntstrIntOrString": {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    },
}


def forbid_unknown(node: Any) -> Any:
    """Every object schema with properties refuses other fields (unless it keeps unknowns)."""
    if isinstance(node, dict):
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            node.setdefault("additionalProperties", False)
        for value in node.values():
            forbid_unknown(value)
    elif isinstance(node, list):
        for value in node:
            forbid_unknown(value)
    return node


def _not_null(node: Any) -> Any:
    """Optional fields without their null alternative: Kubernetes JSON leaves them out."""
    if isinstance(node, dict):
        options = [o for o in node.get("anyOf", ()) if o != {"type": "null"}]
        if "anyOf" in node and len(options) == 1:
            del node["anyOf"]
            node.update(options[0])
        elif "anyOf" in node:
            node["anyOf"] = options
        for value in node.values():
            _not_null(value)
    elif isinstance(node, list):
        for value in node:
            _not_null(value)
    return node


@functools.cache
def models_schema(model: str = "TrainerV1alpha1TrainJob") -> dict:
    """The strict JSON schema of a ``kubeflow_trainer_api`` model, in Kubernetes JSON form."""
    from kubeflow_trainer_api import models

    schema = getattr(models, model).model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    for name, definition in defs.items():
        if "actual_instance" in definition.get("properties", {}):
            assert name in JSON_FORMS, f"{name}: a oneOf wrapper with no JSON form in crd.py"
            defs[name] = copy.deepcopy(JSON_FORMS[name])
    return forbid_unknown(_not_null(schema))


@functools.cache
def official_schema(plural: str = "trainjobs") -> dict | None:
    """The strict openAPIV3Schema of an official Trainer CRD, or None without ../shared."""
    import yaml

    folder = trainer_dir()
    if folder is None:
        return None
    crd = yaml.safe_load((folder / "crds" / f"trainer.kubeflow.org_{plural}.yaml").read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return forbid_unknown(version["schema"]["openAPIV3Schema"])


@functools.cache
def schema_validators(kind: str = "TrainJob") -> tuple[tuple[str, Any], ...]:
    """(source, validator) for a Trainer kind: its models' schema, and the CRD where present."""
    import jsonschema

    plural = {"TrainJob": "trainjobs", "ClusterTrainingRuntime": "clustertrainingruntimes"}[kind]
    models = models_schema(f"TrainerV1alpha1{kind}")
    found = [("kubeflow_trainer_api", jsonschema.Draft202012Validator(models))]
    official = official_schema(plural)
    if official is not None:
        found.append((f"the official {plural} CRD", jsonschema.Draft7Validator(official)))
    return tuple(found)


def schema_errors(obj: dict, kind: str = "TrainJob") -> list[str]:
    """Each schema's complaints about ``obj``, naming the schema and the field."""
    return [
        f"{source}: {'.'.join(map(str, e.absolute_path)) or kind}: {e.message}"
        for source, validator in schema_validators(kind)
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.path)))
    ]


def known_runtime(tj: dict) -> dict | None:
    """The official runtime a TrainJob names, from the facts; None for any other runtime."""
    ref = (tj.get("spec") or {}).get("runtimeRef") or {}
    official = ref.get("kind", "ClusterTrainingRuntime") == "ClusterTrainingRuntime"
    return runtime_manifest(ref["name"]) if official and ref.get("name") in RUNTIMES else None


def validate_trainjob(obj: dict, runtime: dict | None = None) -> None:
    """Raise AssertionError unless a v2.3.0 cluster with ``runtime`` (default: the official
    runtime the job names, if it names one) accepts ``obj``."""
    runtime = runtime if runtime is not None else known_runtime(obj)
    problems = schema_errors(obj) + trainer_rules.violations(obj, runtime)
    assert not problems, "\n".join(problems)
