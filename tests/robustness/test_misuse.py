"""Item 9: misuse gets the answer it calls for: a 400 for a missing name (not a 405), a 405
that says what is allowed, a clear 403 for a Host the server does not answer to."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


@pytest.mark.parametrize(
    ("method", "path", "says"),
    [
        ("DELETE", "jobs/", "the job name is empty"),
        ("GET", "jobs/", "the job name is empty"),
        ("GET", "jobs//logs", "the job name is empty"),
        ("GET", "jobs//events", "the job name is empty"),
        ("GET", "runtimes/", "the runtime name is empty"),
        ("GET", "runtimes//packages", "the runtime name is empty"),
    ],
)
async def test_9_an_empty_name_is_a_400_not_a_405(api, method, path, says):
    r = await api.request(method, path)
    assert r.status == 400, r.text
    assert r.json["field"] == "name" and says in r.json["message"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "jobs", "GET, POST"), ("POST", "jobs/some-job", "GET, DELETE"),
     ("DELETE", "compile", "POST"), ("POST", "tags", "GET")],
)  # fmt: skip
async def test_9_a_wrong_verb_is_a_405_naming_the_allowed_ones(api, method, path, allowed):
    r = await api.request(method, path, {} if method in ("POST", "PUT") else None)
    assert r.status == 405 and r.headers["Allow"] == allowed
    assert r.json["message"] == f"{method} is not allowed here (allowed: {allowed})"


async def test_9_a_spoofed_host_is_told_so(api):
    r = await api.get("backend", headers={"Host": "attacker.example"})
    assert r.status == 403, r.text
    assert r.json["field"] == "Host" and r.json["reason"] == "HostNotAllowed"
    assert "'attacker.example'" in r.json["message"]
    assert "authentication" not in r.json["message"]  # the token was sent: that is not the problem
