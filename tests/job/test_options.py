"""The one option table: JobOptions, the command-line flags and the REST schema come from it."""

import argparse

import jsonschema
import pytest
import yaml

from kale_ext.errors import ConfigError
from kale_ext.job import options
from kale_ext.job.options import OPTIONS, JobOptions, add_flags, from_args, json_schema


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(exit_on_error=False)
    add_flags(p)
    return p


def test_joboptions_has_a_field_per_option_and_nothing_else():
    from dataclasses import fields

    assert [f.name for f in fields(JobOptions)] == [o.name for o in OPTIONS]


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
    "data, field, message",
    [
        ({"nodes": 20000}, "nodes", "at most 1000"),
        ({"nodes": "2"}, "nodes", "whole number"),
        ({"packages": "numpy"}, "packages", "must be a list of strings"),
        ({"packages": [5]}, "packages[0]", "non-empty string"),
        ({"image": 5}, "image", "non-empty string"),
        ({"pip_index_urls": 5}, "pip_index_urls", "list of strings"),
        ({"env": ["A"]}, "env", "object of NAME: value"),
        ({"gpu": 1e30}, "gpu", "GPU count"),
        ({"colour": 1}, "options.colour", "unknown option"),
        ({"cpu": 0}, "cpu", "must be more than 0, got 0"),
        ({"cpu": "0m"}, "cpu", "must be more than 0, got 0m"),
        ({"pin_packages": "yes"}, "pin_packages", "must be true or false"),
        ({"queue": "team-a\n"}, "queue", "is not a Kueue LocalQueue name"),  # a whole match
        ({"queue": "q" * 64}, "queue", "at most 63 allowed"),
    ],
)
def test_rest_values_are_checked_by_the_same_table(data, field, message):
    with pytest.raises(ConfigError) as info:
        JobOptions.from_dict(data)
    assert info.value.field == field and message in str(info.value)


@pytest.mark.parametrize(
    "argv, chosen", [(["--pin-packages"], True), (["--no-pin-packages"], False)]
)
def test_an_onoff_option_is_a_flag_and_its_negation(argv, chosen):
    """Unset, the backend chooses; either flag is a choice the REST schema accepts."""
    assert from_args(parser().parse_args([])).get("pin_packages") is None
    assert from_args(parser().parse_args(argv)) == {"pin_packages": chosen}
    jsonschema.validate(from_args(parser().parse_args(argv)), json_schema())
    assert JobOptions.from_dict({"pin_packages": chosen}).pin_packages is chosen


def test_the_openapi_document_publishes_the_tables_schema():
    from pathlib import Path

    import kale_ext.server

    doc = yaml.safe_load((Path(kale_ext.server.__file__).with_name("openapi.yaml")).read_text())
    assert doc["components"]["schemas"]["JobOptions"] == json_schema()


def test_bounds_are_data_beside_their_option():
    assert options.BY_NAME["nodes"].maximum == options.MAX_NODES == 1000
    assert options.BY_NAME["procs_per_node"].maximum == 256
    assert json_schema()["properties"]["nodes"]["maximum"] == 1000
    assert options.BY_NAME["cpu"].above == options.BY_NAME["memory"].above == 0
    for value, valid in ((0, False), (0.5, True), (4097, False)):
        errors = list(jsonschema.Draft202012Validator(json_schema()).iter_errors({"cpu": value}))
        assert (not errors) is valid, value
