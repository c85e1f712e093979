"""A site's limits on the job options: checked when set, applied by every check of the option
table and by its JSON schema, named in the refusal; read from the server configuration files by
the CLI and the magics (defaults.load)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job import defaults, limits, limits_held
from kale_ext.job.options import BY_NAME, JobOptions, check, json_schema
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook

SITE = " (the limit set in the server configuration)"


@pytest.fixture(autouse=True)
def no_limits_after():
    yield
    limits_held.release()


BAD = [
    ("nope", 1, "option_limits.nope", "not an option with a bound (those are: checkpoints, cpu, "),
    ("config", 1, "option_limits.config", "not an option with a bound"),
    ("nodes", "8", "option_limits.nodes", "must be a whole number, not '8'"),
    ("nodes", True, "option_limits.nodes", "must be a whole number, not True"),
    ("nodes", 0, "option_limits.nodes", "must be between 1 and 1000 (the built-in bound), got 0"),
    ("nodes", 5000, "option_limits.nodes", "between 1 and 1000 (the built-in bound), got 5000"),
    ("name", 0, "option_limits.name", "must be between 1 and 63"),
    ("packages", -1, "option_limits.packages", "must be between 0 and 200"),
]


@pytest.mark.parametrize("name, value, field, says", BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
def test_a_bad_limit_names_its_entry_and_changes_nothing(name, value, field, says):
    limits.configure({"nodes": 8})
    with pytest.raises(ConfigError) as info:
        limits.configure({name: value})
    assert info.value.field == field and says in info.value.message, info.value
    assert "set in the server configuration" in info.value.message
    assert limits_held.current() == {"nodes": 8}


def test_limits_must_be_an_object():
    with pytest.raises(ConfigError, match="must be an object of option: maximum"):
        limits.configure([("nodes", 8)])


REFUSED = [
    # (option, value, field, message)
    ("nodes", 9, "nodes", f"must be at most 8{SITE}, got 9"),
    ("gpu", 3, "gpu", f"must be at most 2{SITE}, got 3"),
    ("procs_per_node", 5, "procs_per_node", f"must be at most 4{SITE}, got 5"),
    ("packages", ["a", "b"], "packages", f"has 2 entries; at most 1 allowed{SITE}"),
    ("env", {"A": "1", "B": "2"}, "env", f"has 2 entries; at most 1 allowed{SITE}"),
    ("name", "a" * 21, "name", f"is 21 characters; at most 20 allowed{SITE}"),
]
LIMITS = {"nodes": 8, "gpu": 2, "procs_per_node": 4, "packages": 1, "env": 1, "name": 20}


@pytest.mark.parametrize("option, value, field, says", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_choice_beyond_a_limit_is_refused_naming_it(option, value, field, says):
    limits.configure(LIMITS)
    with pytest.raises(ConfigError) as info:
        JobOptions.from_dict({option: value})
    assert (info.value.field, info.value.message) == (field, says)


def test_a_choice_within_the_limits_passes_and_list_items_keep_their_own_bounds():
    limits.configure(LIMITS)
    chosen = JobOptions.from_dict({"nodes": 8, "gpu": 2, "packages": ["x" * 100], "name": "a"})
    assert (chosen.nodes, chosen.gpu, chosen.packages) == (8, 2, ["x" * 100])


def test_without_limits_the_built_in_bounds_hold_and_say_nothing_more():
    with pytest.raises(ConfigError) as info:
        check(BY_NAME["nodes"], 1001)
    assert info.value.message == "must be at most 1000, got 1001"


def test_the_schema_shows_the_limits_in_force():
    before = json_schema()
    limits.configure(LIMITS)
    props = json_schema()["properties"]
    assert props["nodes"]["maximum"] == 8 and props["packages"]["maxItems"] == 1
    assert props["gpu"]["oneOf"][0]["maximum"] == 2 and props["name"]["maxLength"] == 20
    assert props["image"]["maxLength"] == 512  # not limited: the table's
    limits_held.release()
    assert json_schema() == before


def test_a_notebooks_own_nodes_are_held_to_the_limit():
    limits.configure({"nodes": 2})
    nb = notebook("print(1)")
    nb["metadata"]["kale_ext"] = {"options": {"nodes": 3}}
    job = compile_notebook(nb)
    with pytest.raises(ConfigError) as info:
        build_job_spec(job)
    assert info.value.field == "metadata.kale_ext.options.nodes"
    assert info.value.message == f"must be at most 2{SITE}, got 3"


def test_the_servers_own_limits_stand_in_its_process():
    limits.configure({"nodes": 8}, by_server=True)
    limits.configure({})  # what an export in the server's process reads from the files
    assert limits_held.current() == {"nodes": 8}
    limits_held.release()
    limits.configure({"nodes": 3})
    assert limits_held.current() == {"nodes": 3}


def server_config(values: dict) -> Path:
    path = Path(os.environ["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"KaleExtApp": values}))
    return path


def test_loading_the_defaults_from_the_files_brings_the_sites_limits():
    server_config({"option_limits": {"nodes": 4}, "memory": "1Gi"})
    assert defaults.load().memory == "1Gi"
    assert limits_held.current() == {"nodes": 4}
    server_config({"memory": "1Gi"})  # taken out of the file: no limit any more
    defaults.load()
    assert limits_held.current() == {}


def test_a_bad_limit_in_the_files_is_an_error_or_passed_over():
    server_config({"option_limits": {"nodes": "many"}, "memory": "1Gi"})
    with pytest.raises(ConfigError) as info:
        defaults.load()
    assert info.value.field == "option_limits.nodes"
    loaded = defaults.load(strict=False)  # the panel's way: the rest of the settings stand
    assert loaded.memory == "1Gi" and limits_held.current() == {}
