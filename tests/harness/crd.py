"""The official Trainer v2.3.0 TrainJob CRD (from ../shared), as a strict validator.

Kubernetes prunes unknown fields silently; here every object without
`x-kubernetes-preserve-unknown-fields` rejects them, so an unknown field fails the test.
"""

from __future__ import annotations

import functools
import re

import pytest

from tests.conftest import ROOT

TRAINER = ROOT.parent / "shared" / "kubeflow-trainer"
_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _strict(node):
    if isinstance(node, dict):
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _strict(value)
    elif isinstance(node, list):
        for value in node:
            _strict(value)
    return node


@functools.lru_cache(maxsize=1)
def _validator():
    import jsonschema
    import yaml

    path = TRAINER / "crds" / "trainer.kubeflow.org_trainjobs.yaml"
    if not path.exists():
        pytest.skip(f"the official CRDs are not beside this checkout ({path.parent} is missing)")
    crd = yaml.safe_load(path.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    schema = _strict(version["schema"]["openAPIV3Schema"])
    return jsonschema.Draft7Validator(schema)


def validate_trainjob(obj: dict) -> None:
    """Raise AssertionError unless ``obj`` is a TrainJob the v2.3.0 API server accepts."""
    errors = sorted(_validator().iter_errors(obj), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors)
    assert obj["apiVersion"] == "trainer.kubeflow.org/v1alpha1" and obj["kind"] == "TrainJob"
    name = obj["metadata"]["name"]  # the CRD's CEL rules on the name
    assert _NAME.match(name) and len(name) <= 63, name
    for init in (obj["spec"].get("initializer") or {}).values():
        uri = init.get("storageUri", "")
        assert uri == "" or re.match(r"^[a-z0-9]+://", uri), uri


def runtime_manifest(name: str) -> dict:
    import yaml

    for path in (TRAINER / "runtimes").rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if (
                doc
                and doc.get("kind") == "ClusterTrainingRuntime"
                and doc["metadata"]["name"] == name
            ):
                return doc
    pytest.skip(f"runtime {name} not found under {TRAINER}")
