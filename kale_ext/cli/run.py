"""`compile` and `run`: a notebook into a module, a preview, or a job (whose logs `--follow`
streams)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..errors import CompileError, KaleExtError
from .common import (
    add_backend,
    add_job_options,
    backend_of,
    defaults,
    job_options,
    print_diagnostics,
    print_warnings,
)


def register(sub, epilog: str) -> dict:
    """Add the commands' parsers to ``sub``; return their handlers by name."""
    c = sub.add_parser(
        "compile",
        help="compile a notebook into one self-contained training function",
        description="Compile NOTEBOOK into a module holding one self-contained function. "
        "The notebook is never modified.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("notebook", help="the .ipynb file")
    c.add_argument(
        "-o", "--output-dir", help="where to write the module (default: .kale_ext/ beside it)"
    )
    c.add_argument("--function", help="name of the generated function (default: from the file)")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.add_argument(
        "--trainjob", action="store_true", help="also write the TrainJob as trainjob.yaml"
    )
    add_backend(c)
    add_job_options(c)

    r = sub.add_parser(
        "run",
        help="compile a notebook and run it as a job (locally by default)",
        description="Compile NOTEBOOK and submit it as a distributed job.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("notebook", help="the .ipynb file")
    add_backend(r)
    add_job_options(r)
    r.add_argument("-f", "--follow", action="store_true", help="stream logs until the job ends")
    r.add_argument(
        "--dry-run", action="store_true", help="show the effective settings and TrainJob only"
    )

    return {"compile": _compile, "run": _run}


def _compile(args) -> int:
    from ..backends.submit import prepare
    from ..compile.compiler import write_module
    from ..job.configcell import config_of

    notebook = Path(args.notebook)
    preview = None
    options = job_options(args)
    try:
        job, workspace = prepare(notebook, options, function_name=args.function,
                                 packages=args.packages)  # fmt: skip
        config = config_of(job)  # the `distributed` cell, checked
        out_dir = Path(args.output_dir) if args.output_dir else notebook.parent / ".kale_ext"
        if args.trainjob:
            from ..backends.submit import preview as preview_job

            preview = preview_job(backend_of(args), job, options, defaults(), args.notebook,
                                  workspace=workspace)  # fmt: skip
        path = write_module(job, out_dir)
        if preview is not None:
            preview.write_files(out_dir)  # trainjob.yaml (and workspace.yaml, to apply first)
    except CompileError as e:
        if args.json:
            print(json.dumps(e.to_dict(), indent=2))
        else:
            print_diagnostics(e.diagnostics, sys.stderr)
            print(f"{notebook}: compile failed with {len(e.errors)} error(s)", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot write the module: {e.strerror}: {e.filename}", file=sys.stderr)
        return 1
    if args.json:
        result = {**job.to_dict(), "module_path": str(path)}
        result["config"] = config.to_dict() if config is not None else None
        result["workspace"] = workspace.summary() if workspace is not None else None
        if preview is not None:
            result["trainjob"] = preview.trainjob
            result["effective_config"] = preview.spec.config.to_dict()
            result["creates"] = preview.creates()
        print(json.dumps(result, indent=2, default=repr))
        return 0
    from ..terminal import printable

    params = ", ".join(f"{k}={v!r}" for k, v in job.parameters.items())
    print(printable(f"compiled {notebook} → {path}"))
    print(printable(f"  function   {job.function_name}({params})"))
    if preview is None:  # else the preview's summary says it (with the submit's packages)
        print(printable(f"  packages   {', '.join(job.packages) or '(none)'}"))
    if job.pip_index_urls:
        print(printable(f"  indexes    {', '.join(job.pip_index_urls)}"))
    if preview is None:  # with one, its summary shows them with what the options override
        from ..job.preview import provenance, provenance_lines

        for line in provenance_lines(provenance(job)):
            print(printable(f"  {line}"))
    if job.settings:
        print(printable(f"  settings   {json.dumps(job.settings, sort_keys=True, default=str)}"))
    if preview is not None:
        print(printable(f"  trainjob   {out_dir / 'trainjob.yaml'} ({preview.spec.name})"))
        _print_preview(preview)
    print_diagnostics(job.warnings, sys.stdout)
    return 0


def _print_preview(preview, stream=None) -> None:
    """The effective settings: what the job will get, after every layer of precedence."""
    from ..terminal import printable

    for line in preview.summary():
        print(printable(f"  {line}"), file=stream)
    print_warnings(preview.spec.warnings, stream)


def _run(args) -> int:
    from ..backends.submit import preview, submit

    backend = backend_of(args)
    options = job_options(args)
    where = {"notebook_path": args.notebook}  # a relative --workspace: from the current folder
    if args.dry_run:
        shown = preview(backend, Path(args.notebook), options, defaults(), **where)
        _print_preview(shown)
        print(shown.yaml)
        return 0
    job = submit(backend, Path(args.notebook), options, defaults(), **where)
    print(f"submitted {job.name} to the {backend.name} backend ({job.spec.nodes} node(s) × "
          f"{job.spec.procs_per_node} process(es))", file=sys.stderr)  # fmt: skip
    print_warnings(job.warnings, sys.stderr)
    if not args.follow:
        print(job.name)
        return 0
    return _follow(backend, job.name)


def _follow(backend, name: str) -> int:
    """Stream the logs with rank prefixes, report status changes and progress (a live spinner
    with the status, elapsed time and a progress bar on a terminal; a plain progress line at
    each tenth when piped, read from the lines as they are printed), and exit with the job's
    status."""
    import threading

    from rich.console import Console

    from ..display import log_text
    from ..terminal import printable

    # soft_wrap: a line is never cut at 80 columns (a redirected log keeps whole lines)
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    started = time.monotonic()
    spinner = console.status(f"{name}: submitted") if console.is_terminal else None
    done = threading.Event()
    tenths, lock = ProgressTenths(), threading.Lock()
    from_logs = LogProgress()

    def say_progress(progress) -> None:
        with lock:
            if (shown := tenths.line(progress)) is not None:
                console.print(printable(f"[{name}] progress {shown}"), markup=False)

    def report(info):
        reason = f": {info.reason}" if info.reason else ""
        console.print(printable(f"[{name}] {info.status.value}{reason}"), markup=False)

    def watch():
        last = None
        while not done.is_set():
            try:
                info = backend.get_job(name)
            except KaleExtError:
                return
            if (info.status, info.reason) != last:
                report(info)
                last = (info.status, info.reason)
            if spinner is not None:
                spinner.update(live_text(name, info, time.monotonic() - started))
            elif (progress := info.progress_shown) is not None and progress.source == "trainer":
                say_progress(progress)  # the cluster's own: not in the logs
            if info.status.finished:
                return
            done.wait(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    if spinner is not None:
        spinner.start()
    try:
        watcher.start()
        for line in backend.logs(name, follow=True):
            if spinner is not None:
                console.print(log_text(line), markup=False, highlight=False)
            else:
                print(log_text(line), flush=True)
                # right after the line that passed another tenth: a poll's answer could be
                # older than the lines printed since
                say_progress(from_logs.feed(line))
        watcher.join(timeout=5)
    finally:
        done.set()
        if spinner is not None:
            spinner.stop()
    info = backend.get_job(name)
    where = outputs_line(backend, name)
    if where:
        console.print(printable(where), markup=False)
    return 0 if info.status.value == "Complete" else 1


def live_text(name: str, info, elapsed: float) -> str:
    """The spinner's text on a terminal: `job: Running (41 s) [####----] 45% (45/100 steps),
    ETA 1m 05s` (the bar only while it runs and reports progress)."""
    from ..progress import bar, summary
    from ..terminal import printable

    reason = f": {info.reason}" if info.reason else ""
    text = f"{name}: {info.status.value}{reason} ({elapsed:.0f} s)"
    progress = info.progress_shown
    text = text if progress is None else f"{text} {bar(progress.percent)} {summary(progress)}"
    return printable(text)


class LogProgress:
    """A job's progress read from its rank-0 log lines as they are streamed, the way its
    backend reads it (kale_ext/progress.py)."""

    def __init__(self) -> None:
        from ..progress import ProgressTracker

        self.tracker = ProgressTracker()
        self.progress = None

    def feed(self, line):
        """The progress so far, after ``line`` (a LogLine)."""
        if line.rank == 0:
            self.progress = self.tracker.feed([line.text], time.monotonic())
        return self.progress


class ProgressTenths:
    """Plain progress lines for a log that is piped: one each time the job passes another
    tenth of its work (and at its end), not one per step."""

    def __init__(self) -> None:
        self.tenth: int | None = None

    def line(self, progress) -> str | None:
        from ..progress import summary

        if progress is None:
            return None
        tenth = int(progress.percent // 10)
        if self.tenth is not None and tenth <= self.tenth:
            return None
        self.tenth = tenth
        return summary(progress)


def outputs_line(backend, name: str) -> str | None:
    """Where an ended job's outputs are, to open: `outputs: examples/outputs/<job>/ (2 files:
    a.pt, b.json)`; the path relative to here when it is below here. None when it wrote none."""
    import os

    try:
        found = backend.outputs(name)
    except KaleExtError:
        return None
    if not found.location or (found.listed and not found.files):
        return None
    where = found.location
    if os.path.isabs(where) and not os.path.relpath(where).startswith(".."):
        where = os.path.relpath(where)
    if not found.listed:
        return f"outputs: {where} ({found.note})" if found.note else f"outputs: {where}"
    names = [f.path for f in found.files]
    shown = ", ".join(names[:3]) + (f", ... ({len(names)} files)" if len(names) > 3 else "")
    return f"outputs: {where}{os.sep}: {shown}"
