"""The job options' command-line flags, on a CLI command or a magic: made from the one option
table (options.py), each value checked as the REST API checks it."""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..errors import ConfigError
from .options import OPTIONS, Option, _requirements, check


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=VALUE")
    return key.strip(), value


def _flag_type(option: Option):
    """argparse's type for one value of ``option`` (checked as the REST API checks it)."""
    if option.kind in ("pairs", "params"):
        return _pair

    def parse(text: str):
        value: Any = text
        if option.kind in ("count", "gpu") and re.fullmatch(r"\s*[+-]?\d{1,18}\s*", text):
            value = int(text)
        try:
            one = Option(option.name, "text", "", pattern=option.pattern, maximum=None)
            if option.kind == "requirements":
                return _requirements(option, [value], option.flag)[0]
            return check(one if option.kind == "texts" else option, value, option.flag)
        except ConfigError as e:
            raise argparse.ArgumentTypeError(e.message) from None

    return parse


def add_flags(parser: argparse.ArgumentParser, title: str | None = None) -> None:
    """The job options' flags, on a CLI command or a magic (MagicArgumentParser is argparse)."""
    group = parser.add_argument_group(title) if title else parser
    for o in OPTIONS:
        if o.flag is None:
            continue
        if o.kind == "switch":
            group.add_argument(o.flag, dest=o.dest, action="store_const", const=True,
                               default=None, help=o.help)  # fmt: skip
        elif o.kind == "onoff":
            group.add_argument(o.flag, dest=o.dest, action=argparse.BooleanOptionalAction,
                               default=None, help=o.help)  # fmt: skip
        elif o.kind in ("texts", "requirements", "pairs", "params"):
            group.add_argument(o.flag, dest=o.dest, type=_flag_type(o), action="append",
                               default=None, metavar=o.metavar, help=o.help)  # fmt: skip
        else:
            group.add_argument(o.flag, dest=o.dest, type=_flag_type(o), metavar=o.metavar,
                               help=o.help)  # fmt: skip


def from_args(args: argparse.Namespace) -> dict:
    """The options a command line chose, as the REST API's JSON object (unchosen left out).
    ``--param`` values stay text: the job's parameters type them (arguments.py)."""
    chosen: dict = {}
    for o in OPTIONS:
        value = getattr(args, o.dest, None)
        if value is None:
            continue
        chosen[o.name] = dict(value) if o.kind in ("pairs", "params") else value
    return chosen
