"""A local job's workspace: the same parts the cluster mounts, in the job's folder, for the
same bootstrap to unpack into each node's own working directory."""

from __future__ import annotations

from pathlib import Path

from ...job.shipping import PARTS_ENV as WORKSPACE_PARTS
from ...job.workspace import Workspace

__all__ = ["WORKSPACE_PARTS", "node_workdir", "write_parts"]


def write_parts(workspace: Workspace, folder: Path) -> Path:
    """Write the packed workspace's parts (`part-000`, ...) into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, data in workspace.packed().split().items():
        (folder / key).write_bytes(data)
    return folder


def node_workdir(job_dir: Path, node: int) -> Path:
    """A node's working directory: the workspace unpacked, anew on each attempt (restarts.py)."""
    return job_dir / f"node-{node}"
