"""What the emulated API server refuses before it stores an object, as a real one answers:

- TrainJobs: unknown fields are a 400 with ``fieldValidation=Strict`` (pruned silently without
  it, as a real server does); the models' strict schema (and the official CRD where
  ``../shared`` is present), the CRD's CEL rules and bounds are a 422 ``Invalid``
  (``tests/harness/crd.py``, ``trainer_rules.py``); the Trainer's webhook (the runtime exists,
  the torch plugin's reserved env, patch targets) is a 403, as its controller-runtime webhook
  denies; an update may not change the immutable fields (422) nor the runtime patches of a job
  that is not suspended (403). A stored TrainJob gets the CRD's defaults (``suspend: false``,
  ``managedBy``) and each runtime patch the time the Trainer's defaulting webhook stamps on it
  (kept while the patch is unchanged). The JobSet webhook's pod-name length is the emulated Trainer's
  business: it fails when the controller makes the JobSet, not at admission.
- ConfigMaps and Secrets: an RFC 1123 name, valid keys, at most 1 MiB of data, their data
  frozen once ``immutable``; a Secret's ``stringData`` becomes base64 ``data``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import kmock

from tests.harness import crd, trainer_rules
from tests.harness.cluster.objects import now
from tests.harness.cluster.store import RESOURCES, qualified, status_error

SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
MAX_DATA = 1 << 20
WEBHOOK = "validator.trainjob.trainer.kubeflow.org"
IMMUTABLE = ("runtimeRef", "initializer", "trainer", "activeDeadlineSeconds", "managedBy")


def invalid(resource: Any, name: str, problems: list[str]) -> kmock.KubernetesError:
    """A 422 ``Invalid`` naming each field, with the problems as the Status' causes."""
    kind = dict((kmock.resource(k), v[0]) for k, v in RESOURCES.items())[resource]
    group = f".{resource.group}" if resource.group else ""
    listed = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    causes = [{"reason": "FieldValueInvalid", "message": p, "field": p.split(":")[0]}
              for p in problems]  # fmt: skip
    return status_error(422, "Invalid", f'{kind}{group} "{name}" is invalid: {listed}',
                        name=name, kind=resource.plural, causes=causes)  # fmt: skip


def _unknown_fields(obj: dict, strict: bool) -> list[str]:
    """Paths of fields the schema does not know; pruned from ``obj`` unless ``strict``."""
    _, validator = crd.schema_validators("TrainJob")[0]
    found = []
    for e in validator.iter_errors(obj):
        if e.validator != "additionalProperties" or not isinstance(e.instance, dict):
            continue
        known = set(e.schema.get("properties") or {})
        for key in sorted(set(e.instance) - known):
            found.append(".".join([*map(str, e.absolute_path), key]))
            if not strict:
                del e.instance[key]
    return found


class Admission:
    """The checks, with the store they look things up in (the runtime a TrainJob names)."""

    def __init__(self, api):
        self.api = api
        self.webhooks: list = []  # mutating webhooks, before the checks: (operation, kind, obj)

    def admit(self, operation: str, resource: Any, namespace: str | None, obj: dict,
              old: dict | None, params: dict) -> None:  # fmt: skip
        """Raise the API server's answer when ``obj`` may not be stored; default it in place."""
        kind = dict((kmock.resource(k), v[0]) for k, v in RESOURCES.items()).get(resource)
        name = (obj.get("metadata") or {}).get("name", "")
        for webhook in self.webhooks:
            webhook(operation, kind, obj)
        if kind in ("ConfigMap", "Secret"):
            problems = self._data(kind, obj, old)
            if problems:
                raise invalid(resource, name, problems)
        elif kind == "TrainJob":
            self._trainjob(resource, namespace, obj, old, params.get("fieldValidation") == "Strict")

    def _data(self, kind: str, obj: dict, old: dict | None) -> list[str]:
        name = obj["metadata"].get("name", "")
        out = [] if SUBDOMAIN.match(name) and len(name) <= 253 else [
            f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 subdomain must consist "
            "of lower case alphanumeric characters, '-' or '.'"
        ]  # fmt: skip
        if kind == "Secret":
            obj.setdefault("type", "Opaque")
            strings = obj.pop("stringData", None) or {}
            data = obj.setdefault("data", {}) if strings else obj.get("data") or {}
            data.update({k: base64.b64encode(v.encode()).decode() for k, v in strings.items()})
            binary = dict(data)
            text: dict = {}
        else:
            text, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        size = sum(len(v.encode()) for v in text.values())
        for key, value in binary.items():
            try:
                size += len(base64.b64decode(value, validate=True))
            except (binascii.Error, TypeError):
                out.append(f"data[{key}]: Invalid value: not base64")
        keys = [*text, *binary]
        out += [f"data[{k}]: Invalid value: {k!r}: a valid config key must consist of "
                "alphanumeric characters, '-', '_' or '.'" for k in keys if not KEY.match(k)]  # fmt: skip
        if size > MAX_DATA:
            out.append(f"data: Too long: must have at most {MAX_DATA} bytes")
        frozen = ("data", "binaryData", "immutable")
        if old and old.get("immutable") and any(obj.get(k) != old.get(k) for k in frozen):
            out.append("data: Forbidden: field is immutable when `immutable` is set")
        return out

    def _trainjob(self, resource, namespace, obj, old, strict: bool) -> None:
        name = obj["metadata"].get("name", "")
        unknown = _unknown_fields(obj, strict)
        if unknown and strict:
            listed = ", ".join(f'unknown field "{u}"' for u in unknown)
            raise status_error(400, "BadRequest", f"strict decoding error: {listed}")
        problems = [p.split(": ", 1)[1] for p in crd.schema_errors(obj)]
        problems = list(dict.fromkeys(problems + trainer_rules.violations(obj, None)))
        if old is not None:
            problems += [
                f"spec.{f}: Invalid value: field is immutable"
                for f in IMMUTABLE
                if (obj.get("spec") or {}).get(f) != (old.get("spec") or {}).get(f)
            ]
        if problems:
            raise invalid(resource, name, problems)
        _defaults(obj, old)
        if old is not None:
            patches = [[{k: v for k, v in p.items() if k != "time"} for p in
                        (tj["spec"].get("runtimePatches") or [])] for tj in (obj, old)]  # fmt: skip
            suspended = obj["spec"].get("suspend") or old["spec"].get("suspend")
            if patches[0] != patches[1] and not suspended:
                self._deny("spec.runtimePatches: Forbidden: may change only while the TrainJob "
                           "is suspended")  # fmt: skip
            return
        runtime = self.runtime_of(obj, namespace)
        if runtime is None:
            ref = obj["spec"]["runtimeRef"]
            kind = ref.get("kind", "ClusterTrainingRuntime")
            self._deny(f'spec.runtimeRef: Not found: {kind}.trainer.kubeflow.org "{ref["name"]}" '
                       "not found")  # fmt: skip
        plain = set(trainer_rules.violations(obj, None))
        denied = [
            p
            for p in trainer_rules.violations(obj, runtime)
            if p not in plain and not p.startswith("pod name ")
        ]
        if denied:
            self._deny("; ".join(denied))

    def runtime_of(self, tj: dict, namespace: str | None) -> dict | None:
        """The runtime a TrainJob names, as the cluster holds it (None when it has none)."""
        ref = (tj.get("spec") or {}).get("runtimeRef") or {}
        if ref.get("kind") == "TrainingRuntime":
            return self.api.get("trainer.kubeflow.org/v1alpha1/trainingruntimes", namespace,
                                ref.get("name", ""))  # fmt: skip
        plural = "trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
        return self.api.get(plural, None, ref.get("name", ""))

    @staticmethod
    def _deny(message: str) -> None:
        raise status_error(403, "Forbidden", f'admission webhook "{WEBHOOK}" denied the request: '
                           f"{message}")  # fmt: skip


__all__ = ["Admission", "invalid", "qualified"]


MANAGED_BY = "trainer.kubeflow.org/trainjob-controller"


def _defaults(obj: dict, old: dict | None) -> None:
    """The CRD's defaults and the Trainer's defaulting webhook (``pkg/webhooks/
    trainjob_webhook.go``: a runtime patch's ``time`` is when it was last changed), in place."""
    spec = obj["spec"]
    spec.setdefault("suspend", False)
    spec.setdefault("managedBy", MANAGED_BY)
    before = {
        p.get("manager"): p for p in ((old or {}).get("spec") or {}).get("runtimePatches") or []
    }
    for patch in spec.get("runtimePatches") or []:
        was = before.get(patch.get("manager"))
        if was is not None:
            same = {k: v for k, v in was.items() if k != "time"} == {
                k: v for k, v in patch.items() if k != "time"}  # fmt: skip
            patch["time"] = was.get("time") if same and was.get("time") else now()
        elif not patch.get("time"):
            patch["time"] = now()
