"""A local job's checkpoint folder: per lineage, outside the job's own folder, so deleting or
pruning a job leaves its lineage's checkpoints for the jobs resumed from it
(job/checkpoints.py says what a lineage is and when a job gets a folder)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ConfigError
from ...job.checkpoints import LINEAGES, checkpoint_env, lineage_of, wanted
from ...job.spec import JobSpec

# LINEAGES, the lineages' folder in the jobs folder, is never a job's name (spec.check_name)
__all__ = ["LINEAGES", "checkpoint_dir", "local_checkpoints", "local_folder"]


def checkpoint_dir(jobs_root: Path, lineage: str) -> Path:
    """The default checkpoint folder of ``lineage`` under the jobs folder ``jobs_root``."""
    return Path(jobs_root) / LINEAGES / lineage / "checkpoints"


def local_folder(spec: JobSpec, jobs_root: Path) -> Path:
    """Where the job's lineage keeps its checkpoints here: ``--checkpoints DIR``'s
    ``DIR/<lineage>`` (a relative DIR beside the notebook), else :func:`checkpoint_dir`."""
    asked, lineage = spec.checkpoints, lineage_of(spec)
    if asked is None:
        return checkpoint_dir(jobs_root, lineage)
    if asked.folder is None:
        raise ConfigError(
            "checkpoints",
            f"{asked} is a cluster's volume: locally give a folder (or leave it out: the jobs "
            "folder keeps them per lineage)",
        )
    root = Path(asked.folder).expanduser()
    if not root.is_absolute():
        root = (spec.folder or Path.cwd()) / root
    return root / lineage


def local_checkpoints(spec: JobSpec, jobs_root: Path) -> dict[str, str]:
    """The nodes' environment for checkpoints (none for a job that uses none), its folder made
    (private, as the jobs folder's records are)."""
    if not wanted(spec):
        return {}
    folder = local_folder(spec, jobs_root)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise ConfigError("checkpoints", f"cannot make {folder}: {e.strerror}") from None
    return checkpoint_env(spec, str(folder.resolve()))
