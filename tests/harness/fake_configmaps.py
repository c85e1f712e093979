"""ConfigMaps in the fake API server, checked as the API server checks them: an RFC 1123 name,
valid keys, at most 1 MiB of data, immutable data once `immutable`, well-formed owner
references to objects that exist; JSON patches with their `test` guard; and the garbage
collector's rule for owners (an object goes when its last owner goes)."""

from __future__ import annotations

import base64
import copy
import re

import jsonpatch

from tests.harness.kube_wire import not_found, status_error

NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
MAX_DATA = 1 << 20  # corev1.MaxSecretSize, which ConfigMaps share
OWNER_FIELDS = {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}


def data_size(obj: dict) -> int:
    text = sum(len(v.encode()) for v in (obj.get("data") or {}).values())
    binary = sum(len(base64.b64decode(v)) for v in (obj.get("binaryData") or {}).values())
    return text + binary


class ConfigMaps:
    """The ConfigMap verbs of FakeKube (which provides _store, put, _model and namespace)."""

    def configmap_problems(self, obj: dict, namespace: str) -> list[str]:
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        out = []
        if not (NAME.match(name) and len(name) <= 253):
            out.append(f"metadata.name: {name!r} is not an RFC 1123 subdomain")
        keys = list(obj.get("data") or {}) + list(obj.get("binaryData") or {})
        out += [f"data[{k!r}]: not a valid key" for k in keys if not KEY.match(k)]
        if len(set(keys)) != len(keys):
            out.append("data and binaryData share a key")
        if data_size(obj) > MAX_DATA:
            out.append(f"data: must have at most {MAX_DATA} bytes, has {data_size(obj)}")
        for i, ref in enumerate(meta.get("ownerReferences") or []):
            missing = {"apiVersion", "kind", "name", "uid"} - set(ref)
            unknown = set(ref) - OWNER_FIELDS
            if missing or unknown:
                out.append(f"metadata.ownerReferences[{i}]: missing {missing}, unknown {unknown}")
            elif not self._owner_exists(ref, namespace):
                out.append(f"metadata.ownerReferences[{i}]: no {ref['kind']} uid {ref['uid']}")
        return out

    def _owner_exists(self, ref: dict, namespace: str) -> bool:
        plural = {"TrainJob": "trainjobs"}.get(ref["kind"], ref["kind"].lower() + "s")
        return any(
            o["metadata"].get("uid") == ref["uid"] for o in self._store(plural, namespace).values()
        )

    def _check(self, obj: dict, namespace: str) -> None:
        problems = self.configmap_problems(obj, namespace)
        if problems:
            raise status_error(422, "Invalid", "ConfigMap is invalid: " + "; ".join(problems))

    def create_namespaced_config_map(self, namespace, body, **kw):
        body = copy.deepcopy(
            body if isinstance(body, dict) else self._models.sanitize_for_serialization(body)
        )
        self._check(body, namespace)
        name = body["metadata"]["name"]
        if name in self._store("configmaps", namespace):
            raise status_error(409, "AlreadyExists", f'configmaps "{name}" already exists')
        body["metadata"].update(uid=f"uid-cm-{name}", resourceVersion="1")
        return self._model(self.put("configmaps", body, namespace), "V1ConfigMap")

    def list_namespaced_config_map(self, namespace, label_selector=None, **kw):
        """Those with the label ``label_selector`` names (a bare key: the one selector used)."""
        items = [o for o in self._store("configmaps", namespace).values()
                 if label_selector is None or label_selector in (o["metadata"].get("labels") or {})]  # fmt: skip
        return self._model({"items": items, "metadata": {}}, "V1ConfigMapList")

    def patch_namespaced_config_map(self, name, namespace, body, **kw):
        current = self._store("configmaps", namespace).get(name)
        if current is None:
            raise not_found("configmaps", name)
        assert isinstance(body, list), "the backend sends JSON patches (a list of operations)"
        try:
            patched = jsonpatch.apply_patch(current, body)
        except jsonpatch.JsonPatchTestFailed as e:
            raise status_error(422, "Invalid", f"the server rejected our request: {e}") from None
        except jsonpatch.JsonPatchException as e:
            raise status_error(422, "Invalid", str(e)) from None
        if current.get("immutable") and any(
            patched.get(k) != current.get(k) for k in ("data", "binaryData", "immutable")
        ):
            raise status_error(422, "Invalid", "field is immutable when `immutable` is set")
        self._check(patched, namespace)
        meta = patched["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        self._store("configmaps", namespace)[name] = patched
        return self._model(patched, "V1ConfigMap")

    def delete_namespaced_config_map(self, name, namespace, **kw):
        if self._store("configmaps", namespace).pop(name, None) is None:
            raise not_found("configmaps", name)
        return self._model({"status": "Success"}, "V1Status")

    def collect_garbage(self, namespace: str, uid: str) -> None:
        """An owner is gone: its ConfigMaps (and TrainingRuntimes) lose it, and go when it was
        their last owner."""
        for plural in ("configmaps", "trainingruntimes"):
            self._collect(plural, namespace, uid)

    def _collect(self, plural: str, namespace: str, uid: str) -> None:
        store = self._store(plural, namespace)
        for name, obj in list(store.items()):
            owners = obj["metadata"].get("ownerReferences") or []
            left = [o for o in owners if o["uid"] != uid]
            if len(left) == len(owners):
                continue
            if left:
                obj["metadata"]["ownerReferences"] = left
            else:
                del store[name]
