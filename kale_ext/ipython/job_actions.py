"""`%kale_stop NAME`, `%kale_rerun NAME [--name N] [--param k=v ...]` and `%kale_resume NAME
[--name N] [--nodes N] [--param k=v ...]`: stop a job and keep it; submit a job again as it was
recorded (its notebook snapshot and options), never what the notebook or the kernel holds now;
resume a job that ended from its last checkpoint (a rerun in its lineage)."""

from __future__ import annotations

import sys

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..runs.rerun_flags import add_rerun_arguments, add_resume_arguments
from .results import JobStatus
from .usage import add_backend_flag, parse, user_errors

STOP = MagicArgumentParser(
    prog="%kale_stop",
    description="Stop a running job and keep it: its logs, outputs and record stay, and it "
    "reads Stopped (who stopped it, when). %kale_delete removes a job.",
)
STOP.add_argument("name")
add_backend_flag(STOP)
RERUN = MagicArgumentParser(
    prog="%kale_rerun",
    description="Submit a job again: the notebook it ran and its options, under a new name, "
    "with only the overrides given.",
)
add_rerun_arguments(RERUN)
add_backend_flag(RERUN)
RESUME = MagicArgumentParser(
    prog="%kale_resume",
    description="Resume a job that ended (Stopped, Failed or Complete) from its last "
    "checkpoint: a rerun in its lineage, so checkpoint.latest() is its last save; --nodes asks "
    "a new node count.",
)
add_resume_arguments(RESUME)
add_backend_flag(RESUME)


def _backend(args, defaults):
    from ..backends.choose import choose_backend

    backend, _ = choose_backend(args.backend, defaults)
    return backend


@magics_class
class JobActionMagics(Magics):
    @line_magic
    def kale_stop(self, line: str):
        from ..job.defaults import load
        from ..runs.stop import stop

        args = parse(STOP, line)
        with user_errors("%kale_stop"):
            return JobStatus(stop(_backend(args, load()), args.name))

    @line_magic
    def kale_rerun(self, line: str):
        from ..runs.rerun import overrides, rerun

        args = parse(RERUN, line)
        return self._submitted("%kale_rerun", args, lambda backend, defaults: rerun(
            backend, args.name, args.new_name, overrides(args.param), defaults))  # fmt: skip

    @line_magic
    def kale_resume(self, line: str):
        from ..runs.rerun import overrides
        from ..runs.resume import resume

        args = parse(RESUME, line)
        return self._submitted("%kale_resume", args, lambda backend, defaults: resume(
            backend, args.name, args.new_name, overrides(args.param), args.nodes,
            defaults))  # fmt: skip

    def _submitted(self, magic: str, args, submit):
        """Submit with ``submit(backend, defaults)``; its warnings, and a monitor of the job."""
        from ..job.defaults import load
        from .widgets import JobMonitor

        with user_errors(magic):
            defaults = load()
            backend = _backend(args, defaults)
            job = submit(backend, defaults)
        for warning in job.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        every = 0.5 if backend.name == "local" else 2.0
        return JobMonitor(backend, job.name, nodes=job.spec.nodes,
                          procs_per_node=job.spec.procs_per_node, interval=every,
                          shell=self.shell)  # fmt: skip


JobActionMagics.kale_stop.__doc__ = STOP.format_help()
JobActionMagics.kale_rerun.__doc__ = RERUN.format_help()
JobActionMagics.kale_resume.__doc__ = RESUME.format_help()
