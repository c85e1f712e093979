"""Issue 28, case 8: what would fail later for the wrong reason is refused at the door, at
compile and at submit, with a 4xx naming the field: env names and values, package specs (parsed
as requirements; URLs only where the site allows them), quantities within the option table's
bounds (shm not above memory), and notebooks that are not text or nest too deeply (422)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PLAIN = {"path": "plain_python.ipynb"}

REFUSED = [  # (options, field, what the message says)
    ({"env": {"A": "x\x00y"}}, "env.A", "holds a NUL byte"),
    ({"env": {"A\nB": "x"}}, "env", "is not a variable name"),
    ({"config": {"env": [{"name": "A", "value": "x\x00"}]}}, "options.config.env[0].value",
     "holds a NUL byte"),
    ({"packages": ["numpy>=2 --extra-index-url http://x"]}, "packages[0]", "holds a pip option"),
    ({"packages": ["file:///etc/passwd"]}, "packages[0]", "is a URL"),
    ({"packages": ["https://x.example/pkg-1.0-py3-none-any.whl"]}, "packages[0]", "is a URL"),
    ({"packages": ["pkg @ https://x.example/pkg.whl"]}, "packages[0]", "allow_package_urls"),
    ({"memory": "99999999Ei"}, "memory", "must be at most 64Ti, got 99999999Ei"),
    ({"cpu": 10**9}, "cpu", "must be at most 4096"),
    ({"shm_size": "12345678901234567890123"}, "shm_size", "must be at most 64Ti"),
    ({"memory": "2Gi", "shm_size": "4Gi"}, "shm_size", "more than the memory per node (2Gi)"),
    ({"config": {"limits": {"memory": "999Pi"}}}, "options.config.limits.memory", "at most 64Ti"),
    ({"workspace_max_size": "2Gi"}, "workspace_max_size", "must be at most 1Gi"),
]  # fmt: skip
IDS = ["env-nul", "env-newline-name", "config-env-nul", "pip-option-inside", "file-url",
       "wheel-url", "name-at-url", "memory", "cpu", "shm-digits", "shm-over-memory",
       "config-memory", "workspace-size"]  # fmt: skip


@pytest.mark.parametrize(("options", "field", "says"), REFUSED, ids=IDS)
async def test_8_a_value_that_would_fail_later_is_refused_at_submit(
    api, jobs_dir, options, field, says
):
    r = await api.post("jobs", {**PLAIN, "options": options})
    assert r.status == 400, r.text
    assert r.json["field"] == field and says in r.json["message"], r.json
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())  # nothing half-created


@pytest.mark.parametrize(("options", "field", "says"), REFUSED, ids=IDS)
async def test_8_and_at_compile(api, options, field, says):
    r = await api.post("compile", {**PLAIN, "options": options})
    assert r.status == 200 and not r.json["ok"], r.text
    [error] = r.json["errors"]
    assert error["field"] == field and says in error["message"], error


async def test_8_a_shm_within_memory_and_a_plain_requirement_pass(api):
    options = {"memory": "4Gi", "shm_size": "1Gi", "packages": ["numpy>=1"], "env": {"A": "b"}}
    r = await api.post("compile", {**PLAIN, "options": options})
    assert r.status == 200 and r.json["ok"], r.text


def lone_surrogate() -> bytes:
    return json.dumps(notebook("x = '\ud800'"), ensure_ascii=True).encode()


def nested_brackets() -> bytes:
    return b'{"nbformat": 4, "cells": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"


@pytest.mark.parametrize(
    ("content", "says"),
    [(lone_surrogate, "cell 0 holds a lone surrogate"), (nested_brackets, "nested too deeply")],
    ids=["lone-surrogate", "nested-brackets"],
)
async def test_8_a_malformed_notebook_file_is_a_422_at_submit_and_a_result_at_compile(
    api, root, jobs_dir, content, says
):
    (root / "bad.ipynb").write_bytes(content())
    r = await api.post("jobs", {"path": "bad.ipynb"})
    assert r.status == 422, r.text
    assert r.json["reason"] == "NotebookError" and says in r.json["message"], r.json
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())
    r = await api.post("compile", {"path": "bad.ipynb"})  # compile errors are its results
    assert r.status == 200 and not r.json["ok"], r.text
    [error] = r.json["errors"]
    assert error["code"] == "notebook" and says in error["message"]


class TestPackageUrlsAllowed:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {"backend": "local", "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
                "compile_processes": 0, "allow_package_urls": True}  # fmt: skip

    async def test_8_the_site_lets_urls_in(self, api):
        options = {"packages": ["pkg @ https://x.example/pkg.whl"]}
        r = await api.post("compile", {**PLAIN, "options": options})
        assert r.status == 200 and r.json["ok"], r.text
        assert "pkg @ https://x.example/pkg.whl" in r.json["trainjob_yaml"]
        mixed = {"packages": ["https://x.example/a.whl --index-url http://y"]}
        r = await api.post("compile", {**PLAIN, "options": mixed})
        assert not r.json["ok"] and "pip option" in r.json["errors"][0]["message"]
