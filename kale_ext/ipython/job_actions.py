"""`%kale_stop NAME` and `%kale_rerun NAME [--name N] [--param k=v ...]`: stop a job and keep it;
submit a job again as it was recorded (its notebook snapshot and options), never what the
notebook or the kernel holds now."""

from __future__ import annotations

import sys

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..runs.rerun_flags import add_rerun_arguments
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
        from ..job.defaults import load
        from ..runs.rerun import overrides, rerun
        from .widgets import JobMonitor

        args = parse(RERUN, line)
        with user_errors("%kale_rerun"):
            defaults = load()
            backend = _backend(args, defaults)
            job = rerun(backend, args.name, args.new_name, overrides(args.param),
                        defaults)  # fmt: skip
        for warning in job.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        every = 0.5 if backend.name == "local" else 2.0
        return JobMonitor(backend, job.name, nodes=job.spec.nodes,
                          procs_per_node=job.spec.procs_per_node, interval=every,
                          shell=self.shell)  # fmt: skip


JobActionMagics.kale_stop.__doc__ = STOP.format_help()
JobActionMagics.kale_rerun.__doc__ = RERUN.format_help()
