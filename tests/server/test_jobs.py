"""Real jobs on the local backend through the REST API: submit, follow the logs over SSE until
`end`, status, list, events, delete; resuming a log stream; a server restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, without_exit_barrier

pytest.register_assert_rewrite("tests.harness.server")
from tests.harness.server import JupyterProcess, lines, parse_sse  # noqa: E402

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PLAIN_LAST = "loss evaluated 5 times"


async def test_submit_follow_status_list_events_delete(api, root):
    r = await api.post("jobs", {"path": "plain_python.ipynb", "options": {"name": "plain-one"}})
    assert r.status == 201, r.text
    assert r.json == {"name": "plain-one", "backend": "local", "warnings": []}
    assert r.headers["Location"].endswith("/kale-ext/jobs/plain-one")

    events = await api.follow("plain-one")
    assert events[-1].data["status"] == "Complete"
    text = [t for _, t in lines(events)]
    assert text[0].startswith("200 points") and text[-1] == PLAIN_LAST
    assert all(e.id == f"0:{e.data['offset']}" for e in events[:-1])
    assert events[-1].id is None  # `end` carries no id: a reconnect resumes after the last line

    job = (await api.get("jobs/plain-one")).json
    assert job["status"] == "Complete" and job["backend"] == "local"
    assert job["nodes"] == [{"index": 0, "state": "Succeeded", "reason": None, "exit_code": 0}]
    assert job["provenance"]["kale-ext.io/notebook"] == "plain_python.ipynb"
    assert set(job) >= {
        "name",
        "status",
        "reason",
        "runtime",
        "num_nodes",
        "procs_per_node",
        "created",
        "finished",
        "provenance",
    }

    await api.submit({"name": "plain-two"}, path="plain_python.ipynb")
    listed = (await api.get("jobs")).json["jobs"]
    assert {j["name"] for j in listed} == {"plain-one", "plain-two"}
    created = [j["created"] for j in listed]
    assert created == sorted(created, reverse=True)  # newest first

    reasons = [e["reason"] for e in (await api.get("jobs/plain-one/events")).json["events"]]
    assert reasons == ["Created", "Started", "Complete"]

    again = await api.post("jobs", {"path": "plain_python.ipynb", "options": {"name": "plain-one"}})
    assert again.status == 409 and "exists already" in again.json["message"]

    assert (await api.delete("jobs/plain-one")).json == {"deleted": "plain-one", "outputs": None}
    gone = await api.delete("jobs/plain-one")
    assert gone.status == 404
    assert gone.json["message"] == (
        "job plain-one does not exist: it was never created or is deleted already"
    )
    for path in ("jobs/plain-one", "jobs/plain-one/events", "jobs/plain-one/logs"):
        r = await api.get(path)
        assert r.status == 404 and r.headers["Content-Type"].startswith("application/json")
        assert "plain-one" in r.json["message"]
    assert "plain-one" not in [j["name"] for j in (await api.get("jobs")).json["jobs"]]


async def test_two_nodes_from_json_and_resuming_the_stream(api):
    nb = json.loads((EXAMPLES / "plain_python.ipynb").read_text())
    options = {"nodes": 2, "parameters": {"seed": 11}}
    name = await api.submit(options, notebook=nb)
    followed = await api.follow(name)
    assert followed[-1].data == {"status": "Complete", "status_text": "Complete", "reason": None}
    full = await api.logs(name)  # the whole log again, not followed
    assert [e.event for e in full][-1] == "end"
    full_lines = [e for e in full if e.event == "message"]
    assert sorted(lines(full_lines)) == sorted(lines(followed))
    for node in (0, 1):
        mine = without_exit_barrier(t for n, t in lines(full_lines) if n == node)
        assert mine[-1] == PLAIN_LAST and len(mine) == 8

    # a client that got the first k lines of each node resumes with their ids
    by_node = per_node(full_lines)
    for cut in range(0, 9):
        offsets = {k: (by_node[k][cut - 1].data["offset"] if cut else 0) for k in (0, 1)}
        query = ",".join(f"{k}:{v}" for k, v in offsets.items())
        rest = await api.logs(name, {"offsets": query})
        assert rest[-1].event == "end"
        got = per_node(rest[:-1])
        for k in (0, 1):  # none twice, none lost, in order
            assert texts(got.get(k, [])) == texts(by_node[k][cut:])

    # Last-Event-ID covers the node of that event; offsets= the others
    last = by_node[1][2]
    rest = per_node((await api.logs(name, {"offsets": "0:0"}, {"Last-Event-ID": last.id}))[:-1])
    assert texts(rest[0]) == texts(by_node[0]) and texts(rest[1]) == texts(by_node[1][3:])
    # Last-Event-ID alone, one node
    rest = await api.logs(name, {"node": "1"}, headers={"Last-Event-ID": last.id})
    assert lines(rest[:-1]) == lines(by_node[1][3:])
    # the later of offsets= and Last-Event-ID wins for a node (ids only grow)
    rest = await api.logs(name, {"node": "1", "offsets": "1:0"}, headers={"Last-Event-ID": last.id})
    assert lines(rest[:-1]) == lines(by_node[1][3:])

    # node and tail
    only1 = await api.logs(name, {"node": "1"})
    assert {e.data["node"] for e in only1[:-1]} == {1}
    assert texts(only1[:-1]) == texts(by_node[1])  # all of node 1 (8 lines; 9 with the barrier's)
    tail = await api.logs(name, {"node": "0", "tail": "2"})
    assert [e.data["text"] for e in tail[:-1]] == [t for _, t in lines(by_node[0][-2:])]
    tail_resumed = await api.logs(name, {"node": "0", "tail": "2", "offsets": "0:0"})
    assert len(tail_resumed) == 9  # resuming is exact: tail does not apply


async def test_a_failed_jobs_object_says_where_and_why(api):
    """The panel links a failed job's row to its cell: GET jobs and GET jobs/{name} carry the
    failure summary with the cell's index, id and line."""
    from kale_ext.server.schema import validator
    from tests.conftest import notebook

    nb = notebook(  # the rank is torchrun's: no torch imported (test_failures has its world)
        ("import os", ["imports"]),
        "rank = int(os.environ['RANK'])\nprint(f'up {rank}')",
        "if rank == 1:\n    row = {}\n    print(row['label'])",
    )
    name = await api.submit({"nodes": 2}, notebook=nb)
    events = await api.follow(name)
    said = """node 1, rank 1: cell 3 ("training"), line 3: KeyError: 'label'"""
    assert events[-1].data == {"status": "Failed", "status_text": "Failed", "reason": said}
    text = [t for _, t in lines(events)]
    assert sum(t.startswith("torchrun: rank ") for t in text) <= 2  # the report, folded
    assert text.count("""cell 3 ("training"), line 3: KeyError: 'label'""") == 1

    job = (await api.get(f"jobs/{name}")).json
    assert not list(validator("#/components/schemas/JobInfo").iter_errors(job))
    failure = job["failure"]
    assert failure["summary"] == said and job["status_text"] == "Failed"
    assert (failure["node"], failure["rank"], failure["exception"]) == (1, 1, "KeyError: 'label'")
    assert (failure["cell_index"], failure["cell_id"], failure["line"]) == (2, "c2", 3)
    assert failure["log_tail"][-1].startswith("[node 1] torchrun: rank 1 failed first")
    listed = (await api.get("jobs")).json["jobs"]
    assert [j["failure"] for j in listed if j["name"] == name] == [failure]


async def test_a_stream_that_started_early_misses_nothing(api, jp_fetch):
    """Follow from the moment of submission, over a chunked stream read as it arrives."""
    name = await api.submit({"nodes": 2}, path="plain_python.ipynb")
    chunks: list[bytes] = []
    r = await jp_fetch(
        "kale-ext",
        "jobs",
        name,
        "logs",
        params={"follow": "1"},
        streaming_callback=chunks.append,
        request_timeout=120,
    )
    assert r.code == 200 and r.headers["Cache-Control"] == "no-cache"
    events = parse_sse(b"".join(chunks).decode())
    assert events[-1].event == "end" and events[-1].data["status"] == "Complete"
    assert sorted(t for n, t in lines(events) if t == PLAIN_LAST) == [PLAIN_LAST] * 2


@pytest.mark.parametrize(
    ("path", "params", "headers", "status", "says"),
    [
        ("jobs/Bad_Name", None, None, 400, "not a valid job name"),
        ("jobs/-starts-with-dash", None, None, 400, "not a valid job name"),
        ("jobs/" + "a" * 64, None, None, 400, "not a valid job name"),
        ("jobs/Bad_Name/logs", None, None, 400, "not a valid job name"),
        ("jobs/Bad_Name/events", None, None, 400, "not a valid job name"),
        ("jobs/no-such-job", None, None, 404, "no-such-job"),
        ("jobs/no-such-job/logs", None, None, 404, "no-such-job"),
        ("jobs/no-such-job/events", None, None, 404, "no-such-job"),
        ("jobs/no-such-job/logs", {"follow": "1"}, None, 404, "no-such-job"),
        ("jobs/some-job/logs", {"node": "x"}, None, 400, "'node' must be a whole number"),
        ("jobs/some-job/logs", {"node": "-1"}, None, 400, "'node' must be a whole number"),
        ("jobs/some-job/logs", {"tail": "1.5"}, None, 400, "'tail' must be a whole number"),
        ("jobs/some-job/logs", {"tail": "9" * 5000}, None, 400, "'tail' must be a whole number"),
        ("jobs/some-job/logs", {"follow": "yes"}, None, 400, "'follow' must be 0 or 1"),
        ("jobs/some-job/logs", {"offsets": "0=1"}, None, 400, "offsets: '0=1' is not"),
        ("jobs/some-job/logs", {"offsets": "0:1,0:2"}, None, 400, "node 0 is given twice"),
        ("jobs/some-job/logs", None, {"Last-Event-ID": "abc"}, 400, "Last-Event-ID: 'abc'"),
    ],
)
async def test_bad_job_requests(api, path, params, headers, status, says):
    r = await api.get(path, params=params, headers=headers)
    assert r.status == status, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    assert says in r.json["message"]
    if "/logs" not in path and "/events" not in path and status == 400:
        d = await api.delete(path)
        assert d.status == 400 and says in d.json["message"]


async def test_logs_of_a_node_the_job_does_not_have(api):
    name = await api.submit({}, path="plain_python.ipynb")
    r = await api.get(f"jobs/{name}/logs", params={"node": "3"})
    assert r.status == 404 and r.json["message"] == f"job {name} has no node 3 (it has 1)"
    r = await api.get(f"jobs/{name}/logs", params={"offsets": "0:0,2:10"})
    assert r.status == 400 and "offsets name node 2" in r.json["message"]
    await api.follow(name)


def per_node(events) -> dict[int, list]:
    out: dict[int, list] = {}
    for e in events:
        out.setdefault(e.data["node"], []).append(e)
    return out


def texts(events) -> list[str]:
    return [e.data["text"] for e in events]


def test_a_restarted_server_still_has_the_job(tmp_path):
    """A job outlives the server that started it: a new server over the same jobs_dir lists it
    and serves its logs (each server is its own process, on a loopback port, token auth)."""
    root, jobs = tmp_path / "root", tmp_path / "jobs"
    root.mkdir()
    (root / "plain_python.ipynb").write_bytes((EXAMPLES / "plain_python.ipynb").read_bytes())
    first = JupyterProcess(root, jobs, tmp_path / "home")
    try:
        status, body = first.request(
            "POST", "jobs", {"path": "plain_python.ipynb", "options": {"name": "survivor"}}
        )
        assert status == 201
    finally:
        first.stop()
    second = JupyterProcess(root, jobs, tmp_path / "home")
    try:
        events = parse_sse(second.get("jobs/survivor/logs?follow=1").decode())
        assert events[-1].event == "end" and events[-1].data["status"] == "Complete"
        assert lines(events)[-1] == (0, PLAIN_LAST)
        listed = json.loads(second.get("jobs"))["jobs"]
        assert [j["name"] for j in listed] == ["survivor"] and listed[0]["status"] == "Complete"
        status, body = second.request("DELETE", "jobs/survivor")
        assert status == 200
    finally:
        second.stop()


RETURNS = """def fit(kind="tensors"):
    import torch
    if kind == "tensors":
        return {"acc": 0.5, "w": torch.ones(2)}
    if kind == "list":
        return list(range(100))
    if kind == "none":
        return None
    return torch.nn.Linear(2, 1)
"""


async def test_get_job_says_whether_its_return_value_was_saved(api, root):
    import yaml

    from kale_ext.server import handlers
    from tests.conftest import notebook

    (root / "returns.ipynb").write_text(json.dumps(notebook((RETURNS, ["entrypoint"]))))
    held = {"name": "returns-held", "config": {"run_policy": {"suspend": True}}}
    await api.submit(held, path="returns.ipynb")
    kept = await api.submit({"name": "returns-kept"}, path="returns.ipynb")
    for name, kind, env in (
        ("returns-refused", "module", {}),
        ("returns-none", "none", {}),
        ("returns-bounded", "list", {"KALE_EXT_RESULT_MAX_BYTES": "100"}),
    ):
        options = {"name": name, "parameters": {"kind": kind}, "env": env}
        await api.submit(options, path="returns.ipynb")
    waiting = (await api.get("jobs/returns-held")).json
    assert (waiting["status"], waiting["result"]) == ("Queued", None)  # null until it ends
    for name in (kept, "returns-refused", "returns-none", "returns-bounded"):
        await api.follow(name)

    saved = (await api.get("jobs/returns-kept")).json
    assert saved["status"] == "Complete"
    assert saved["result"] == {"saved": True, "format": "torch", "size": saved["result"]["size"],
                               "reason": None} and saved["result"]["size"] > 0  # fmt: skip
    assert (root / "outputs" / kept / ".kale-ext" / "value.pt").stat().st_size == (
        saved["result"]["size"]
    )
    not_saved = (await api.get("jobs/returns-refused")).json
    assert not_saved["status"] == "Complete"  # a refused value fails no job
    assert not_saved["result"]["saved"] is False and not_saved["result"]["format"] is None
    assert not_saved["result"]["reason"].startswith("Linear cannot be saved safely: return plain")
    logged = [t for _, t in lines(await api.logs("returns-refused"))]
    assert f"kale_ext: the job's return value is not saved: {not_saved['result']['reason']}" in (
        logged
    )

    bounded = (await api.get("jobs/returns-bounded")).json["result"]  # the bound reached the job
    assert bounded["reason"].startswith("list larger than the 100 bytes a result may take")
    none = (await api.get("jobs/returns-none")).json
    assert none["status"] == "Complete" and none["result"] == {
        "saved": False, "format": None, "size": 0,
        "reason": "the job's function returned nothing (None)",
    }  # fmt: skip
    assert not (root / "outputs" / "returns-none").exists()  # nothing written for it

    openapi = yaml.safe_load(Path(handlers.__file__).with_name("openapi.yaml").read_text())
    schema = openapi["components"]["schemas"]["JobResult"]  # the document says what it sends
    assert set(schema["required"]) == set(schema["properties"]) == set(saved["result"])
    doc = (EXAMPLES.parent / "docs" / "rest-api.md").read_text()
    assert "**JobResult**" in doc and '`{"saved": bool, "format":' in doc


@pytest.mark.parametrize("limits", [{"nvidia.com/gpu": "1"}, {"google.com/tpu": "4"}])
async def test_an_accelerator_this_machine_lacks_is_refused_naming_it(api, limits):
    options = {"name": "wants-devices", "config": {"limits": limits}}
    r = await api.post("jobs", {"path": "plain_python.ipynb", "options": options})
    name, count = next(iter(limits.items()))
    kind = "GPU" if name == "nvidia.com/gpu" else name
    assert r.status == 400, r.text
    assert (
        f"the job asks for {count} {name} per node, and this machine has no {kind}"
        in (r.json["message"])
    )
    assert r.json["field"] == ("gpu" if kind == "GPU" else f"limits.{name}")
    assert (await api.get("jobs")).json["jobs"] == []


async def test_a_full_jobs_disk_is_a_507_naming_the_folder_and_no_job(api, monkeypatch):
    """Issue 42: a full jobs disk answered 500 "internal error ... Errno 28". Now a 507 naming
    the folder and what it is, as the OpenAPI document lists for every endpoint that writes;
    nothing is left half-made."""
    import errno
    import os

    import yaml

    from kale_ext.server import handlers

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("tempfile.mkstemp", no_room)  # every atomic write's first step
    r = await api.post("jobs", {"path": "plain_python.ipynb", "options": {"name": "no-room"}})
    assert r.status == 507, r.text
    assert r.json["reason"] == "InsufficientStorage"
    assert "the folder is full (no space left on the device)" in r.json["message"], r.text
    monkeypatch.undo()
    assert (await api.get("jobs/no-room")).status == 404  # no half-made job
    openapi = yaml.safe_load(Path(handlers.__file__).with_name("openapi.yaml").read_text())
    assert "507" in openapi["paths"]["/kale-ext/jobs"]["post"]["responses"]
