"""What a rerun takes, for every front end's parser (the CLI's ``rerun``, ``%kale_rerun``): the
job, a new name and parameter overrides; a resume (``resume``, ``%kale_resume``) a node count
too. Kept apart from rerun.py so that building a parser imports nothing heavy."""

from __future__ import annotations

import argparse


def add_rerun_arguments(parser: argparse.ArgumentParser, job: str = "the job to run again") -> None:
    """The job to run again, ``--name`` (its new name) and ``--param NAME=VALUE`` overrides."""
    parser.add_argument("name", help=job)
    parser.add_argument("--name", dest="new_name", metavar="NAME", help="the new job's name")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter, typed as in the parameters cell (repeatable)",
    )


def add_resume_arguments(parser: argparse.ArgumentParser) -> None:
    """A rerun's arguments, and ``--nodes N`` (checked against the option's bounds)."""
    add_rerun_arguments(parser, "the job to resume (Stopped, Failed or Complete)")
    parser.add_argument("--nodes", type=int, metavar="N",
                        help="the new job's node count (default: the job's)")  # fmt: skip
