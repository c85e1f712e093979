"""The REST API under generated input: hypothesis drives every operation of the OpenAPI document
against a real server (its own process) with valid, odd and wrong values, and every answer must
be one the document lists for that operation, matching its schema; a 5xx fails."""

from __future__ import annotations

import collections
import json
import os
import time
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kale_ext.job.options import OPTIONS
from kale_ext.server.schema import document, validator
from tests.harness.server import parse_sse
from tests.robustness.conftest import TINY, call

VERBS = ("get", "post", "delete")
DOC = document()
OPERATIONS = [(p, v) for p, item in DOC["paths"].items() for v in item if v in VERBS]
HUGE = "9" * 5000  # an integer of more digits than Python converts
#: Examples per operation: ~25 keep the suite fast; raise it for a deeper search.
EXAMPLES = int(os.environ.get("KALE_EXT_PROPERTY_EXAMPLES", "25"))
#: The suite's run draws the same examples every time; KALE_EXT_PROPERTY_EXAMPLES set draws new
#: ones (the hypothesis profile of tests/conftest.py).
#: Answers seen, by operation and status (printed with -s, to see what the search reached).
SEEN: collections.Counter = collections.Counter()

ODD = st.sampled_from(
    ["\ud800", "x\udfffy", "__HUGE__", 1e30, -1, 0, 2**70, "", " ", "-e /etc", "mig-1g.5gb",
     "--index-url=http://example.invalid/simple", "numpy", "numpy==1.0", "a" * 300, "ümlaut"]
)  # fmt: skip
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | ODD,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip
NAME = st.from_regex(r"[a-z][a-z0-9-]{0,12}[a-z0-9]", fullmatch=True)
PLAUSIBLE = {
    "name": NAME,
    "runtime": st.sampled_from(["torch-distributed", "nope", "Bad_Name"]),
    "nodes": st.integers(-1, 1100),
    "procs_per_node": st.integers(-1, 300),
    "gpu": st.integers(-1, 70) | st.sampled_from(["mig-1g.5gb", "2"]),
    "cpu": st.sampled_from(["1", "500m", "x", 0.5, -1]),
    "memory": st.sampled_from(["1Gi", "lots", 1024]),
    "parameters": st.dictionaries(st.sampled_from(["n", "m"]), JSON, max_size=2),
    "packages": st.lists(ODD | st.sampled_from(["numpy", "numpy>=1", "NumPy"]), max_size=3),
    "pip_index_urls": st.lists(st.sampled_from(["https://pypi.org/simple", "ftp://x", 5]), max_size=2),
    "env": st.dictionaries(st.from_regex(r"[A-Z_]{1,6}", fullmatch=True), st.text(max_size=6) | ODD, max_size=2),
    "config": st.fixed_dictionaries({}, optional={"env": JSON, "labels": JSON, "run_policy": JSON}),
}  # fmt: skip
OPTION_VALUES = st.fixed_dictionaries(
    {}, optional={o.name: PLAUSIBLE.get(o.name, JSON) | JSON for o in OPTIONS} | {"bogus": JSON}
)
BODY = st.fixed_dictionaries(
    {},
    optional={
        "path": st.sampled_from(["tiny.ipynb", "missing.ipynb", "../x.ipynb", "/etc/passwd"]) | JSON,
        "notebook": st.just(TINY) | JSON,
        "options": OPTION_VALUES | JSON,
        "extra": JSON,
    },
)  # fmt: skip


def encode(body) -> bytes:
    text = json.dumps(body)  # escapes lone surrogates as \ud800: not text, once parsed
    return text.replace('"__HUGE__"', HUGE).encode()


def pointer(*parts: str) -> str:
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def response_schema(path: str, verb: str, status: int, media: str) -> str | None:
    """The pointer to the documented schema of this answer (None: the status is undocumented)."""
    responses = DOC["paths"][path][verb]["responses"]
    response = responses.get(str(status))
    if response is None:
        return None
    where = ("paths", path, verb, "responses", str(status))
    if "$ref" in response:
        where = tuple(response["$ref"].removeprefix("#/").split("/"))
    return pointer(*where, "content", media, "schema")


def parameters(path: str, verb: str) -> list[dict]:
    item = DOC["paths"][path]
    found = item.get("parameters", []) + item[verb].get("parameters", [])
    resolved = []
    for p in found:
        if "$ref" in p:
            p = DOC["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]
        resolved.append(p)
    return resolved


def query_value(param: dict):
    schema = param.get("schema", {})
    sample = st.sampled_from(schema.get("enum", ["0", "1", "0:12", "9" * 30, "-1", "1:2,1:3"]))
    return sample | st.text(max_size=24)


@st.composite
def requests(draw, path: str, verb: str, job: str):
    """(url path with query, body bytes or None, headers) for one operation."""
    url = path.removeprefix("/kale-ext/")
    query, headers = {}, {}
    for param in parameters(path, verb):
        if param["in"] == "path":
            name = draw(st.sampled_from([job, "torch-distributed", ""]) | st.text(max_size=70))
            url = url.replace("{" + param["name"] + "}", urllib.parse.quote(name, safe=""))
        elif param["in"] == "query" and draw(st.booleans()):
            query[param["name"]] = draw(query_value(param))
        elif param["in"] == "header" and draw(st.booleans()):
            headers[param["name"]] = draw(st.sampled_from(["0:5", "x", "9" * 30 + ":1"]))
    if draw(st.integers(0, 9)) == 0:
        query["bogus"] = "1"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    body = encode(draw(BODY)) if verb == "post" else None
    return url, body, headers


def check_answer(path: str, verb: str, answer) -> None:
    assert answer.status < 500, (answer.status, answer.body[:500])
    media = answer.headers.get("Content-Type", "").split(";")[0]
    schema = response_schema(path, verb, answer.status, media)
    assert schema is not None, f"{verb.upper()} {path}: undocumented {answer.status} {media}"
    if media == "text/event-stream":
        events = parse_sse(answer.body.decode())
        kinds = {"message": "LogLine", "end": "LogEnd", "error": "LogError"}
        for e in events:
            problems = list(
                validator(pointer("components", "schemas", kinds[e.event])).iter_errors(e.data)
            )
            assert not problems, (e, problems[0].message)
        return
    body = answer.body.decode() if media == "application/yaml" else answer.json  # the document
    problems = list(validator(schema).iter_errors(body))
    assert not problems, (answer.status, body, problems[0].message)


@pytest.fixture(scope="module")
def job(server) -> str:
    """A finished job for the operations on a job to find."""
    answer = call(server, "POST", "jobs", json.dumps({"path": "tiny.ipynb"}).encode())
    assert answer.status == 201, answer.body
    name = answer.json["name"]
    deadline = time.monotonic() + 60
    while call(server, "GET", f"jobs/{name}").json["status"] not in ("Complete", "Failed"):
        assert time.monotonic() < deadline, "the tiny job did not end within 60 s"
        time.sleep(0.1)
    return name


@pytest.mark.parametrize(("path", "verb"), OPERATIONS, ids=[f"{v} {p}" for p, v in OPERATIONS])
def test_generated_requests_get_documented_answers(server, job, path, verb):
    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
    @given(request=requests(path, verb, job))
    def run(request):
        url, body, headers = request
        answer = call(server, verb.upper(), url, body, headers)
        SEEN[verb, path, answer.status] += 1
        check_answer(path, verb, answer)

    run()
    print({k[2]: n for k, n in SEEN.items() if k[:2] == (verb, path)})
