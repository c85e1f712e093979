"""The checks build_job_spec (spec.py) makes of a job as a whole: its function's arguments, what
its train() call reads from the environment, /dev/shm, mounts and the workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError
from .checkpoints import claim_mount
from .distributed import DistributedConfig
from .volumes import SHM_MOUNT, check_mounts, workspace_clash

if TYPE_CHECKING:
    from ..compile.compiler import CompiledJob
    from .workspace import Workspace


def check_required(job: CompiledJob, func_args: dict) -> None:
    """Every argument of the function without a default is given (the job passes it)."""
    missing = [p for p in getattr(job, "required_parameters", ()) if p not in func_args]
    if missing:
        name = missing[0]
        raise ConfigError(
            f"parameters.{name}",
            f"{job.function_name}() has no default for `{name}`: give it with --param "
            f"{name}=VALUE (the panel's parameters, or func_args of the train() call)",
        )


def check_needs(needs: dict[str, str], config: DistributedConfig) -> None:
    """What the train() call reads from the environment is given to the job (``--env NAME=...``
    or a Secret's keys), or the job is refused saying how to give it."""
    given = {e.name for e in config.env}
    for key, why in needs.items():
        name = key.removeprefix("env.")
        if name not in given and not config.env_from:
            raise ConfigError(key, why)


def check_shm(config: DistributedConfig) -> None:
    """/dev/shm is memory: no larger than the node's memory, when that is set."""
    from .k8s_values import quantity_value

    memory = config.limits.get("memory") or config.requests.get("memory")
    if config.shm_size is None or memory is None:
        return
    if quantity_value(config.shm_size) > quantity_value(memory):
        raise ConfigError("shm_size", f"{config.shm_size} is more than the memory per node "
                          f"({memory}): /dev/shm is held in that memory")  # fmt: skip


def check_volumes(config: DistributedConfig, workspace, outputs, checkpoints=None) -> None:
    """Mounts name volumes and collide with nothing (kale_ext's own mounts included), and no
    relative mount lands on the workspace's files."""
    from .shipping import MOUNT as WORKSPACE_MOUNT

    taken = {WORKSPACE_MOUNT: "the workspace's parts"} if workspace is not None else {}
    if outputs is not None:
        taken[outputs.mount] = f"the outputs volume ({outputs})"
    taken.update(claim_mount(checkpoints, taken))
    if config.shm_size is not None:
        taken[SHM_MOUNT] = f"/dev/shm (shm_size {config.shm_size})"
    check_mounts(config.volumes, config.volume_mounts, taken)
    workspace_clash(workspace, config.volume_mounts)


def workspace_warnings(job: CompiledJob, workspace: Workspace | None) -> list[str]:
    """The workspace within its cap (else ConfigError), and what the user should know: files
    skipped, local modules that do not travel."""
    if workspace is None:
        return [
            f"`{m}` is a module beside the notebook, but the job ships no workspace: the import "
            "fails unless the image has it"
            for m in job.local_modules
        ]
    from .workspace import too_big

    if workspace.size > workspace.max_size:
        raise ConfigError("workspace", too_big(workspace))
    return workspace.warnings()
