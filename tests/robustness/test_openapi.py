"""Item 8: the OpenAPI document says what the server does: every tag role, the debug endpoint's
answer, and the log stream's events as they are sent."""

from __future__ import annotations

import pytest

from kale_ext.compile.notebook import Role
from kale_ext.errors import BackendError
from kale_ext.server.logstream import error_data
from kale_ext.server.schema import document, validator

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


def valid(data, schema: str) -> None:
    errors = [e.message for e in validator(f"#/components/schemas/{schema}").iter_errors(data)]
    assert not errors, (schema, errors[:3], data)


def test_8_every_tag_role_is_in_the_document():
    roles = document()["components"]["schemas"]["Tag"]["properties"]["role"]["enum"]
    assert {r.value for r in Role} <= set(roles)


async def test_8_get_tags_matches_its_schema(api):
    tags = (await api.get("tags")).json["tags"]
    assert any(t["role"] == "entrypoint" for t in tags)
    for tag in tags:
        valid(tag, "Tag")


async def test_8_the_documented_debug_endpoint_answers_as_documented(api):
    responses = document()["paths"]["/kale-ext/debug/loop-lag"]["get"]["responses"]
    r = await api.get("debug/loop-lag")
    assert str(r.status) in responses, r.text
    valid(r.json, "Error")


async def test_8_the_log_streams_events_are_the_documented_ones(api):
    name = await api.submit(path="plain_python.ipynb")
    events = await api.follow(name)
    assert len(events) > 2
    for e in events[:-1]:
        assert e.event == "message" and e.id == f"{e.data['node']}:{e.data['offset']}"
        valid(e.data, "LogLine")
    assert events[-1].event == "end"
    valid(events[-1].data, "LogEnd")
    info = (await api.get(f"jobs/{name}")).json
    valid(info, "JobInfo")


@pytest.mark.parametrize(
    "error",
    [BackendError("pods are forbidden", 403, "Forbidden"), BackendError("gone"), OSError("disk")],
    ids=["with-reason", "without-reason", "a-bug"],
)
def test_8_an_error_events_data_is_the_documented_one(error):
    valid(error_data(error), "LogError")


async def test_28_9_the_log_stream_is_documented_as_the_event_stream_it_is(api):
    """Issue 28, case 9: the SSE answer is documented as `text/event-stream` (a schema check
    of it as JSON failed), and each event's data has its own schema."""
    documented = document()["paths"]["/kale-ext/jobs/{name}/logs"]["get"]["responses"]["200"]
    assert list(documented["content"]) == ["text/event-stream"]
    name = await api.submit(path="plain_python.ipynb")
    r = await api.get(f"jobs/{name}/logs", params={"follow": "1"}, request_timeout=120)
    assert r.headers["Content-Type"].split(";")[0] == "text/event-stream"
    with pytest.raises(ValueError):
        r.json  # noqa: B018  (not a JSON body: a JSON schema cannot check it)
    for kind in ("LogLine", "LogEnd", "LogError"):
        assert kind in documented["content"]["text/event-stream"]["schema"]["description"]
