"""What the commands share: the backend and defaults a command uses, job option flags, output
formats."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys

from ..errors import Diagnostic


def add_job_options(p: argparse.ArgumentParser) -> None:
    """Submit-time choices (kale_ext/job/options.py), shared by `compile --trainjob`, `run`, and
    the magics."""
    from ..job.option_flags import add_flags

    add_flags(p, "job options (override the notebook's settings and the defaults)")


def job_options(args) -> dict:
    from ..job.option_flags import from_args

    return from_args(args)


def add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--output", choices=("table", "json", "yaml"), default="table", help="output format"
    )


def emit(args, rows: list[dict], table) -> None:
    """Print listing ``rows`` as JSON, YAML, or with the ``table`` printer."""
    if args.output == "json":
        print(json.dumps(rows, indent=2))
    elif args.output == "yaml":
        import yaml

        print(yaml.safe_dump(rows, sort_keys=False, allow_unicode=True), end="")
    else:
        table(rows)


def document(output: str, data) -> str:
    """``data`` as one JSON line (``json``) or one YAML document (``yaml``): what a followed
    listing prints at each change, so `-f -o json` stays machine-readable (JSON Lines)."""
    if output == "json":
        return json.dumps(data)
    import yaml

    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip("\n")


def add_backend(p: argparse.ArgumentParser) -> None:
    from ..job.defaults import BACKENDS

    p.add_argument(
        "--backend",
        choices=BACKENDS,
        help="where jobs run (default: KALE_EXT_BACKEND, else the defaults' backend; `auto`: "
        "kubernetes when a cluster is configured, else local)",
    )
    p.add_argument(
        "--allow-cpu-for-gpu",
        action="store_true",
        help="local backend: run a job that asks for GPUs on the CPU when this machine has none",
    )


@functools.cache
def defaults():
    """The defaults the panel and the magics use too (kale_ext.defaults), read once a command."""
    from ..job.defaults import load

    return load()


def backend_of(args, preview: bool = False):
    """The backend the arguments choose; for a ``preview`` (which needs no cluster), None when it
    has no cluster to ask (choose.preview_backend)."""
    from ..backends.choose import choose_backend, preview_backend

    allow = getattr(args, "allow_cpu_for_gpu", False) or None  # None: the backend's default
    if preview:
        return preview_backend(args.backend, defaults(), allow_cpu_for_gpu=allow)
    chosen, _ = choose_backend(args.backend, defaults(), allow_cpu_for_gpu=allow)
    return chosen


def print_diagnostics(diags: list[Diagnostic], stream) -> None:
    from ..terminal import printable_lines

    for d in diags:  # a diagnostic may quote the notebook's source
        print(printable_lines(f"{d.severity}: {d}"), file=stream)


def print_warnings(warnings, stream) -> None:
    """A submit's warnings (they may quote the notebook or a record), one a line."""
    from ..terminal import printable_lines

    for warning in warnings:
        print(printable_lines(f"warning: {warning}"), file=stream)


class _SaidAsTheCliSays(logging.Handler):
    """kale_ext's own log records of WARNING and above (a cleanup that failed, a runtime
    skipped), said as the command says its warnings: `warning: ...` on standard error."""

    def __init__(self):
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        from ..terminal import printable_lines

        try:
            text = printable_lines(f"{record.levelname.lower()}: {record.getMessage()}")
            print(text, file=sys.stderr)  # the stream of now (a test may have redirected it)
        except Exception:
            self.handleError(record)


def say_log_warnings() -> None:
    """Show kale_ext's log warnings the CLI's way, not bare through Python's last-resort
    handler (once a process, however many commands it runs)."""
    logger = logging.getLogger("kale_ext")
    if not any(isinstance(h, _SaidAsTheCliSays) for h in logger.handlers):
        logger.addHandler(_SaidAsTheCliSays())
