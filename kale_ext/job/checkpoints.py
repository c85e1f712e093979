"""Where a job's checkpoints live: per lineage (the job and the jobs resumed from it), not per
job, so a checkpoint outlives its job. The in-job side is kale_ext/checkpoint.py; the backends
tell it the folder with ``KALE_EXT_CHECKPOINT_DIR``, the job with ``KALE_EXT_CHECKPOINT_RUN``
(and ``KALE_EXT_KEEP_CHECKPOINTS`` when ``--keep-checkpoints`` is given):

- locally: ``<jobs folder>/lineages/<lineage>/checkpoints`` (backends/local/checkpoints.py), or
  ``<DIR>/<lineage>`` with ``--checkpoints DIR``;
- on Kubernetes: ``<mount>/<lineage>`` on the claim of ``--checkpoints pvc:NAME[:/mount]``
  (mounted at /mnt/checkpoints unless said), else ``checkpoints/<lineage>`` on the outputs
  volume (``--outputs``), else a folder inside the container, which goes with the pod (a
  warning says so).

Only a job that uses them gets them (the notebook imports ``kale_ext.checkpoint`` or names
``KALE_EXT_CHECKPOINT_DIR``, or an option above is given): another job's TrainJob is the one it
was without them. Its pods also get the grace period :data:`~kale_ext.checkpoint.STOP_GRACE` to
run its ``on_stop`` handlers when stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..checkpoint import DIR_ENV, KEEP_ENV, RUN_ENV
from ..errors import ConfigError
from .k8s_values import matches
from .outputs import OutputsVolume, parse_outputs

if TYPE_CHECKING:
    from .spec import JobSpec

VOLUME = "kale-ext-checkpoints"
MOUNT = "/mnt/checkpoints"
ON_OUTPUTS = "checkpoints"  # the lineages' folder on the outputs volume
LINEAGES = "lineages"  # the lineages' folder in a local jobs folder (backends/local/checkpoints.py)
#: The names no job may take (spec.check_name), and why: a folder of lineages beside the jobs'.
RESERVED_NAMES = {
    ON_OUTPUTS: f"the lineages' checkpoints on a cluster's outputs volume ({ON_OUTPUTS}/<lineage>, "
    "beside each job's outputs folder, named as the job)",
    LINEAGES: f"the lineages' checkpoints in the local jobs folder ({LINEAGES}/<lineage>, beside "
    "each job's folder, named as the job)",
}
IN_POD = "/tmp/kale_ext-checkpoints"  # no volume: inside the container, gone with the pod
#: The environment kale_ext sets for checkpoints: a job's own env may not set it.
ENV_NAMES = (DIR_ENV, KEEP_ENV, RUN_ENV)


@dataclass(frozen=True)
class Checkpoints:
    """Where ``--checkpoints`` asked: a claim (a cluster's) or a folder (a local run's)."""

    volume: OutputsVolume | None = None
    folder: str | None = None

    def __str__(self) -> str:
        return str(self.volume) if self.volume is not None else str(self.folder)


def parse_checkpoints(value: str | None, where: str = "checkpoints") -> Checkpoints | None:
    """``pvc:NAME[:/mount]`` or a folder; None stays None."""
    if value is None:
        return None
    text = value.strip()
    if text.startswith("pvc:"):
        return Checkpoints(volume=parse_outputs(text, where, MOUNT, VOLUME))
    if "\x00" in text or "\n" in text:
        raise ConfigError(where, f"{value!r} is not a folder")
    return Checkpoints(folder=text)


def lineage_of(spec: JobSpec) -> str:
    """The job's lineage (JobSpec.lineage: a resumed job's parent's, or its own name), checked:
    it names the folder its checkpoints go to."""
    lineage = spec.lineage
    if not isinstance(lineage, str) or not matches("job_name", lineage):
        raise ConfigError("lineage", f"{lineage!r} is not a job's name")
    return lineage


def wanted(spec: JobSpec) -> bool:
    """Whether the job gets a checkpoint folder (it uses one, or an option names one)."""
    return bool(
        getattr(spec.job, "uses_checkpoint", False)
        or spec.checkpoints is not None
        or spec.keep_checkpoints is not None
    )


def checkpoint_env(spec: JobSpec, folder: str) -> dict[str, str]:
    """The environment that tells the job its checkpoint folder (and how many to keep)."""
    env = {DIR_ENV: folder, RUN_ENV: spec.name}  # what this job saves is not what it resumes
    if spec.keep_checkpoints is not None:
        env[KEEP_ENV] = str(spec.keep_checkpoints)
    return env


def chosen_checkpoints(value: str | None, config) -> Checkpoints | None:
    """``--checkpoints`` parsed (:func:`parse_checkpoints`), and the job's own environment
    (``config``'s, a DistributedConfig) not setting what kale_ext sets for checkpoints."""
    for var in config.env:
        if var.name in ENV_NAMES:
            raise ConfigError(
                "env", f"{var.name} is kale_ext's: give --checkpoints or --keep-checkpoints instead"
            )
    return parse_checkpoints(value)


def claim_mount(checkpoints: Checkpoints | None, taken: dict[str, str]) -> dict[str, str]:
    """The checkpoints' claim's mount, as ``taken`` (mount → what is there) names each, unless
    something is there already (ConfigError)."""
    if checkpoints is None or checkpoints.volume is None:
        return {}
    mount = checkpoints.volume.mount
    if mount in taken:
        raise ConfigError("checkpoints", f"{checkpoints} mounts where {taken[mount]} is")
    return {mount: f"the checkpoints volume ({checkpoints})"}


def check_cluster(spec: JobSpec) -> None:
    """A cluster job's --checkpoints names a claim, not a folder of this machine."""
    asked = spec.checkpoints
    if asked is not None and asked.volume is None:
        raise ConfigError(
            "checkpoints",
            f"{asked.folder!r} is a folder of this machine: on Kubernetes give "
            "pvc:NAME[:/mount] (or leave it out: checkpoints/<lineage> on the outputs volume)",
        )


def cluster_folder(spec: JobSpec) -> str:
    """The folder of the job's lineage in its pods (a folder of this machine, which the
    Kubernetes backend refuses (check_cluster), is shown as none: inside the container)."""
    asked, lineage = spec.checkpoints, lineage_of(spec)
    if asked is not None and asked.volume is not None:
        return f"{asked.volume.mount}/{lineage}"
    if spec.outputs is not None and asked is None:
        return f"{spec.outputs.mount}/{ON_OUTPUTS}/{lineage}"
    return f"{IN_POD}/{lineage}"


def summary_text(spec: JobSpec) -> str | None:
    """Where the job's checkpoints go, for the preview (None: it uses none)."""
    if not wanted(spec):
        return None
    asked, lineage = spec.checkpoints, lineage_of(spec)
    folder = asked is not None and asked.volume is None
    if folder:
        here, there = f"{asked.folder}/{lineage}", "refused (a folder of this machine)"
    else:
        here = "refused (a claim)" if asked else f"the jobs folder's lineages/{lineage}/checkpoints"
        there = cluster_folder(spec)
        if cluster_warnings(spec):
            there += " (inside the container: it goes with the pod)"
    return f"locally {here}; on a cluster {there} (KALE_EXT_CHECKPOINT_DIR)"


def cluster_env(spec: JobSpec) -> list[dict]:
    """The trainer's env for checkpoints on a cluster (none for a job that uses none)."""
    if not wanted(spec):
        return []
    return [{"name": k, "value": v} for k, v in checkpoint_env(spec, cluster_folder(spec)).items()]


def cluster_warnings(spec: JobSpec) -> list[str]:
    """What a cluster job's user should know: checkpoints with no volume to keep them."""
    if wanted(spec) and spec.checkpoints is None and spec.outputs is None:
        return [
            "checkpoints: no volume keeps them, so they go with each pod (and each node has "
            "its own): give --checkpoints pvc:NAME or --outputs pvc:NAME to resume from them"
        ]
    return []


def stop_grace(spec: JobSpec) -> int | None:
    """The pods' terminationGracePeriodSeconds: set for a job that uses checkpoints (its
    on_stop handlers save in it), whatever its runtime's template says; else None (the
    runtime's)."""
    from ..checkpoint import STOP_GRACE

    return STOP_GRACE if getattr(spec.job, "uses_checkpoint", False) else None
