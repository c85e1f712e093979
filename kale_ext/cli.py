"""The `kale-ext` command line. It never imports jupyter_server or the Kubeflow SDK eagerly."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from .errors import CompileError, ConfigError, Diagnostic, KaleExtError

EXAMPLES = """examples:
  kale-ext compile examples/digits_ddp.ipynb
  kale-ext compile notebook.ipynb -o build --json
  kale-ext compile notebook.ipynb --function train --package 'numpy>=2'
  kale-ext compile notebook.ipynb --trainjob --nodes 2 --gpu 1 --cpu 4 --memory 16Gi
  kale-ext run examples/digits_ddp.ipynb --nodes 2 --follow
  kale-ext jobs --status failed
  kale-ext status digits-ddp-x1y2z
  kale-ext logs digits-ddp-x1y2z -f --node 1
  kale-ext delete digits-ddp-x1y2z
  kale-ext defaults -o json

Defaults (backend, namespace, runtime, image, pip index URLs, nodes, CPU, memory, GPUs) are
the same as the JupyterLab panel's: see `kale-ext defaults`.
"""


def _add_job_options(p: argparse.ArgumentParser) -> None:
    """Submit-time choices (kale_ext/job/options.py), shared by `compile --trainjob`, `run` and
    the magics."""
    from .job.options import add_flags

    add_flags(p, "job options (override the notebook's settings and the defaults)")


def _job_options(args) -> dict:
    from .job.options import from_args

    return from_args(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kale-ext",
        description="Turn a tagged Jupyter notebook into a distributed training job.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    c = sub.add_parser(
        "compile",
        help="compile a notebook into one self-contained training function",
        description="Compile NOTEBOOK into a module holding one self-contained function. "
        "The notebook is never modified.",
        epilog=EXAMPLES,
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
    _add_backend(c)
    _add_job_options(c)

    r = sub.add_parser(
        "run",
        help="compile a notebook and run it as a job (locally by default)",
        description="Compile NOTEBOOK and submit it as a distributed job.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("notebook", help="the .ipynb file")
    _add_backend(r)
    _add_job_options(r)
    r.add_argument("-f", "--follow", action="store_true", help="stream logs until the job ends")
    r.add_argument(
        "--dry-run", action="store_true", help="show the effective settings and TrainJob only"
    )

    j = sub.add_parser("jobs", help="list jobs with their status")
    _add_backend(j)
    _add_output(j)
    j.add_argument(
        "--status",
        type=str.lower,
        help="only jobs in this status: created, queued, running, stalled (running without "
        "output for the defaults' stall_seconds), complete or failed",
    )
    st = sub.add_parser("status", help="one job's status; for a failed job, where and why")
    st.add_argument("name")
    _add_backend(st)
    _add_output(st)

    ev = sub.add_parser("events", help="a job's events (scheduling, pulls, failures)")
    ev.add_argument("name")
    _add_backend(ev)
    _add_output(ev)

    lg = sub.add_parser("logs", help="print a job's logs (all nodes, rank-prefixed)")
    lg.add_argument("name")
    _add_backend(lg)
    lg.add_argument("-f", "--follow", action="store_true", help="wait for new lines")
    lg.add_argument("--node", type=int, help="only this node")
    lg.add_argument("--tail", type=int, help="only the last N lines of each node")

    d = sub.add_parser("delete", help="stop and delete a job (its outputs stay)")
    d.add_argument("name")
    d.add_argument("--outputs", action="store_true", help="delete its outputs too")
    _add_backend(d)
    o = sub.add_parser("outputs", help="what a job wrote to KALE_EXT_OUTPUT_DIR, with sizes")
    o.add_argument("name")
    o.add_argument("--copy", metavar="DIR", help="copy them into DIR")
    _add_backend(o)
    _add_output(o)

    rt = sub.add_parser("runtimes", help="list the training runtimes")
    _add_backend(rt)
    _add_output(rt)
    rt.add_argument(
        "--packages",
        metavar="RUNTIME",
        help="list the Python packages of RUNTIME's image (runs a short job once, then cached)",
    )
    df = sub.add_parser(
        "defaults",
        help="the defaults every job starts from, and where each is set",
        description="The defaults the JupyterLab panel, this CLI and the magics share, lowest "
        "first: built in < the Jupyter server's configuration (c.KaleExtApp.<field>) < the "
        "JupyterLab settings (Settings Editor → kale_ext). A notebook's own settings and each "
        "command's flags come before all of them.",
    )
    _add_output(df)
    return parser


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--output", choices=("table", "json", "yaml"), default="table", help="output format"
    )


def _emit(args, rows: list[dict], table) -> None:
    """Print listing ``rows`` as JSON, YAML, or with the ``table`` printer."""
    if args.output == "json":
        print(json.dumps(rows, indent=2))
    elif args.output == "yaml":
        import yaml

        print(yaml.safe_dump(rows, sort_keys=False, allow_unicode=True), end="")
    else:
        table(rows)


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=("local", "kubernetes"),
        help="where jobs run (default: KALE_EXT_BACKEND, else the defaults' backend; `auto`: "
        "kubernetes when a cluster is configured, else local)",
    )
    p.add_argument(
        "--allow-cpu-for-gpu",
        action="store_true",
        help="local backend: run a job that asks for GPUs on the CPU when this machine has none",
    )


@functools.cache
def _defaults():
    """The defaults the panel and the magics use too (kale_ext.defaults), read once a command."""
    from .job.defaults import load

    return load()


def _backend(args):
    from .backends.choose import choose_backend

    allow = getattr(args, "allow_cpu_for_gpu", False) or None  # None: the backend's default
    backend, _ = choose_backend(args.backend, _defaults(), allow_cpu_for_gpu=allow)
    return backend


def _print_diagnostics(diags: list[Diagnostic], stream) -> None:
    for d in diags:
        print(f"{d.severity}: {d}", file=stream)


def _compile(args) -> int:
    from .backends.submit import prepare
    from .compile.compiler import write_module
    from .job.configcell import config_of

    notebook = Path(args.notebook)
    preview = None
    options = _job_options(args)
    try:
        job, workspace = prepare(notebook, options, function_name=args.function,
                                 packages=args.packages)  # fmt: skip
        config = config_of(job)  # the `distributed` cell, checked
        out_dir = Path(args.output_dir) if args.output_dir else notebook.parent / ".kale_ext"
        if args.trainjob:
            from .backends.submit import preview as preview_job

            preview = preview_job(_backend(args), job, options, _defaults(), args.notebook,
                                  workspace=workspace)  # fmt: skip
        path = write_module(job, out_dir)
        if preview is not None:
            preview.write_files(out_dir)  # trainjob.yaml (and workspace.yaml, to apply first)
    except CompileError as e:
        if args.json:
            print(json.dumps(e.to_dict(), indent=2))
        else:
            _print_diagnostics(e.diagnostics, sys.stderr)
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
    params = ", ".join(f"{k}={v!r}" for k, v in job.parameters.items())
    print(f"compiled {notebook} → {path}")
    print(f"  function   {job.function_name}({params})")
    print(f"  packages   {', '.join(job.packages) or '(none)'}")
    if job.pip_index_urls:
        print(f"  indexes    {', '.join(job.pip_index_urls)}")
    if job.settings:
        print(f"  settings   {json.dumps(job.settings, sort_keys=True)}")
    if preview is not None:
        print(f"  trainjob   {out_dir / 'trainjob.yaml'} ({preview.spec.name})")
        _print_preview(preview)
    _print_diagnostics(job.warnings, sys.stdout)
    return 0


def _print_preview(preview, stream=None) -> None:
    """The effective settings: what the job will get, after every layer of precedence."""
    for line in preview.summary():
        print(f"  {line}", file=stream)
    for warning in preview.spec.warnings:
        print(f"warning: {warning}", file=stream)


def _run(args) -> int:
    from .backends.submit import preview, submit

    backend = _backend(args)
    options = _job_options(args)
    where = {"notebook_path": args.notebook}  # a relative --workspace: from the current folder
    if args.dry_run:
        shown = preview(backend, Path(args.notebook), options, _defaults(), **where)
        _print_preview(shown)
        print(shown.yaml)
        return 0
    job = submit(backend, Path(args.notebook), options, _defaults(), **where)
    print(f"submitted {job.name} to the {backend.name} backend ({job.spec.nodes} node(s) × "
          f"{job.spec.procs_per_node} process(es))", file=sys.stderr)  # fmt: skip
    for warning in job.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not args.follow:
        print(job.name)
        return 0
    return _follow(backend, job.name)


def _follow(backend, name: str) -> int:
    """Stream the logs with rank prefixes, report status changes (a live spinner with the status
    and elapsed time on a terminal), and exit with the job's status."""
    import threading
    import time

    from rich.console import Console

    from .display import log_text

    console = Console(stderr=True, highlight=False)
    started = time.monotonic()
    spinner = console.status(f"{name}: submitted") if console.is_terminal else None

    def report(info):
        reason = f": {info.reason}" if info.reason else ""
        console.print(f"[{name}] {info.status.value}{reason}", markup=False)
        if spinner is not None:
            spinner.update(
                f"{name}: {info.status.value}{reason} ({time.monotonic() - started:.0f} s)"
            )

    watch = {"interval": 0.5, "on_change": report}
    watcher = threading.Thread(target=backend.wait, args=(name,), kwargs=watch, daemon=True)
    if spinner is not None:
        spinner.start()
    try:
        watcher.start()
        for line in backend.logs(name, follow=True):
            if spinner is not None:
                console.print(log_text(line), markup=False, highlight=False)
            else:
                print(log_text(line), flush=True)
        watcher.join(timeout=5)
    finally:
        if spinner is not None:
            spinner.stop()
    info = backend.get_job(name)
    return 0 if info.status.value == "Complete" else 1


def _jobs(args) -> int:
    from .display import STATUSES, jobs_table, select_jobs

    if args.status is not None and args.status not in STATUSES:
        raise ConfigError("status", f"must be one of {', '.join(STATUSES)}, not {args.status!r}")
    jobs = select_jobs(_backend(args).list_jobs(), args.status)
    _emit(args, [j.to_dict() for j in jobs], lambda rows: print(jobs_table(jobs)))
    return 0


def _status(args) -> int:
    from .display import job_status

    info = _backend(args).get_job(args.name)
    _emit(args, info.to_dict(), lambda row: print(job_status(info)))
    return 0


def _events(args) -> int:
    def table(rows):
        for e in rows:
            print(f"{e['time'] or '':<20}  {e['type']:<7}  {e['reason']:<24}  {e['message']}")

    from dataclasses import asdict

    _emit(args, [asdict(e) for e in _backend(args).events(args.name)], table)
    return 0


def _logs(args) -> int:
    from .display import log_text

    for line in _backend(args).logs(args.name, node=args.node, follow=args.follow, tail=args.tail):
        print(log_text(line), flush=True)
    return 0


def _delete(args) -> int:
    note = _backend(args).delete(args.name, outputs=args.outputs)
    print(f"deleted {args.name}" + (f"; {note}" if note else ""))
    return 0


def _outputs(args) -> int:
    from .display import outputs_text

    backend, copy = _backend(args), args.copy and Path(args.copy)
    found = backend.copy_outputs(args.name, copy) if copy else backend.outputs(args.name)
    _emit(args, found.to_dict(), lambda _: print(outputs_text(found)))
    return 0


def _runtimes(args) -> int:
    if args.packages:
        return _runtime_packages(args)

    def table(rows):
        for r in rows:
            accel = ", ".join(f"{v} {k}" for k, v in r["accelerators"].items()) or "no accelerators"
            shape = f"{r['num_nodes']} node(s)"
            print(f"{r['name']:<32} {r['framework']:<10} {shape}  {accel}  {r['image']}")

    _emit(args, [r.to_dict() for r in _backend(args).list_runtimes()], table)
    return 0


def _runtime_packages(args) -> int:
    from .backends.runtime_packages import probe

    backend = _backend(args)
    packages = backend.runtime_packages(args.packages) or probe(backend, args.packages)

    def table(rows):
        for row in rows:
            print(f"{row['name']:<40} {row['version']}")

    _emit(args, [{"name": k, "version": v} for k, v in sorted(packages.items())], table)
    return 0


def _show_defaults(args) -> int:
    from .job.defaults import UNSET, lab_settings_file

    data = _defaults().to_dict()
    rows = [
        {"name": k, "value": v, "source": data["sources"][k]} for k, v in data["defaults"].items()
    ]

    def table(rows):
        for row in rows:
            unset = row["value"] in (None, [])
            value = f"({UNSET[row['name']]})" if unset else json.dumps(row["value"])
            print(f"{row['name']:<16} {value:<32} {row['source']}")
        print(f"\nJupyterLab settings file: {lab_settings_file()}")

    _emit(args, rows, table)
    return 0


COMMANDS = {
    "compile": _compile,
    "run": _run,
    "jobs": _jobs,
    "status": _status,
    "logs": _logs,
    "delete": _delete,
    "outputs": _outputs,
    "events": _events,
    "runtimes": _runtimes,
    "defaults": _show_defaults,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KaleExtError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
