"""Outputs that last: every node gets a folder in ``KALE_EXT_OUTPUT_DIR`` whose files outlive the
job (and ``kale-ext delete``, unless asked).

- Locally: ``outputs/<job>/`` beside the notebook (the local backend gathers the nodes' files
  there when the job ends; one sub-folder per node only when nodes wrote the same names).
- On Kubernetes: a PersistentVolumeClaim the user names with ``--outputs pvc:NAME[:/mount]``,
  mounted in every node; the folder is ``<mount>/<job>/``, shared by the nodes (write from rank
  0, or put the rank in the file names). Without one, the folder is inside the container and
  goes with the pod: the preview says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError
from .k8s_values import matches

ENV = "KALE_EXT_OUTPUT_DIR"
VOLUME = "kale-ext-outputs"
MOUNT = "/mnt/outputs"
FOLDER = "outputs"  # beside the notebook, locally


@dataclass(frozen=True)
class OutputsVolume:
    """Where outputs last on a cluster: a PVC, mounted at ``mount``."""

    claim: str
    mount: str = MOUNT
    name: str = VOLUME  # the pod's volume (the checkpoints' claim is another: job/checkpoints.py)

    def folder(self, job: str) -> str:
        return f"{self.mount.rstrip('/')}/{job}"

    def volume(self) -> dict:
        return {"name": self.name, "persistentVolumeClaim": {"claimName": self.claim}}

    def volume_mount(self) -> dict:
        return {"name": self.name, "mountPath": self.mount}

    def __str__(self) -> str:
        return f"pvc:{self.claim}:{self.mount}"


_FORM = re.compile(r"^pvc:(?P<claim>[^:]+)(:(?P<mount>/[^:]*))?$")


def parse_outputs(
    value: str | None, where: str = "outputs", mount: str = MOUNT, name: str = VOLUME
) -> OutputsVolume | None:
    """`pvc:NAME` or `pvc:NAME:/mount` (default ``mount``, /mnt/outputs), the pod's volume
    named ``name``; None stays None."""
    if value is None:
        return None
    m = _FORM.match(value.strip()) if isinstance(value, str) else None
    if m is None:
        raise ConfigError(
            where, f"{value!r} is not pvc:NAME or pvc:NAME:/mount (a PersistentVolumeClaim)"
        )
    claim, mount = m["claim"], m["mount"] or mount
    if not matches("dns_subdomain", claim):
        raise ConfigError(where, f"{claim!r} is not a PersistentVolumeClaim name")
    if mount == "/" or "/../" in mount + "/" or "//" in mount:
        raise ConfigError(where, f"{mount!r} is not a folder to mount a volume at")
    return OutputsVolume(claim, mount.rstrip("/"), name)
