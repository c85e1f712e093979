"""Resume a job: a rerun (rerun.py: the notebook it ran and its options, under a new name) in the
job's lineage, so that the new job's ``checkpoint.latest()`` is the last checkpoint its parent
saved. The new job records its ``parent``, the ``lineage`` and the checkpoint step its parent last
reported (kale_ext/lineage.py); a new node count may be asked (the checkpoint is the model's,
not the world's). Only a job that has ended is resumed: a running one would write the lineage's
checkpoints beside its child."""

from __future__ import annotations

from ..backends.base import Backend, Status
from ..backends.submit import Submission
from ..errors import BackendError
from ..job.options import BY_NAME, check
from .rerun import rerun


def resume(backend: Backend, name: str, new_name: str | None = None,
           parameters: dict | None = None, nodes: int | None = None, defaults=None,
           root: str | None = None) -> Submission:  # fmt: skip
    """Submit job ``name`` again in its lineage (rerun's arguments, and ``nodes`` for a new node
    count). NotFound for an unknown job; a 409 naming its status for a job that has not ended
    (or whose record cannot be read); a ConfigError naming ``nodes`` out of its bounds; else
    what rerun raises."""
    nodes = check(BY_NAME["nodes"], nodes)
    info = backend.get_job(name)
    if info.status is Status.UNREADABLE:
        raise BackendError(info.reason or f"the record of job {name} cannot be read", 409,
                           "UnreadableRecord")  # fmt: skip
    if not info.status.finished:
        raise BackendError(
            f"job {name} is {info.status_text}: a job is resumed once it has ended (Stopped, "
            f"Failed or Complete); stop it first (kale-ext stop {name})",
            409,
            "NotFinished",
        )
    changes: dict = {"lineage": info.lineage or name, "parent": name}
    if info.checkpoint is not None and isinstance(info.checkpoint.step, int):
        changes["resume_step"] = info.checkpoint.step
    if nodes is not None:
        changes["nodes"] = nodes
    return rerun(backend, name, new_name, parameters, defaults, root, changes, info)
