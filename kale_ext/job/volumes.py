"""Volumes: the short forms (`--volume pvc:NAME:/mount[:ro]`, `secret:NAME:/mount`,
`configmap:NAME:/mount`, `emptydir:/mount[:SIZE]`, each with `=LOCAL_DIR` for local runs) and the
checks of a job's volumes and mounts, whichever way they came (short forms or a
DistributedConfig's ``volumes`` and ``volume_mounts``).

A mount path is absolute, or relative to the job's working directory: on a cluster that
directory is then the fixed ``WORKDIR`` (an emptyDir, so the mounts can sit inside it); locally
each node's own working directory. A relative mount works unchanged in both places.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass

from ..errors import ConfigError
from .k8s_objects import k8s_dict
from .k8s_values import matches, quantity

KINDS = {"pvc": "persistentVolumeClaim", "secret": "secret", "configmap": "configMap",
         "emptydir": "emptyDir"}  # fmt: skip
WORKDIR = "/kale-ext/work"  # the working directory on a cluster when a mount path is relative
WORK_VOLUME = "kale-ext-work"
SHM_VOLUME = "kale-ext-shm"
SHM_MOUNT = "/dev/shm"
#: Volumes kale_ext adds itself (the workspace, the outputs, the working directory, /dev/shm).
RESERVED = frozenset({"kale-ext-workspace", "kale-ext-outputs", WORK_VOLUME, SHM_VOLUME})
FORMS = ("pvc:NAME:/mount[:ro], secret:NAME:/mount, configmap:NAME:/mount or "
         "emptydir:/mount[:SIZE], with =LOCAL_DIR for local runs")  # fmt: skip


@dataclass(frozen=True)
class ShortVolume:
    """One `--volume`: the volume and its mount, and the folder that stands for it locally."""

    kind: str  # pvc, secret, configmap, emptydir
    name: str | None  # the claim, Secret or ConfigMap (None for emptydir)
    mount: str
    read_only: bool = False
    size: str | None = None  # an emptydir's sizeLimit
    local: str | None = None  # LOCAL_DIR

    @property
    def volume_name(self) -> str:
        """A DNS label naming the volume in the pod: `pvc-data`, `emptydir-<hash>`."""
        base = re.sub(r"[^a-z0-9-]", "-", f"{self.kind}-{self.name or ''}").strip("-")
        if self.name is None or len(base) > 63:
            digest = hashlib.sha1(f"{self.kind}:{self.name}:{self.mount}".encode()).hexdigest()
            base = f"{base[:50].rstrip('-')}-{digest[:8]}"
        return base

    def volume(self) -> dict:
        key = KINDS[self.kind]
        if self.kind == "pvc":
            source: dict = {"claimName": self.name}
        elif self.kind == "secret":
            source = {"secretName": self.name}
        elif self.kind == "configmap":
            source = {"name": self.name}
        else:
            source = {"sizeLimit": self.size} if self.size else {}
        return {"name": self.volume_name, key: source}

    def volume_mount(self) -> dict:
        out: dict = {"name": self.volume_name, "mountPath": self.mount}
        if self.read_only or self.kind in ("secret", "configmap"):
            out["readOnly"] = True
        return out


def parse_volume(text: str, where: str = "volumes") -> ShortVolume:
    """One short form; ConfigError naming ``where`` and the forms when it does not parse."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(where, f"must be a volume such as {FORMS}, not {text!r}")
    spec, _, local = text.strip().partition("=")
    parts = spec.split(":")
    kind = parts[0].lower()
    if kind not in KINDS:
        raise ConfigError(where, f"{text!r}: {kind!r} is not a volume kind ({FORMS})")
    if kind == "emptydir":
        if len(parts) not in (2, 3):
            raise ConfigError(where, f"{text!r}: write emptydir:/mount[:SIZE]")
        if local:
            raise ConfigError(where, f"{text!r}: an emptydir is a scratch folder (no =LOCAL_DIR)")
        size = quantity(parts[2], where) if len(parts) == 3 else None
        return ShortVolume(kind, None, check_mount(parts[1], where), size=size)
    if len(parts) not in (3, 4) or (len(parts) == 4 and (kind != "pvc" or parts[3] != "ro")):
        form = "pvc:NAME:/mount[:ro]" if kind == "pvc" else f"{kind}:NAME:/mount"
        raise ConfigError(where, f"{text!r}: write {form} (and =LOCAL_DIR for local runs)")
    name = parts[1]
    if not matches("dns_subdomain", name):
        raise ConfigError(where, f"{text!r}: {name!r} is not a Kubernetes object name")
    return ShortVolume(kind, name, check_mount(parts[2], where), len(parts) == 4, None,
                       local or None)  # fmt: skip


def check_mount(path: str, where: str) -> str:
    """A mount path: absolute, or relative to the working directory; no `..`, normalised."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise ConfigError(where, f"a mount path must be a folder such as /data, not {path!r}")
    clean = posixpath.normpath(path)
    if ".." in path.split("/") or clean in ("/", "."):
        raise ConfigError(where, f"{path!r} is not a folder to mount a volume at")
    return clean


def mount_path(path: str) -> str:
    """The absolute path of a mount on a cluster (a relative one is under WORKDIR)."""
    return path if path.startswith("/") else posixpath.join(WORKDIR, path)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_mounts(volumes: list, mounts: list, taken: dict[str, str]) -> None:
    """Every mount names a volume, no two mounts collide (the same path, or one inside
    another), and none sits on a path kale_ext uses (``taken``: path → what uses it)."""
    names = {v.name for v in volumes}
    seen: dict[str, str] = dict(taken)
    for i, m in enumerate(mounts):
        where = f"volume_mounts[{i}]"
        if m.name not in names:
            raise ConfigError(f"{where}.name", f"no volume is named {m.name!r} (volumes: "
                              f"{', '.join(sorted(names)) or 'none'})")  # fmt: skip
        given = check_mount(m.mount_path, f"{where}.mountPath")
        path = mount_path(given)
        if given.startswith("/") and (_inside(WORKDIR, given) or _inside(given, WORKDIR)):
            why = "is kale_ext's working directory on a cluster: mount relatively (data, not"
            raise ConfigError(f"{where}.mountPath", f"{given} {why} {WORKDIR}/data)")
        for other, what in seen.items():
            if _inside(path, other) or _inside(other, path):
                same = "is" if path == other else "collides with"
                raise ConfigError(f"{where}.mountPath", f"{m.mount_path} {same} {what}")
        seen[path] = f"the mount of volume {m.name!r} at {m.mount_path}"


def workspace_clash(workspace, mounts: list) -> None:
    """A relative mount must not land on the workspace's files (unpacking would write into the
    volume)."""
    if workspace is None:
        return
    tops = {f.path.split("/")[0].rstrip("/") for f in workspace.files}
    for i, m in enumerate(mounts):
        top = m.mount_path.split("/")[0]
        if not m.mount_path.startswith("/") and top in tops:
            raise ConfigError(
                f"volume_mounts[{i}].mountPath",
                f"{m.mount_path} is also in the workspace ({top}): exclude it in .kaleignore, "
                "or mount the volume elsewhere",
            )


def describe(config, local_folders: dict) -> list[dict]:
    """The job's own mounts, as the preview shows them: {name, kind (pvc, secret, configmap,
    emptydir or the Kubernetes source), source (its object), mount (as given), mount_path (on a
    cluster), read_only, local (the folder standing for it locally)}."""
    volumes = {v.name: k8s_dict(v) for v in config.volumes}
    by_key = {key: kind for kind, key in KINDS.items()}
    out = []
    for m in config.volume_mounts:
        volume = volumes[m.name]
        key = next(k for k in volume if k != "name")
        source = volume[key] if isinstance(volume[key], dict) else {}
        name = source.get("claimName") or source.get("secretName") or source.get("name")
        out.append(
            {
                "name": m.name,
                "kind": by_key.get(key, key),
                "source": name,
                "mount": m.mount_path,
                "mount_path": mount_path(m.mount_path),
                "read_only": bool(m.read_only),
                "local": local_folders.get(m.name),
            }
        )
    return out


#: The volume sources a job may use, whatever form its volumes arrive in: a folder of the node
#: (hostPath) or any other source would reach outside the job's place.
ALLOWED_SOURCES = frozenset(KINDS.values())


def check_source(volume, where: str) -> None:
    """A volume (a V1Volume or its dict) has exactly one source, and one on ALLOWED_SOURCES;
    ConfigError naming ``where`` (the form it came in) otherwise."""
    data = volume if isinstance(volume, dict) else k8s_dict(volume)
    if not isinstance(data, dict):
        raise ConfigError(where, f"a volume is an object with a name and a source, not {data!r}")
    sources = sorted(k for k, v in data.items() if k != "name" and v is not None)
    refused = [k for k in sources if k not in ALLOWED_SOURCES]
    allowed = ", ".join(sorted(ALLOWED_SOURCES))
    if refused:
        raise ConfigError(where, f"a {refused[0]} volume is not allowed (volumes may be: "
                          f"{allowed})")  # fmt: skip
    if len(sources) != 1:
        raise ConfigError(where, f"a volume needs exactly one source ({allowed}), got "
                          f"{', '.join(sources) or 'none'}")  # fmt: skip


def check_volume(volume, i: int) -> None:
    """A volume's name: a DNS label, not one kale_ext uses itself; its source on the list."""
    check_source(volume, f"volumes[{i}]")
    where = f"volumes[{i}].name"
    if not matches("dns_label", volume.name or ""):
        raise ConfigError(where, f"{volume.name!r} is not a volume name (a DNS label)")
    if volume.name in RESERVED:
        raise ConfigError(where, f"{volume.name!r} is a volume kale_ext adds itself")
