"""What the magics say to a user: their options read as a shell would, kale_ext's errors as one
clear message (IPython's UsageError: no traceback)."""

from __future__ import annotations

import argparse
import contextlib
import shlex

from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicArgumentParser

from ..errors import CompileError, KaleExtError


def add_backend_flag(p: argparse.ArgumentParser) -> None:
    from ..job.defaults import BACKENDS

    p.add_argument(
        "--backend",
        choices=BACKENDS,
        help="where jobs run (default: KALE_EXT_BACKEND, else the defaults' backend; `auto`: "
        "kubernetes when a cluster is configured, else local)",
    )


def parse(parser: MagicArgumentParser, line: str):
    try:
        return parser.parse_args(shlex.split(line))  # quotes as in a shell, like the CLI's
    except ValueError as e:  # shlex: an unclosed quote
        raise UsageError(f"{parser.prog}: cannot read the options: {e}") from None
    except UsageError as e:
        raise UsageError(f"{parser.prog}: {e} (see {parser.prog}?)") from None


@contextlib.contextmanager
def user_errors(prog: str):
    """Turn kale_ext's errors into one clear message (UsageError: no traceback)."""
    try:
        yield
    except UsageError as e:
        if str(e).startswith(prog):
            raise
        raise UsageError(f"{prog}: {e}") from None
    except CompileError as e:
        raise UsageError(compile_message(prog, e.errors, lambda d: str(d))) from None
    except KaleExtError as e:
        raise UsageError(f"{prog}: {e}") from None


def compile_message(prog: str, errors, describe) -> str:
    if len(errors) == 1:
        return f"{prog}: cannot compile: {describe(errors[0])}"
    return f"{prog}: cannot compile ({len(errors)} errors):\n" + "\n".join(
        f"  {describe(d)}" for d in errors
    )
