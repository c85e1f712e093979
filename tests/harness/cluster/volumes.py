"""A pod's volumes as folders, and its container's environment, as the emulated kubelet makes
them.

Volumes: ``configMap``, ``secret`` and ``projected`` (their ``sources``, service-account tokens
from the cluster's issuer among them) become a folder with a
file per key (``items`` and modes as asked; ``optional`` ones may be missing), ``emptyDir`` an
empty folder, ``persistentVolumeClaim`` a folder per claim that outlives the pods (the claim
must exist), ``downwardAPI`` its fields. A process sees each mount at its ``mountPath``: the
kubelet hands the mounts to Python processes through ``EMULATED_MOUNTS`` and the
``shim/sitecustomize.py`` it puts first on ``PYTHONPATH``, which maps those paths to the folders
(nothing else here can mount a folder at a path like ``/var/run/...``); a mount inside another
one's path is also linked inside that one's folder (``nest``), for relative paths.

The environment: ``value``, ``valueFrom`` (fieldRef, configMapKeyRef, secretKeyRef,
resourceFieldRef), ``envFrom``, and ``$(VAR)`` references expanded as Kubernetes does
(``$$`` is a ``$``; an unknown reference stays as written).
"""

from __future__ import annotations

import base64
import math
import os
import re
from pathlib import Path

from tests.harness.cluster.render import quantity

SHIM = Path(__file__).resolve().parent / "shim"
MOUNTS_ENV = "EMULATED_MOUNTS"


class Waiting(Exception):
    """The container cannot start yet: (reason, message), as the kubelet reports it."""

    def __init__(self, reason: str, message: str, event: str | None = None):
        super().__init__(message)
        self.reason, self.message, self.event = reason, message, event


def _object_data(api, namespace: str, kind: str, name: str) -> dict[str, bytes] | None:
    """The keys of a ConfigMap or Secret as bytes, or None when it does not exist."""
    obj = api.get(f"v1/{kind.lower()}s", namespace, name)
    if obj is None:
        return None
    if kind == "Secret":
        return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
    out = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


def _source_files(api, namespace: str, volume: str, kind: str, ref: dict) -> dict[str, tuple]:
    """{relative path: (bytes, mode or None)} of a configMap or secret volume (source)."""
    name = ref.get("name") or ref.get("secretName") or ""
    data = _object_data(api, namespace, kind, name)
    if data is None:
        if ref.get("optional"):
            return {}
        raise Waiting("ContainerCreating", f'MountVolume.SetUp failed for volume "{volume}" : '
                      f'{kind.lower()} "{name}" not found', "FailedMount")  # fmt: skip
    if not ref.get("items"):
        return {k: (v, None) for k, v in data.items()}
    out = {}
    for item in ref["items"]:
        if item["key"] not in data:
            if ref.get("optional"):
                continue
            raise Waiting("ContainerCreating", f'MountVolume.SetUp failed for volume "{volume}" : '
                          f"{kind.lower()} references non-existent config key: {item['key']}",
                          "FailedMount")  # fmt: skip
        out[item["path"]] = (data[item["key"]], item.get("mode"))
    return out


def _write(folder: Path, files: dict[str, tuple], default_mode: int | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, (data, mode) in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(
            mode if mode is not None else default_mode if default_mode is not None else 0o644
        )


def materialise(api, pod: dict, folder: Path, claims: Path) -> dict[str, Path]:
    """Each of the pod's volumes as a folder, by volume name (Waiting when one cannot be)."""
    namespace = pod["metadata"]["namespace"]
    out = {}
    for volume in pod["spec"].get("volumes") or []:
        name, path = volume["name"], folder / "volumes" / volume["name"]
        if "emptyDir" in volume:
            path.mkdir(parents=True, exist_ok=True)
        elif "configMap" in volume or "secret" in volume:
            kind = "ConfigMap" if "configMap" in volume else "Secret"
            ref = volume.get("configMap") or volume.get("secret") or {}
            _write(path, _source_files(api, namespace, name, kind, ref), ref.get("defaultMode"))
        elif "projected" in volume:
            files: dict[str, tuple] = {}
            for source in volume["projected"].get("sources") or []:
                for kind in ("configMap", "secret"):
                    if kind in source:
                        kind_name = "ConfigMap" if kind == "configMap" else "Secret"
                        files.update(_source_files(api, namespace, name, kind_name, source[kind]))
                if "downwardAPI" in source:
                    files.update(_downward(pod, source["downwardAPI"]))
                if "serviceAccountToken" in source:
                    files.update(_token(api, pod, name, source["serviceAccountToken"]))
            _write(path, files, volume["projected"].get("defaultMode"))
        elif "downwardAPI" in volume:
            _write(path, _downward(pod, volume["downwardAPI"]), None)
        elif "persistentVolumeClaim" in volume:
            path = claims / namespace / volume["persistentVolumeClaim"]["claimName"]
            path.mkdir(parents=True, exist_ok=True)
        else:
            kind = next(iter(k for k in volume if k != "name"), "unknown")
            raise Waiting("ContainerCreating", f'MountVolume.SetUp failed for volume "{name}" : '
                          f"{kind} volumes are not emulated", "FailedMount")  # fmt: skip
        out[name] = path
    return out


def _token(api, pod: dict, volume: str, source: dict) -> dict[str, tuple]:
    """A projected service-account token, from the cluster's issuer (one for the Trainer's
    status server: ``trainer_status.py``)."""
    if getattr(api, "tokens", None) is None:
        raise Waiting("ContainerCreating", f'MountVolume.SetUp failed for volume "{volume}" : '
                      "this emulated cluster issues no service-account tokens", "FailedMount")  # fmt: skip
    token = api.tokens.issue(pod, source.get("audience", ""), source.get("expirationSeconds", 3600))
    return {source["path"]: (token.encode(), None)}


def _downward(pod: dict, source: dict) -> dict[str, tuple]:
    return {
        item["path"]: (field_value(pod, item["fieldRef"]["fieldPath"]).encode(), item.get("mode"))
        for item in source.get("items") or []
        if "fieldRef" in item
    }


def mounts(container: dict, volumes: dict[str, Path]) -> dict[str, str]:
    """{mountPath: local folder} of a container."""
    out = {}
    for mount in container.get("volumeMounts") or []:
        folder = volumes[mount["name"]]
        out[mount["mountPath"]] = (
            str(folder / mount["subPath"]) if mount.get("subPath") else str(folder)
        )
    return out


def nest(mounted: dict[str, str]) -> None:
    """A mount inside another mount's path appears in that one's folder too (a link), so a
    process that changed into the outer mount finds it by a relative path, as in a container."""
    for inner, folder in mounted.items():
        for outer, outer_folder in mounted.items():
            base = outer.rstrip("/") + "/"
            if inner == outer or not inner.startswith(base):
                continue
            link = Path(outer_folder) / inner[len(base) :]
            if not (link.exists() or link.is_symlink()):
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(folder, target_is_directory=True)


def field_value(pod: dict, path: str) -> str:
    """A fieldRef's value (`metadata.annotations['x']`, `status.podIP`, ...)."""
    found = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if found:
        return (pod["metadata"].get(found[1]) or {}).get(found[2], "")
    node = pod
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return "" if node is None else str(node)


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion (its forked golang expansion package, rule for rule)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                close = text.find(")", i + 2)
                if close != -1:
                    var = text[i + 2 : close]
                    out.append(env.get(var, f"$({var})"))
                    i = close + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _resource(container: dict, ref: dict) -> str:
    kind, _, name = ref["resource"].partition(".")
    value = ((container.get("resources") or {}).get(kind) or {}).get(name)
    if value is None:
        return "0"
    divisor = quantity(ref.get("divisor", "1"))
    return str(math.ceil(quantity(value) / divisor))


def environment(api, pod: dict, container: dict) -> dict[str, str]:
    """The container's environment as the kubelet builds it (Waiting when a reference is
    missing)."""
    namespace = pod["metadata"]["namespace"]
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        kind = "ConfigMap" if "configMapRef" in source else "Secret"
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        data = _object_data(api, namespace, kind, ref.get("name", ""))
        if data is None and not ref.get("optional"):
            raise Waiting("CreateContainerConfigError", f'{kind.lower()} "{ref.get("name")}" '
                          "not found")  # fmt: skip
        env.update({source.get("prefix", "") + k: v.decode() for k, v in (data or {}).items()})
    for var in container.get("env") or []:
        if "valueFrom" not in var:
            env[var["name"]] = expand(var.get("value", ""), env)
            continue
        source = var["valueFrom"]
        if "fieldRef" in source:
            env[var["name"]] = field_value(pod, source["fieldRef"]["fieldPath"])
        elif "resourceFieldRef" in source:
            env[var["name"]] = _resource(container, source["resourceFieldRef"])
        else:
            kind = "ConfigMap" if "configMapKeyRef" in source else "Secret"
            ref = source.get("configMapKeyRef") or source.get("secretKeyRef") or {}
            data = _object_data(api, namespace, kind, ref.get("name", ""))
            if data is None or ref.get("key") not in data:
                if ref.get("optional"):
                    continue
                what = (f'{kind.lower()} "{ref.get("name")}" not found' if data is None else
                        f"couldn't find key {ref.get('key')} in {kind} {namespace}/{ref.get('name')}")  # fmt: skip
                raise Waiting("CreateContainerConfigError", what)
            env[var["name"]] = data[ref["key"]].decode()
    return env


def process_env(env: dict[str, str], home: Path, mounted: dict[str, str], path: str) -> dict:
    """What the process gets: the container's env over a small base (the image's, here: this
    interpreter's PATH, a HOME and TMPDIR in the pod's folder), with the mounts' shim."""
    base = {"PATH": path, "HOME": str(home), "TMPDIR": str(home / "tmp"), "LANG": "C.UTF-8",
            "PIP_NO_INDEX": "1"}  # fmt: skip
    out = {**base, **env}
    out["PYTHONPATH"] = os.pathsep.join(filter(None, (str(SHIM), out.get("PYTHONPATH"))))
    out[MOUNTS_ENV] = __import__("json").dumps(mounted)
    return out
