"""The `kale-ext` command line. It never imports jupyter_server or the Kubeflow SDK eagerly."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import CompileError, Diagnostic, KaleExtError

EXAMPLES = """examples:
  kale-ext compile examples/digits_ddp.ipynb
  kale-ext compile notebook.ipynb -o build --json
  kale-ext compile notebook.ipynb --function train --package 'numpy>=2'
"""


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
    c.add_argument(
        "--package",
        action="append",
        default=[],
        metavar="SPEC",
        help="a package to install in the job, overriding the detected pin (repeatable)",
    )
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _print_diagnostics(diags: list[Diagnostic], stream) -> None:
    for d in diags:
        print(f"{d.severity}: {d}", file=stream)


def _compile(args) -> int:
    from .compiler import compile_notebook, write_module

    notebook = Path(args.notebook)
    try:
        job = compile_notebook(notebook, function_name=args.function, packages=args.package)
        out_dir = Path(args.output_dir) if args.output_dir else notebook.parent / ".kale_ext"
        path = write_module(job, out_dir)
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
        print(json.dumps({**job.to_dict(), "module_path": str(path)}, indent=2, default=repr))
        return 0
    params = ", ".join(f"{k}={v!r}" for k, v in job.parameters.items())
    print(f"compiled {notebook} → {path}")
    print(f"  function   {job.function_name}({params})")
    print(f"  packages   {', '.join(job.packages) or '(none)'}")
    if job.pip_index_urls:
        print(f"  indexes    {', '.join(job.pip_index_urls)}")
    if job.settings:
        print(f"  settings   {json.dumps(job.settings, sort_keys=True)}")
    _print_diagnostics(job.warnings, sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "compile":
            return _compile(args)
    except KaleExtError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
