"""The rerun arguments every front end's parser takes, read the same way."""

from __future__ import annotations

import argparse

import pytest

from kale_ext.runs.rerun_flags import add_rerun_arguments


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rerun", exit_on_error=False)
    add_rerun_arguments(p)
    return p


def test_the_job_a_new_name_and_repeated_overrides():
    args = parser().parse_args(["old", "--name", "new", "--param", "a=1", "--param", "b=x"])
    assert (args.name, args.new_name, args.param) == ("old", "new", ["a=1", "b=x"])


def test_only_the_job_is_required():
    args = parser().parse_args(["old"])
    assert (args.new_name, args.param) == (None, [])
    with pytest.raises(SystemExit):
        parser().parse_args([])


def test_a_resume_takes_a_node_count_too():
    from kale_ext.runs.rerun_flags import add_resume_arguments

    p = argparse.ArgumentParser(prog="resume", exit_on_error=False)
    add_resume_arguments(p)
    args = p.parse_args(["old", "--nodes", "1", "--param", "a=1"])
    assert (args.name, args.new_name, args.nodes, args.param) == ("old", None, 1, ["a=1"])
    assert p.parse_args(["old"]).nodes is None
