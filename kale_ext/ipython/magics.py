"""IPython magics: `%load_ext kale_ext`, then

    %%trainjob [--nodes N] [--gpu G] [--dry-run] ...   the cell's code, run as a training job
    %%trainjob --sweep lr=1e-3,1e-2 [--random N] ...   once per point (ipython/sweep.py)
    %kale_submit [--notebook PATH] ...                  the notebook file, by its tags
    %kale_jobs [--status S]   %kale_status NAME   %kale_logs NAME [-f]   %kale_delete NAME
    %kale_sdk [--backend B]                             the notebook's TrainerClient through
                                                        kale_ext (ipython/sdkmagic.py)
    %kale_stop NAME   %kale_rerun NAME [--name N] [--param k=v]      (ipython/job_actions.py)
    %kale_resume NAME [--name N] [--nodes N] [--param k=v]   a rerun in the job's lineage

Every surface takes the same path: compile_notebook → build_job_spec → backend.submit.
A user error (a bad option, a compile error, a backend's refusal) is shown as a clear message
(IPython's UsageError), never a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..display import STATUSES
from ..errors import CompileError
from ..files import MAX_NOTEBOOK_BYTES, read_bytes
from .results import DryRun, JobStatus, JobTable
from .sweep import add_sweep_flags, sweeping
from .usage import add_backend_flag, compile_message, parse, user_errors

# ---------------------------------------------------------------------------------------------
# Options (kale_ext/job/options.py: the CLI's flags too)


def _count(minimum: int):
    def count(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return count


def _identifier(text: str) -> str:
    if not text.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r} is not a variable name")
    return text


def _job_parser(prog: str, description: str) -> MagicArgumentParser:
    from ..job.option_flags import add_flags

    p = MagicArgumentParser(prog=prog, description=description)
    add_flags(p)
    p.add_argument(
        "--config",
        type=_identifier,
        metavar="VAR",
        help="a DistributedConfig variable of the kernel, laid over the other settings",
    )
    add_backend_flag(p)
    p.add_argument(
        "--dry-run", action="store_true", help="show the function and the TrainJob, submit nothing"
    )
    return p


TRAINJOB = _job_parser(
    "%%trainjob",
    "Run the cell's code as a distributed training job. The imports, functions, classes and "
    "literal variables it reads from the notebook go with it; literals become parameters.",
)
add_sweep_flags(TRAINJOB)
SUBMIT = _job_parser(
    "%kale_submit",
    "Compile and submit this notebook file by its cell tags (the saved file: save first).",
)
SUBMIT.add_argument(
    "--notebook", metavar="PATH", help="the notebook file (default: the kernel's notebook)"
)
JOBS = MagicArgumentParser(prog="%kale_jobs", description="List jobs with their status.")
JOBS.add_argument(
    "--status",
    type=str.lower,
    choices=STATUSES,
    help="only jobs in this status (stalled: running without output for a while)",
)
add_backend_flag(JOBS)
STATUS = MagicArgumentParser(
    prog="%kale_status", description="One job's status; for a failed job, where and why."
)
STATUS.add_argument("name")
add_backend_flag(STATUS)
LOGS = MagicArgumentParser(
    prog="%kale_logs", description="Print a job's logs (all nodes, rank-prefixed)."
)
LOGS.add_argument("name")
LOGS.add_argument(
    "-f", "--follow", action="store_true", help="wait for new lines (interrupt to stop)"
)
LOGS.add_argument("--node", type=_count(0), help="only this node")
LOGS.add_argument("--tail", type=_count(0), help="only the last N lines of each node")
add_backend_flag(LOGS)
DELETE = MagicArgumentParser(prog="%kale_delete", description="Stop and delete a job.")
DELETE.add_argument("name")
DELETE.add_argument("--outputs", action="store_true", help="delete its outputs too")
add_backend_flag(DELETE)


# ---------------------------------------------------------------------------------------------
# Results that display themselves


# ---------------------------------------------------------------------------------------------
# The magics


@magics_class
class KaleMagics(Magics):
    """kale_ext's magics; every one prints its help with `?` (e.g. `%%trainjob?`)."""

    # -- %%trainjob --

    @cell_magic
    def trainjob(self, line: str, cell: str):
        args = parse(TRAINJOB, line)
        if not cell or not cell.strip():
            raise UsageError(
                "%%trainjob: the cell is empty: write the training code below the %%trainjob line"
            )
        with user_errors("%%trainjob"):
            if sweeping(args):
                from .sweep import start_sweep

                return start_sweep(self, args, cell)
            options = self._options(args)
            workspace, place = self._workspace(options, {}, None)
            job, labels, body, nb = self._compile_cell(cell, workspace)
            from ..backends.snapshots import snapshot_of

            kept = snapshot_of(nb)  # what a rerun runs
            return self._run(job, options, args, job.notebook, labels, body, workspace, place, kept)

    @staticmethod
    def _workspace(options: dict, metadata, path):
        """(the files the job ships, where the notebook lives): by default the notebook's folder,
        else (a cell) the kernel's working directory, where the cell's `open("data.csv")` reads."""
        from pathlib import Path

        from ..job.workspace import Place, choose

        cwd = Path.cwd()
        place = Place.of(path, base=cwd) if path is not None else Place(cwd, cwd)
        return choose(options, metadata, place), place

    def _compile_cell(self, cell: str, workspace=None):
        from ..compile.codegen import function_name_for
        from ..compile.compiler import compile_notebook
        from ..job.workspace import modules_beside
        from .kernelcontext import context_notebook, session_notebook_name

        notebook = session_notebook_name(self.shell) or "trainjob.ipynb"
        ctx = self._context(cell)
        if ctx.problems:
            n = len(ctx.problems)
            if n == 1:
                raise UsageError(f"%%trainjob: cannot travel into the job: {ctx.problems[0]}")
            raise UsageError(
                f"%%trainjob: {n} names the cell reads cannot travel into the job:\n"
                + "\n".join(f"  {p}" for p in ctx.problems)
            )
        stem = notebook[: -len(".ipynb")] if notebook.endswith(".ipynb") else notebook
        name = function_name_for(stem)
        taken = set(ctx.parameters) | {d.name for d in ctx.definitions}
        while name in taken:
            name += "_job"
        nb, labels, body = context_notebook(ctx, cell, notebook)
        try:
            local = workspace.modules if workspace is not None else modules_beside(".")
            job = compile_notebook(nb, function_name=name, local_modules=local)
        except CompileError as e:
            names = [k for k in self.shell.user_ns if not k.startswith("_")]
            raise UsageError(
                compile_message(
                    "%%trainjob",
                    e.errors,
                    lambda d: _describe_cell_diagnostic(d, labels, body, names),
                )
            ) from None
        return job, labels, body, nb

    def _context(self, cell: str):
        """What the cell reads from the kernel; nothing when it does not parse (the compiler
        then reports the error, with its line)."""
        from ..compile.notebook import Cell
        from ..compile.transform import transform_cell
        from .kernelcontext import KernelContext, from_shell

        code = transform_cell(Cell(0, "code", cell), [])
        if code is None:
            return KernelContext()
        try:
            # the body's line 1 is the cell's line 2 (below the %%trainjob line)
            return from_shell(self.shell, code.source, first_line=2)
        except SyntaxError:
            return KernelContext()

    # -- %kale_submit --

    @line_magic
    def kale_submit(self, line: str):
        args = parse(SUBMIT, line)
        with user_errors("%kale_submit"):
            from ..compile.compiler import compile_notebook
            from ..compile.notebook import read_notebook
            from ..job.spec import train_call_choice
            from ..job.workspace import modules_beside
            from .kernelcontext import find_notebook

            options = self._options(args)
            path = find_notebook(self.shell, args.notebook)
            notebook = read_notebook(path)
            meta = notebook.metadata.get("kale_ext")
            workspace, place = self._workspace(options, meta, path)
            local = workspace.modules if workspace is not None else modules_beside(path.parent)
            which = train_call_choice(options, meta)  # --train-call: which train() is the job
            job = compile_notebook(notebook, local_modules=local, train_call=which)
            kept = read_bytes(path, MAX_NOTEBOOK_BYTES)  # what a rerun runs
            return self._run(job, options, args, path.name, None, None, workspace, place, kept)

    # -- shared: options, backend, submit --

    def _options(self, args) -> dict:
        from ..job.option_flags import from_args

        options = from_args(args)
        if args.config:
            options["config"] = self._config(args.config)
        return options

    def _config(self, var: str):
        from ..job.distributed import DistributedConfig

        ns = self.shell.user_ns
        if var not in ns:
            raise UsageError(f"--config {var}: the kernel has no variable `{var}`")
        value = ns[var]
        if isinstance(value, DistributedConfig):
            return value
        t = type(value)
        if t.__name__ == "DistributedConfig" and t.__module__ == DistributedConfig.__module__:
            return value.to_dict()  # the class was reloaded: its values are still good
        raise UsageError(
            f"--config {var}: `{var}` is a {t.__name__}, not a DistributedConfig "
            "(from kale_ext.distributed import DistributedConfig)"
        )

    def _backend(self, args, defaults=None, preview: bool = False):
        """The backend to use, from ``--backend`` and the defaults (read now, unless given); for
        a ``preview``, None when it has no cluster to ask (choose.preview_backend)."""
        from ..backends.choose import choose_backend, preview_backend
        from ..job.defaults import load

        try:
            if preview:
                return preview_backend(args.backend, defaults or load())
            backend, _ = choose_backend(args.backend, defaults or load())
        except ImportError as e:
            raise UsageError(
                f"the {args.backend or 'chosen'} backend is not available: {e}"
            ) from None
        return backend

    def _run(
        self, job, options: dict, args, notebook: str, labels, body, workspace=None, place=None,
        snapshot: bytes | None = None,
    ):  # fmt: skip
        from ..backends.submit import preview, submit
        from ..job.defaults import load

        defaults = load()  # once: the backend and the job start from the same
        backend = self._backend(args, defaults, preview=args.dry_run)
        compile_warnings = [
            _describe_cell_diagnostic(d, labels, body) if labels else str(d) for d in job.warnings
        ]
        if args.dry_run:
            where = {"place": place, "workspace": workspace}
            shown = preview(backend, job, options, defaults, notebook, **where)
            return DryRun(shown, warnings=compile_warnings + shown.spec.warnings)
        where = {"place": place, "workspace": workspace}
        submitted = submit(backend, job, options, defaults, notebook, **where, snapshot=snapshot)
        for w in compile_warnings + submitted.warnings[len(job.warnings) :]:
            print(f"warning: {w}", file=sys.stderr)
        from .widgets import JobMonitor

        return JobMonitor(
            backend,
            submitted.name,
            nodes=submitted.spec.nodes,
            procs_per_node=submitted.spec.procs_per_node,
            interval=0.5 if backend.name == "local" else 2.0,
            shell=self.shell,
            cell_words=_cell_words(labels, body) if labels else None,
        )

    # -- jobs, logs, delete --

    @line_magic
    def kale_jobs(self, line: str):
        args = parse(JOBS, line)
        from ..display import select_jobs

        with user_errors("%kale_jobs"):
            return JobTable(select_jobs(self._backend(args).list_jobs(), args.status))

    @line_magic
    def kale_status(self, line: str):
        args = parse(STATUS, line)
        with user_errors("%kale_status"):
            return JobStatus(self._backend(args).get_job(args.name))

    @line_magic
    def kale_logs(self, line: str):
        args = parse(LOGS, line)
        from ..display import log_text

        with user_errors("%kale_logs"):
            backend = self._backend(args)
            lines = backend.logs(args.name, node=args.node, follow=args.follow, tail=args.tail)
            try:
                for log in lines:
                    print(log_text(log), flush=True)
            except KeyboardInterrupt:
                print(f"(stopped following {args.name}; the job goes on)")

    @line_magic
    def kale_delete(self, line: str):
        args = parse(DELETE, line)
        with user_errors("%kale_delete"):
            note = self._backend(args).delete(args.name, outputs=args.outputs)
        print(f"deleted {args.name}" + (f"; {note}" if note else ""))


for _magic, _parser in (
    (KaleMagics.trainjob, TRAINJOB),
    (KaleMagics.kale_submit, SUBMIT),
    (KaleMagics.kale_jobs, JOBS),
    (KaleMagics.kale_status, STATUS),
    (KaleMagics.kale_logs, LOGS),
    (KaleMagics.kale_delete, DELETE),
):
    _magic.__doc__ = _parser.format_help()


def _describe_cell_diagnostic(d, labels: dict[int, str], body: int, kernel_names=()) -> str:
    """A compile diagnostic of the in-memory notebook, in the words of the %%trainjob cell:
    the body's lines are the cell's (its line 1 is the %%trainjob line)."""
    message = re.sub(r" used in cell \d+(, line \d+)?", "", d.message)
    if "is never defined" in message:
        message = message.replace("is never defined", "is not defined in the cell or in the kernel")
        m = re.match(r"name `([^`]+)`", message)
        close = difflib.get_close_matches(m.group(1), kernel_names, n=1, cutoff=0.8) if m else []
        if close:  # a kernel variable is a better guess than the compiler's (it saw the cell)
            message = re.sub(r" \(did you mean `[^`]*`\?\)", "", message)
            message += f" (did you mean `{close[0]}`?)"

    def cell_ref(m: re.Match) -> str:
        index = int(m.group(1)) - 1
        return "the cell" if index == body else labels.get(index, m.group(0))

    message = re.sub(r"\bcell (\d+)", cell_ref, message)
    if d.cell is None:
        return message
    if d.cell == body:
        return f"line {d.line + 1}: {message}" if d.line else message
    where = labels.get(d.cell, f"cell {d.cell + 1}")
    return f"{where}, line {d.line}: {message}" if d.line else f"{where}: {message}"


def _cell_words(labels: dict[int, str], body: int):
    """A job's `cell 3 ("training"), line 2` in the words of the %%trainjob cell it came from
    (the body's line 1 is the cell's line 2, below the %%trainjob line)."""

    def say(m: re.Match) -> str:
        index, line = int(m.group(1)) - 1, int(m.group(2))
        if index == body:
            return f"the %%trainjob cell, line {line + 1}"
        return f"{labels.get(index, m.group(0))}, line {line}"

    def words(text: str) -> str:
        text = re.sub(r" \(cell id kale-ext-\d+\)", "", text)  # ids of cells the user never saw
        return re.sub(r'\bcell (\d+) \("[^"]*"\), line (\d+)', say, text)

    return words


def load_ipython_extension(ipython) -> None:
    """`%load_ext kale_ext`."""
    from .job_actions import JobActionMagics
    from .sdkmagic import SdkMagics
    from .sweep import SweepMagics

    ipython.register_magics(KaleMagics, SweepMagics, SdkMagics, JobActionMagics)
