"""The `kale-ext` command line. It never imports jupyter_server or the Kubeflow SDK eagerly."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from ..errors import KaleExtError

EXAMPLES = """examples:
  kale-ext compile examples/digits_ddp.ipynb
  kale-ext compile notebook.ipynb -o build --json
  kale-ext compile notebook.ipynb --function train --package 'numpy>=2'
  kale-ext compile notebook.ipynb --trainjob --nodes 2 --gpu 1 --cpu 4 --memory 16Gi
  kale-ext run examples/digits_ddp.ipynb --nodes 2 --follow
  kale-ext jobs --status failed
  kale-ext status digits-ddp-x1y2z
  kale-ext logs digits-ddp-x1y2z -f --node 1
  kale-ext stop digits-ddp-x1y2z
  kale-ext rerun digits-ddp-x1y2z --param epochs=4
  kale-ext resume digits-ddp-x1y2z --nodes 1 --follow
  kale-ext delete digits-ddp-x1y2z
  kale-ext prune --older-than 7d --status complete,failed --dry-run
  kale-ext diff digits-ddp-x1y2z digits-ddp-a3b4c
  kale-ext sweep nb.ipynb --param lr=1e-3,1e-2 --param batch=32,64 --parallel 2
  kale-ext defaults -o json

Defaults (backend, namespace, runtime, image, pip index URLs, nodes, CPU, memory, GPUs) are
the same as the JupyterLab panel's: see `kale-ext defaults`.
"""


class Parser(argparse.ArgumentParser):
    """argparse's parser (its commands' too) whose usage error is the one line that matters
    and where the help is, not the usage block above it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\nsee `{self.prog} --help`\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The parser of every command, and each command's handler by name."""
    from . import actions, diff, jobs, prune, run, settings, sweep

    parser = Parser(
        prog="kale-ext",
        description="Turn a tagged Jupyter notebook into a distributed training job.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = {
        **run.register(sub, EXAMPLES),
        **jobs.register(sub),
        **actions.register(sub),
        **prune.register(sub),
        **settings.register(sub),
        **sweep.register(sub),
        **diff.register(sub),
    }
    return parser, commands


#: The exit code of a command whose reader went away (`kale-ext logs NAME | head`): a shell's
#: for a process ended by SIGPIPE.
CLOSED_PIPE = 128 + 13


def main(argv: list[str] | None = None) -> int:
    from .common import defaults, say_log_warnings

    defaults.cache_clear()  # read once a command: a second main() in one process reads them anew
    say_log_warnings()
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    try:
        code = commands[args.command](args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return _closed_pipe()
    except KaleExtError as e:
        from ..terminal import printable_lines

        print(f"error: {printable_lines(e)}", file=sys.stderr)  # it may quote a job's text
        return 1
    except KeyboardInterrupt:
        return 130


def _closed_pipe() -> int:
    """The reader left: stop quietly. What Python still holds for stdout goes nowhere (its
    flush at exit would print an `Exception ignored` message and change the exit code)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return CLOSED_PIPE
