"""`stop`, `rerun` and `resume`: stop a job and keep it; submit a job again as it was recorded;
resume it from its last checkpoint (a rerun in its lineage, kale_ext/runs/resume.py)."""

from __future__ import annotations

from ..runs.rerun_flags import add_rerun_arguments, add_resume_arguments
from .common import add_backend, add_output, backend_of, defaults, emit
from .follow import add_follow, submitted


def register(sub) -> dict:
    """Add the commands' parsers to ``sub``; return their handlers by name."""
    s = sub.add_parser("stop", help="stop a running job and keep it (its logs, outputs and "
                       "record stay; it reads Stopped)")  # fmt: skip
    s.add_argument("name")
    add_backend(s)
    add_output(s)
    r = sub.add_parser("rerun", help="submit a job again: the notebook it ran and its options, "
                       "under a new name, with only the overrides given")  # fmt: skip
    add_rerun_arguments(r)
    add_backend(r)
    add_follow(r)
    u = sub.add_parser("resume", help="resume a job that ended from its last checkpoint: a "
                       "rerun in its lineage (checkpoint.latest() is its last save), with a new "
                       "node count if asked")  # fmt: skip
    add_resume_arguments(u)
    add_backend(u)
    add_follow(u)
    return {"stop": _stop, "rerun": _rerun, "resume": _resume}


def _stop(args) -> int:
    from ..display import job_status
    from ..runs.stop import stop

    info = stop(backend_of(args), args.name)
    emit(args, info.to_dict(), lambda _: print(job_status(info)))
    return 0


def _rerun(args) -> int:
    from ..runs.rerun import overrides, rerun

    backend = backend_of(args)
    job = rerun(backend, args.name, args.new_name, overrides(args.param), defaults())
    return submitted(args, backend, job, f", as {args.name} ran")


def _resume(args) -> int:
    from ..runs.rerun import overrides
    from ..runs.resume import resume

    backend = backend_of(args)
    job = resume(backend, args.name, args.new_name, overrides(args.param), args.nodes,
                 defaults())  # fmt: skip
    return submitted(args, backend, job, f", resumed from {args.name}: {job.spec.shape}")
