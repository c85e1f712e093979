"""What a rerun takes, for every front end's parser (the CLI's ``rerun``, ``%kale_rerun``): the
job, a new name and parameter overrides. Kept apart from rerun.py so that building a parser
imports nothing heavy."""

from __future__ import annotations

import argparse


def add_rerun_arguments(parser: argparse.ArgumentParser) -> None:
    """The job to run again, ``--name`` (its new name) and ``--param NAME=VALUE`` overrides."""
    parser.add_argument("name", help="the job to run again")
    parser.add_argument("--name", dest="new_name", metavar="NAME", help="the new job's name")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter, typed as in the parameters cell (repeatable)",
    )
