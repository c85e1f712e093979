"""Item 4: wrong JSON types, numbers and text are a 400 naming the field, never a 500."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PLAIN = {"path": "plain_python.ipynb"}
HUGE = "9" * 5000  # beyond Python's 4,300-digit limit for int(str)
SURROGATE = '"\\ud800"'  # a lone surrogate, as JSON writes it: not text


def options(text: str) -> str:
    return '{"path": "plain_python.ipynb", "options": ' + text + "}"


BODIES = [
    (options('{"pip_index_urls": 5}'), "pip_index_urls"),
    (options('{"packages": 5}'), "packages"),
    (options('{"image": 5}'), "image"),
    (options('{"gpu": 1e30}'), "gpu"),
    (options('{"nodes": 1e30}'), "nodes"),
    (options('{"nodes": ' + HUGE + "}"), "nodes"),
    (options('{"parameters": {"steps": ' + HUGE + "}}"), "parameters.steps"),
    (options('{"env": {"A": ' + SURROGATE + "}}"), "env.A"),
    (options('{"name": ' + SURROGATE + "}"), "name"),
    ('{"path": ' + SURROGATE + "}", "path"),
    (
        '{"notebook": {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type":'
        ' "code", "metadata": {}, "outputs": [], "source": ' + SURROGATE + "}]}}",
        "notebook.cells[0].source",
    ),
]
IDS = ["index-urls-int", "packages-int", "image-int", "gpu-1e30", "nodes-1e30", "nodes-huge",
       "parameter-huge", "env-surrogate", "name-surrogate", "path-surrogate", "cell-surrogate"]  # fmt: skip


@pytest.mark.parametrize(("body", "field"), BODIES, ids=IDS)
async def test_4_wrong_types_are_a_400_naming_the_field(api, jobs_dir, body, field):
    r = await api.post("jobs", body)
    assert r.status == 400, r.text
    assert r.json["field"] == field, r.json
    assert r.json["reason"] and field.split(".")[-1].split("[")[0] in r.json["message"]
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())


@pytest.mark.parametrize(("body", "field"), BODIES, ids=IDS)
async def test_4_compile_never_answers_500(api, body, field):
    r = await api.post("compile", body)
    if r.status == 200:  # an option's value: a config error is a result, naming the field
        assert r.json["ok"] is False and r.json["errors"][0]["field"] == field, r.json
    else:
        assert r.status == 400 and r.json["field"] == field, r.text


@pytest.mark.parametrize(
    ("params", "headers", "field"),
    [
        ({"offsets": "0:" + "9" * 30}, None, "offsets"),
        ({"offsets": "9" * 30 + ":0"}, None, "offsets"),
        (None, {"Last-Event-ID": "0:" + "9" * 30}, "Last-Event-ID"),
        ({"tail": "9" * 30}, None, "tail"),
        ({"node": "9" * 30}, None, "node"),
    ],
    ids=["offset", "offset-node", "last-event-id", "tail", "node"],
)
async def test_4_log_offsets_of_thirty_nines_are_a_400(api, params, headers, field):
    name = await api.submit(**PLAIN)
    r = await api.get(f"jobs/{name}/logs", params=params, headers=headers)
    assert r.status == 400, r.text
    assert r.json["field"] == field
