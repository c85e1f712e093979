"""REST API against a real Jupyter server: compile, runtimes, backend, tags and every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PLAIN = {"path": "plain_python.ipynb"}


def simple_nb(*extra_cells, **metadata) -> dict:
    nb = notebook(("x = 2", ["parameters"]), "print(x * 21)", *extra_cells)
    nb["metadata"].update(metadata)
    return nb


# -- compile --


async def test_compile_by_path(api, root):
    r = await api.post("compile", PLAIN)
    assert r.status == 200, r.text
    data = r.json
    assert data["ok"] is True and data["errors"] == []
    assert data["function_name"] == "plain_python"
    assert data["parameters"]["steps"] == 400
    assert "def plain_python(" in data["source"]
    assert (data["runtime"], data["nodes"], data["procs_per_node"]) == ("torch-distributed", 1, 1)
    assert data["shape"] == "1 node × 1 process"
    assert data["procs_why"] == "the runtime's choice: 1, no CPUs or GPUs stated per node"
    trainjob = yaml.safe_load(data["trainjob_yaml"])
    assert "numProcPerNode" not in trainjob["spec"]["trainer"]  # the runtime chooses, as the SDK
    assert trainjob["kind"] == "TrainJob"
    assert trainjob["metadata"]["name"] == data["job_name"]
    # the provenance names the notebook by its path under the root, never a machine path
    assert trainjob["metadata"]["annotations"]["kale-ext.io/notebook"] == "plain_python.ipynb"
    assert str(root) not in data["trainjob_yaml"]


async def test_compile_by_json_with_options(api, root):
    options = {
        "nodes": 2,
        "procs_per_node": 1,
        "parameters": {"x": 5},
        "cpu": "2",
        "memory": "4Gi",
        "env": {"MODE": "fast"},
        "name": "my-job",
    }
    r = await api.post("compile", {"notebook": simple_nb(), "options": options})
    data = r.json
    assert r.status == 200 and data["ok"], data["errors"]
    assert data["function_name"] == "notebook"
    assert (data["nodes"], data["job_name"]) == (2, "my-job")
    assert data["config"]["limits"] == {"cpu": "2", "memory": "4Gi"}
    assert (data["shape"], data["procs_why"]) == ("2 nodes × 1 process", "asked")  # not 2 CPUs
    assert yaml.safe_load(data["trainjob_yaml"])["spec"]["trainer"]["numProcPerNode"] == 1
    assert data["local_resources"]["cpu"].startswith("2 cores per node")  # what Local does
    assert data["local_resources"]["memory"].startswith("4Gi per node: a node over it is stopped")
    assert data["config"]["env"] == [{"name": "MODE", "value": "fast"}]
    trainjob = yaml.safe_load(data["trainjob_yaml"])
    assert trainjob["spec"]["trainer"]["numNodes"] == 2
    assert json.loads(trainjob["spec"]["trainer"]["command"][3])["args"] == {"x": 5}
    assert str(root) not in data["trainjob_yaml"]


async def test_parameters_are_typed_by_the_parameters_cell(api):
    """The panel and any REST client may send a parameter as text: the server types it."""
    nb = notebook(
        ("debug = False\nlr = 0.1\nepochs = 3", ["parameters"]), "print(debug, lr, epochs)"
    )
    options = {"parameters": {"debug": "True", "lr": "1e-3", "epochs": 5}}
    data = (await api.post("compile", {"notebook": nb, "options": options})).json
    assert data["ok"], data["errors"]
    args = json.loads(yaml.safe_load(data["trainjob_yaml"])["spec"]["trainer"]["command"][3])[
        "args"
    ]
    assert args == {"debug": True, "lr": 0.001, "epochs": 5}
    bad = (
        await api.post("compile", {"notebook": nb, "options": {"parameters": {"epochs": "abc"}}})
    ).json
    [error] = bad["errors"]
    assert error["field"] == "parameters.epochs"
    assert error["message"].endswith(
        "expects an int (a whole number) like its default 3, not 'abc'"
    )
    r = await api.post("jobs", {"notebook": nb, "options": {"parameters": {"epochs": "abc"}}})
    assert r.status == 400 and r.json["field"] == "parameters.epochs"


async def test_unsaved_content_with_its_path_names_the_job(api, root):
    r = await api.post("compile", {"notebook": simple_nb(), "path": "work/my_run.ipynb"})
    data = r.json
    assert r.status == 200 and data["ok"], data["errors"]
    assert data["function_name"] == "my_run" and data["job_name"].startswith("my-run-")
    notes = yaml.safe_load(data["trainjob_yaml"])["metadata"]["annotations"]
    assert notes["kale-ext.io/notebook"] == "work/my_run.ipynb"


async def test_jupyterlab_cache_buster_query_is_accepted(api):
    r = await api.get("runtimes", params={"1700000000000": ""})
    assert r.status == 200, r.text


async def test_compile_in_a_subdirectory_uses_the_relative_path(api, root):
    (root / "sub dir").mkdir()
    (root / "sub dir" / "nb.ipynb").write_text(json.dumps(simple_nb()))
    r = await api.post("compile", {"path": "sub dir/nb.ipynb"})
    assert r.json["ok"], r.json["errors"]
    annotations = yaml.safe_load(r.json["trainjob_yaml"])["metadata"]["annotations"]
    assert annotations["kale-ext.io/notebook"] == "sub dir/nb.ipynb"


async def test_notebook_metadata_options_apply(api):
    nb = simple_nb(kale_ext={"options": {"nodes": 3}, "config": {"labels": {"team": "ml"}}})
    data = (await api.post("compile", {"notebook": nb})).json
    assert data["ok"] and data["nodes"] == 3 and data["config"]["labels"] == {"team": "ml"}


@pytest.mark.parametrize(
    ("body", "code", "cell", "field"),
    [
        ({"notebook": notebook("x = (")}, "syntax-error", 0, None),
        ({"notebook": notebook(("a = 1", ["parameters"]), "print(a)", "print(b)")}, None, 2, None),
        ({"notebook": {"cells": []}}, "notebook", None, None),
        ({"notebook": simple_nb(), "options": {"nodes": 0}}, "config", None, "nodes"),
        ({"notebook": simple_nb(), "options": {"runtime": "nope"}}, "config", None, "runtime"),
        ({"notebook": simple_nb(), "options": {"bogus": 1}}, "config", None, "options.bogus"),
        (
            {"notebook": simple_nb(), "options": {"parameters": {"y": 1}}},
            "config",
            None,
            "parameters.y",
        ),
        ({"notebook": simple_nb(), "options": {"name": "Bad_Name"}}, "config", None, "name"),
    ],
    ids=[
        "syntax",
        "undefined-name",
        "not-a-notebook",
        "nodes",
        "runtime",
        "unknown-option",
        "parameter",
        "name",
    ],
)
async def test_compile_and_config_errors_are_results(api, body, code, cell, field):
    r = await api.post("compile", body)
    assert r.status == 200, r.text
    data = r.json
    assert data["ok"] is False and data["errors"]
    error = data["errors"][0]
    assert set(error) >= {"severity", "message", "cell", "cell_id", "line", "code"}
    assert error["severity"] == "error" and error["message"]
    assert error["cell"] == cell
    if code:
        assert error["code"] == code
    if field:
        assert error["field"] == field
    assert data["trainjob_yaml"] is None


async def test_compile_error_names_cell_and_line(api):
    nb = notebook("import math", "y = 1\nprint(undefined_name)")
    error = (await api.post("compile", {"notebook": nb})).json["errors"][0]
    assert (error["cell"], error["cell_id"], error["line"]) == (1, "c1", 2)
    assert "undefined_name" in error["message"]


# -- submit errors (real submits are in test_server_jobs.py) --


async def test_submit_compile_error_is_422(api):
    r = await api.post("jobs", {"notebook": notebook("x = (")})
    assert r.status == 422
    data = r.json
    assert "does not compile" in data["message"] and data["errors"][0]["cell"] == 0


async def test_submit_config_error_is_400_naming_the_field(api):
    r = await api.post("jobs", {"notebook": simple_nb(), "options": {"nodes": -1}})
    assert r.status == 400
    assert r.json["field"] == "nodes" and r.json["errors"][0]["field"] == "nodes"


async def test_submit_unreadable_notebook_is_422(api, root):
    (root / "broken.ipynb").write_text("{not json")
    r = await api.post("jobs", {"path": "broken.ipynb"})
    assert r.status == 422 and "not valid notebook JSON" in r.json["message"]
    assert str(root) not in r.text


# -- runtimes, backend, tags --


async def test_runtimes(api):
    data = (await api.get("runtimes")).json
    names = [r["name"] for r in data["runtimes"]]
    assert "torch-distributed" in names
    assert set(data["runtimes"][0]) == {
        "name", "framework", "kind", "image", "num_nodes", "accelerators", "initializers"
    }  # fmt: skip
    one = await api.get("runtimes/torch-distributed")
    assert one.status == 200 and one.json["framework"] == "torch"
    missing = await api.get("runtimes/no-such-runtime")
    assert missing.status == 404 and "no-such-runtime" in missing.json["message"]
    invalid = await api.get("runtimes/Not_Valid")
    assert invalid.status == 400


async def test_queues_on_the_local_backend_are_none_and_say_why(api):
    data = (await api.get("queues")).json
    assert data == {"queues": [], "reason": "the local backend has no queues: Kueue's "
                    "LocalQueues are on a cluster"}  # fmt: skip


async def test_backend(api):
    data = (await api.get("backend")).json
    assert data == {"name": "local", "reason": "set in the server configuration", "namespace": None}


async def test_tags(api):
    tags = {t["tag"]: t for t in (await api.get("tags")).json["tags"]}
    assert tags["imports"]["role"] == "imports" and tags["imports"]["help"]
    assert tags["step:<name>"]["role"] == "training"
    assert tags["limit:<key>:<value>"]["setting"] == "limits"
    assert tags["prev:<name>"]["effect"] == "ignored"
    assert all({"tag", "role", "help"} <= set(t) for t in tags.values())


# -- bad input: every one is a JSON error that says what is wrong --

BIG = 50 * 1024 * 1024


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (None, 400, "needs a JSON object body"),
        ("{not json", 400, "not valid JSON"),
        (b"\xff\xfe{}", 400, "not valid JSON"),
        ("[1, 2]", 400, "must be a JSON object, not an array"),
        ("[" * 100_000, 400, "not valid JSON"),
        ({"path": "plain_python.ipynb", "extra": 1}, 400, "unknown field 'extra'"),
        ({}, 400, "give either path"),
        ({"path": "../x.ipynb", "notebook": {}}, 403, "outside the server root"),
        ({"notebook": "text"}, 400, "notebook must be the notebook's JSON object"),
        ({"path": 3}, 400, "path must be a non-empty string"),
        ({"path": ""}, 400, "path must be a non-empty string"),
        ({"path": "plain_python.ipynb", "options": []}, 400, "options must be an object"),
        ({"path": "../../etc/passwd"}, 403, "outside the server root"),
        ({"path": "sub/../../x.ipynb"}, 403, "outside the server root"),
        ({"path": "/etc/passwd"}, 400, "must be relative to the server root"),
        ({"path": "~/nb.ipynb"}, 400, "must be relative to the server root"),
        ({"path": "missing.ipynb"}, 404, "notebook not found: missing.ipynb"),
        ({"path": "escape.ipynb"}, 403, "outside the server root"),
        ({"path": "escape-dir/nb.ipynb"}, 403, "outside the server root"),
        ({"path": ".hidden/nb.ipynb"}, 403, "hidden"),
        ({"path": "folder"}, 400, "is a directory"),
        ({"path": "notes.txt"}, 400, "not a notebook"),
        ("x" * BIG, 413, "the limit is"),
    ],
    ids=[
        "no-body", "invalid-json", "not-utf8", "array", "too-deep", "unknown-field", "neither",
        "both", "notebook-not-object", "path-not-string", "path-empty", "options-not-object",
        "traversal", "traversal-inside", "absolute", "home", "missing", "symlink-file",
        "symlink-dir", "hidden", "directory", "not-ipynb", "50MB",
    ],
)  # fmt: skip
@pytest.mark.parametrize("endpoint", ["compile", "jobs"])
async def test_bad_bodies(api, root, tmp_path, endpoint, body, status, says):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "nb.ipynb").write_text(json.dumps(simple_nb()))
    (root / "escape.ipynb").symlink_to(outside / "nb.ipynb")
    (root / "escape-dir").symlink_to(outside)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "nb.ipynb").write_text(json.dumps(simple_nb()))
    (root / "folder").mkdir()
    (root / "notes.txt").write_text("hello")
    r = await api.post(endpoint, body, request_timeout=120)
    assert r.status == status, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    data = r.json
    assert says in data["message"], data
    assert data["status"] == status
    assert "Traceback" not in r.text and str(outside) not in r.text
    jobs = tmp_path / "jobs"
    assert not jobs.exists() or not any(jobs.iterdir())  # nothing was submitted


async def test_large_body_is_refused_before_it_is_read(api):
    """With `Expect: 100-continue` the client learns of the 413 before sending 50 MB."""
    r = await api.post("compile", "x" * BIG, expect_100_continue=True, request_timeout=60)
    assert r.status == 413 and "the limit is 8388608 bytes" in r.json["message"]


async def test_a_body_within_the_limit_is_parsed_off_the_event_loop(api):
    big = simple_nb(*[f"print({i})" for i in range(3000)])  # ~ 700 KB of JSON
    r = await api.post("compile", {"notebook": big})
    assert r.status == 200 and r.json["ok"], r.json["errors"][:1]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "runtimes"),
        ("GET", "runtimes/torch-distributed"),
        ("GET", "queues"),
        ("GET", "jobs"),
        ("GET", "jobs/some-job"),
        ("GET", "jobs/some-job/events"),
        ("GET", "jobs/some-job/logs"),
        ("GET", "backend"),
        ("GET", "tags"),
        ("POST", "compile"),
        ("POST", "jobs"),
        ("DELETE", "jobs/some-job"),
    ],
)
async def test_unknown_query_parameters_are_400(api, method, path):
    body = PLAIN if method == "POST" else None
    r = await api.request(method, path, body, params={"bogus": "1"})
    assert r.status == 400
    assert r.json["message"].startswith("unknown query parameter 'bogus'")
    assert r.json["field"] == "bogus"


async def test_unknown_endpoint_and_method_are_json(api):
    r = await api.get("nowhere/at/all")
    assert r.status == 404 and "no such endpoint" in r.json["message"]
    r = await api.request("PUT", "jobs", {"x": 1})
    assert r.status == 405 and r.json["message"] == "PUT is not allowed here (allowed: GET, POST)"
    assert r.headers["Allow"] == "GET, POST"
    r = await api.request("PATCH", "compile", {"x": 1})
    assert r.status == 405 and r.headers["Content-Type"].startswith("application/json")


class TestCompileProcesses:
    """c.KaleExtApp.compile_processes: POST compile in worker processes gives the same result."""

    @pytest.fixture
    def kale_config(self, kale_config):
        return {**kale_config, "compile_processes": 1}

    async def test_same_results_as_in_a_thread(self, api, kale_app, jp_serverapp):
        r = await api.post("compile", {**PLAIN, "options": {"name": "fixed"}}, request_timeout=120)
        data = r.json
        assert r.status == 200 and data["ok"] and data["function_name"] == "plain_python"
        assert kale_app._pool is not None and all(kale_app._pool.pids)  # it did run in the pool
        from kale_ext.backends.local.backend import LocalBackend
        from kale_ext.server import service

        data_here = (Path(jp_serverapp.root_dir) / "plain_python.ipynb").read_bytes()
        options = {"name": "fixed"}
        path = "plain_python.ipynb"
        root = jp_serverapp.root_dir
        here = service.compile_preview(LocalBackend(), data_here, path, path, options, None, root)
        assert here == data
        errors = (await api.post("compile", {"notebook": notebook("x = (")})).json
        assert errors["ok"] is False and errors["errors"][0]["code"] == "syntax-error"
        config = await api.post("compile", {**PLAIN, "options": {"nodes": 0}})
        assert config.json["errors"][0]["field"] == "nodes"


async def test_a_kubeflow_sdk_notebook_previews_with_where_each_setting_came_from(api):
    """POST compile of an SDK notebook as it is: its train() call is the job; provenance names
    each setting's cell and line and the options that override it; train_call chooses."""
    from tests.compile import sdk_notebooks as nbs

    nb = notebook(*nbs.TWO_CALLS)
    data = (await api.post("compile", {"notebook": nb, "options": {"nodes": 2}})).json
    assert data["ok"], data["errors"]
    assert data["function_name"] == "train_patched" and data["nodes"] == 2
    found = {p["setting"]: p for p in data["provenance"]}
    assert (found["nodes"]["value"], found["nodes"]["cell"], found["nodes"]["line"]) == (3, 3, 2)
    assert found["nodes"]["overridden_by"] == ["nodes"]
    assert found["func_args"]["value"] == {"lr": 0.01} and found["func_args"]["overridden_by"] == []
    assert any(w["code"] == "train-calls" for w in data["warnings"])
    first = (await api.post("compile", {"notebook": nb, "options": {"train_call": 1}})).json
    assert first["ok"] and first["nodes"] == 1
    bad = await api.post("compile", {"notebook": nb, "options": {"train_call": 0}})
    [error] = bad.json["errors"]  # a compile's errors are its result (ok: false)
    assert bad.json["ok"] is False and error["field"] == "train_call", error


TWO_SITES = [{"cell": 2, "line": 2}, {"cell": 3, "line": 1}]


@pytest.mark.parametrize(
    "cells, options, sites, nodes",
    [
        ("TWO_CALLS", {}, TWO_SITES, 3),  # the last call is the job
        ("TWO_CALLS", {"train_call": 1}, TWO_SITES, 1),  # the first, chosen: still two to choose
        ("TORCH", {}, None, None),
        (None, {}, [], None),  # a tagged notebook with no train() call
    ],
)
async def test_compile_says_where_the_train_calls_are(api, cells, options, sites, nodes):
    """The panel offers its "train() call" choice, each by its cell and line, from POST
    compile's train_calls."""
    from tests.compile import sdk_notebooks as nbs

    nb = notebook(*getattr(nbs, cells)) if cells else simple_nb()
    data = (await api.post("compile", {"notebook": nb, "options": options})).json
    assert data["ok"], data["errors"]
    if sites is None:
        assert len(data["train_calls"]) == 1
    else:
        assert data["train_calls"] == sites
    if nodes is not None:
        assert data["nodes"] == nodes


@pytest.mark.parametrize(
    "cells, options, parameters",
    [
        # the train() call's func_args over the function's defaults: what the job gets
        ("TORCH", {}, {"model_name": "resnet-2", "epochs": 3}),
        ("TWO_CALLS", {}, {"lr": 0.01}),
        ("TWO_CALLS", {"train_call": 1}, {"lr": 1.0}),
        # the panel's own values are not defaults: it sends them, the reply keeps the notebook's
        ("TWO_CALLS", {"parameters": {"lr": 0.5}}, {"lr": 0.01}),
        ("RUNTIME_PATCH", {}, {"lr": 0.5}),
    ],
)
async def test_compile_parameters_are_what_the_notebook_gives_the_function(
    api, cells, options, parameters
):
    """The panel shows each parameter with the value the job runs with when it sets none: for
    a Kubeflow SDK notebook, its train() call's func_args (not the function's bare default)."""
    from tests.compile import sdk_notebooks as nbs

    nb = notebook(*getattr(nbs, cells))
    data = (await api.post("compile", {"notebook": nb, "options": options})).json
    assert data["ok"], data["errors"]
    assert data["parameters"] == parameters
