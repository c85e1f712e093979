"""The job options' flags (kale_ext/job/option_flags.py): made from the one table, checked as the
REST API checks, giving the REST API's JSON."""

import argparse

import jsonschema
import pytest

from kale_ext.job.option_flags import add_flags, from_args
from kale_ext.job.options import JobOptions, json_schema


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(exit_on_error=False)
    add_flags(p)
    return p


def test_flags_give_the_rest_apis_json():
    args = parser().parse_args(
        ["--nodes", "2", "--gpu", "0", "--cpu", "500m", "--param", "lr=0.1", "--param", "debug=False",
         "--package", "numpy>=2", "--env", "A=b=c", "--pip-index-url", "https://x.example/simple",
         "--queue", "team-a"]
    )  # fmt: skip
    assert from_args(args) == {
        "nodes": 2,
        "gpu": 0,  # 0 is a choice, not "unset"
        "cpu": "500m",
        "parameters": {"lr": "0.1", "debug": "False"},  # typed later, by the notebook
        "packages": ["numpy>=2"],
        "env": {"A": "b=c"},
        "pip_index_urls": ["https://x.example/simple"],
        "queue": "team-a",
    }
    # what the flags chose is what the REST schema accepts
    jsonschema.validate(from_args(args), json_schema())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--nodes", "0"], "must be at least 1, got 0"),
        (["--nodes", "1001"], "must be at most 1000, got 1001"),
        (["--procs-per-node", "257"], "must be at most 256"),
        (["--max-restarts", "21"], "argument --max-restarts: must be at most 20, got 21"),
        (["--max-restarts", "-1"], "must be at least 0, got -1"),
        (["--gpu", "lots"], "must be a GPU count or a MIG profile"),
        (["--package", "-e /etc"], "'-e /etc' is a pip option, not a package"),
        (["--package=--index-url=http://x"], "is a pip option"),
        (["--package", "bad pkg!"], "is not a package requirement"),
        (["--pip-index-url", "ftp://x"], "is not an http(s) URL"),
        (["--param", "lr"], "'lr': write NAME=VALUE"),
        (["--memory", "lots"], "is not a Kubernetes quantity"),
        (["--cpu", "0"], "argument --cpu: must be more than 0, got 0"),
        (["--memory", "0Gi"], "argument --memory: must be more than 0, got 0Gi"),
        (["--queue", "Team_A"], "'Team_A' is not a Kueue LocalQueue name"),
    ],
)
def test_a_bad_flag_says_why(argv, message):
    with pytest.raises(argparse.ArgumentError) as info:
        parser().parse_args(argv)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "argv, chosen", [(["--pin-packages"], True), (["--no-pin-packages"], False)]
)
def test_an_onoff_option_is_a_flag_and_its_negation(argv, chosen):
    """Unset, the backend chooses; either flag is a choice the REST schema accepts."""
    assert from_args(parser().parse_args([])).get("pin_packages") is None
    assert from_args(parser().parse_args(argv)) == {"pin_packages": chosen}
    jsonschema.validate(from_args(parser().parse_args(argv)), json_schema())
    assert JobOptions.from_dict({"pin_packages": chosen}).pin_packages is chosen
