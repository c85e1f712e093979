"""`compile` and `run`: a notebook into a module, a preview, or a job (which `--follow` follows:
follow.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import CompileError
from .common import (
    add_backend,
    add_job_options,
    backend_of,
    defaults,
    job_options,
    print_diagnostics,
    print_warnings,
)
from .follow import add_follow, submitted


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
    add_follow(r)
    r.add_argument(
        "--dry-run", action="store_true", help="show the effective settings and TrainJob only"
    )

    return {"compile": _compile, "run": _run}


def _compile(args) -> int:
    from ..backends.submit import prepare
    from ..compile.compiler import write_module
    from ..compile.packages import requirements
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

            backend = backend_of(args, preview=True)  # None: no cluster to ask, none needed
            preview = preview_job(backend, job, options, defaults(), args.notebook,
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
            # what the job installs (the options and pinning applied), where each came from
            result["package_sources"] = [p.to_dict() for p in preview.spec.packages]
            pinning = preview.spec.pinning
            result["pinning"] = {"on": pinning.on, "why": pinning.why} if pinning else None
        print(json.dumps(result, indent=2, default=repr))
        return 0
    from ..compile.codegen import parameters_text
    from ..terminal import printable

    params = parameters_text(job.parameters, job.required_parameters)
    print(printable(f"compiled {notebook} → {path}"))
    print(printable(f"  function   {job.function_name}({params})"))
    if preview is None:  # else the preview's summary says it (with the submit's packages)
        print(printable(f"  packages   {', '.join(requirements(job.packages)) or '(none)'}"))
        for package in job.packages:
            print(printable(f"             {package.requirement}: {package.origin()}"))
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

    options = job_options(args)
    where = {"notebook_path": args.notebook}  # a relative --workspace: from the current folder
    if args.dry_run:
        shown = preview(backend_of(args, preview=True), Path(args.notebook), options, defaults(),
                        **where)  # fmt: skip
        _print_preview(shown)
        print(shown.yaml)
        return 0
    backend = backend_of(args)
    job = submit(backend, Path(args.notebook), options, defaults(), **where)
    shape = f": {job.spec.shape}"
    return submitted(args, backend, job, shape)
