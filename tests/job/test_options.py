"""The one option table: JobOptions, the command-line flags and the REST schema come from it."""

import jsonschema
import pytest
import yaml

from kale_ext.errors import ConfigError
from kale_ext.job import options
from kale_ext.job.options import OPTIONS, JobOptions, json_schema


def test_joboptions_has_a_field_per_option_and_nothing_else():
    from dataclasses import fields

    assert [f.name for f in fields(JobOptions)] == [o.name for o in OPTIONS]


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
