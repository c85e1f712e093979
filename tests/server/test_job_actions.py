"""POST jobs/{name}/rerun, jobs/{name}/resume and jobs/{name}/stop against a real Jupyter server:
real local jobs."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from kale_ext.server.schema import check
from tests.conftest import notebook
from tests.harness.server import lines

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PRINTS = notebook(("epochs = 6\nlr = 0.1\n", ["parameters"]), 'print(f"epochs {epochs} lr {lr}")')
SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)


async def _ended(api, name: str) -> dict:
    deadline = time.monotonic() + 180
    while (job := (await api.get(f"jobs/{name}")).json)["status"] not in ("Complete", "Failed"):
        assert time.monotonic() < deadline, job
        await asyncio.sleep(0.2)
    return job


async def test_rerun_runs_the_recorded_job_with_only_the_overrides(api, jobs_dir):
    options = {"name": "first", "parameters": {"epochs": "4"}}
    assert (await api.post("jobs", {"notebook": PRINTS, "options": options})).status == 201
    await _ended(api, "first")
    reply = await api.post("jobs/first/rerun", {"name": "again", "parameters": {"lr": 0.2}})
    assert reply.status == 201, reply.text
    assert reply.json == {"name": "again", "backend": "local", "warnings": []}
    assert reply.headers["Location"].endswith("/kale-ext/jobs/again")
    events = await api.follow("again")
    assert [t for _, t in lines(events)] == ["epochs 4 lr 0.2"]
    job = (await api.get("jobs/again")).json
    assert json.loads(job["provenance"]["kale-ext.io/options"])["parameters"] == {
        "epochs": "4", "lr": 0.2}  # fmt: skip
    bare = await api.post("jobs/first/rerun")  # no body: as it ran, a new name
    assert bare.status == 201, bare.text
    assert bare.json["name"] not in ("first", "again")
    assert [t for _, t in lines(await api.follow(bare.json["name"]))] == ["epochs 4 lr 0.1"]


async def test_a_job_named_in_the_panel_reruns_under_a_new_name(api, jobs_dir):
    """The panel keeps its form, the job's name too, in the notebook's metadata, and submits
    the notebook with it: a rerun of that job takes a new name all the same."""
    named = {**PRINTS, "metadata": {**PRINTS["metadata"], "kale_ext": {"options": {
        "name": "long-run", "parameters": {"epochs": "4"}}}}}  # fmt: skip
    body = {"notebook": named, "path": "nb.ipynb", "options": {"name": "long-run"}}
    assert (await api.post("jobs", body)).status == 201
    reply = await api.post("jobs/long-run/rerun")
    assert reply.status == 201, reply.text
    name = reply.json["name"]
    assert name != "long-run" and name.startswith("nb-")
    assert [t for _, t in lines(await api.follow(name))] == ["epochs 4 lr 0.1"]  # its settings
    again = await api.post("jobs/long-run/rerun", {"name": "long-run-2"})
    assert again.status == 201 and again.json["name"] == "long-run-2"


@pytest.mark.parametrize(
    ("body", "status", "field", "says"),
    [
        ({"name": 3}, 400, "name", "string"),
        ({"parameters": [1]}, 400, "parameters", "object"),
        ({"speed": 1}, 400, "speed", "unknown field 'speed'"),
        ({"parameters": {"depth": 1}}, 400, "parameters.depth", "no such parameter"),
        ({"name": "Bad_Name"}, 400, "name", "not a valid job name"),
        ({"name": "first"}, 409, None, "a job named first exists already"),
    ],
)  # fmt: skip
async def test_a_bad_rerun_is_refused_naming_why(api, jobs_dir, body, status, field, says):
    assert (
        await api.post("jobs", {"notebook": PRINTS, "options": {"name": "first"}})
    ).status == 201
    reply = await api.post("jobs/first/rerun", body)
    assert reply.status == status, reply.text
    assert reply.json["field"] == field and says in reply.json["message"]
    assert [j["name"] for j in (await api.get("jobs")).json["jobs"]] == ["first"]


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        ("notebook", "its kept notebook ("),
        ({"options": [1]}, "its kept options is not a dict"),  # was a 500
        ({"options": {"speed": 1}}, "its kept options do not match the schema"),
        ({"folder": "/etc"}, "its recorded folder /etc is outside the server's root"),
    ],
)  # fmt: skip
async def test_a_rerun_verifies_what_was_kept_before_it_trusts_it(api, jobs_dir, tamper, says):
    """An edited snapshot notebook ran, a recorded folder outside the server root was used, and
    options that were no object answered 500: each is a 409 naming what does not match, and
    no job is submitted."""
    assert (
        await api.post("jobs", {"notebook": PRINTS, "options": {"name": "first"}})
    ).status == 201
    kept = jobs_dir / ".submitted" / "first"
    if tamper == "notebook":
        nb = kept / "notebook.ipynb"
        nb.write_text(nb.read_text().replace("print(", "__import__('os').system('id'); print("))
    else:
        record = json.loads((kept / "submit.json").read_text())
        (kept / "submit.json").write_text(json.dumps({**record, **tamper}))
    reply = await api.post("jobs/first/rerun", {"name": "again"})
    assert reply.status == 409, reply.text
    assert says in reply.json["message"] and "job first is not rerun" in reply.json["message"]
    assert [j["name"] for j in (await api.get("jobs")).json["jobs"]] == ["first"]


async def test_rerun_and_stop_of_an_unknown_job_are_404s(api):
    for action in ("rerun", "stop"):
        reply = await api.post(f"jobs/nope/{action}")
        assert reply.status == 404 and "nope" in reply.json["message"], reply.text


async def test_stop_ends_the_job_and_keeps_it_reading_stopped(api, jobs_dir):
    assert (await api.post("jobs", {"notebook": SLOW, "options": {"name": "slow"}})).status == 201
    deadline = time.monotonic() + 120
    while not any(t == "step 3" for _, t in lines(await api.logs("slow"))):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.2)
    reply = await api.post("jobs/slow/stop")
    assert reply.status == 200, reply.text
    assert check(reply.json, "#/components/schemas/JobInfo") is None
    assert (reply.json["status"], reply.json["status_text"]) == ("Failed", "Stopped")
    assert reply.json["reason"].startswith("stopped by ") and reply.json["failure"] is None
    job = (await api.get("jobs/slow")).json  # kept, with its logs
    assert job["status_text"] == "Stopped" and job["finished"]
    assert "step 3" in [t for _, t in lines(await api.logs("slow"))]
    again = await api.post("jobs/slow/stop")
    assert again.status == 409 and "has ended already (Stopped)" in again.json["message"]


#: Actions on one running job sent at the same time; each pair runs on a job of its own.
RACES = [("stop", "delete"), ("delete", "stop"), ("stop", "stop"), ("delete", "delete"),
         ("stop", "rerun"), ("delete", "rerun"), ("rerun", "delete")]  # fmt: skip


async def test_actions_on_one_job_at_the_same_time_answer_2xx_404_or_409(api, jobs_dir):
    """Stop, delete and rerun of one running job, sent together (the server runs each on a
    thread of its own): each is done whole or refused, never a 500; within a bounded time."""

    async def act(action: str, name: str):
        if action == "delete":
            return await api.delete(f"jobs/{name}")
        return await api.post(f"jobs/{name}/{action}")

    started = time.monotonic()
    names = [f"race-{i}" for i in range(len(RACES))]
    for name in names:
        assert (await api.post("jobs", {"notebook": SLOW, "options": {"name": name}})).status == 201
    for name in names:
        while not (await api.logs(name)):  # running, with its first line
            assert time.monotonic() - started < 120
            await asyncio.sleep(0.2)
    replies = await asyncio.gather(
        *(act(action, name) for name, pair in zip(names, RACES, strict=True) for action in pair)
    )
    sent = [(pair, action) for pair in RACES for action in pair]
    assert all(r.status in (200, 201, 204, 404, 409) for r in replies), [
        (what, r.status, r.text) for what, r in zip(sent, replies, strict=True)
    ]
    assert time.monotonic() - started < 150
    for name, pair in zip(names, RACES, strict=True):
        job = await api.get(f"jobs/{name}")
        if "delete" in pair:  # one delete deleted it, whatever came first
            assert job.status == 404, (pair, job.text)
        else:
            assert (job.status, job.json["status_text"]) == (200, "Stopped"), (pair, job.text)
    for reply in replies:  # a rerun's new job: stop it
        if reply.status == 201:
            await api.delete(f"jobs/{reply.json['name']}")


#: Reports a checkpoint's step as checkpoint.save does, says how many nodes ran it, and fails
#: unless told not to.
RESUMABLE = notebook(
    ("import os\nfrom kale_ext import report", ["imports"]),
    ("fail = 1\n", ["parameters"]),
    "report(checkpoint_step=7)\nprint(f\"world {os.environ['WORLD_SIZE']}\", flush=True)\n"
    "if fail:\n    raise SystemExit(3)",
)


async def test_resume_runs_a_failed_job_again_in_its_lineage(api, jobs_dir):
    body = {"notebook": RESUMABLE, "options": {"name": "first"}}
    assert (await api.post("jobs", body)).status == 201
    first = await _ended(api, "first")
    assert first["status"] == "Failed" and first["checkpoint"]["step"] == 7
    assert (first["lineage"], first["parent"], first["checkpoint"]["exact"]) == (
        "first",
        None,
        True,
    )
    reply = await api.post("jobs/first/resume", {"name": "second", "nodes": 2,
                                                 "parameters": {"fail": 0}})  # fmt: skip
    assert reply.status == 201, reply.text
    assert reply.json == {"name": "second", "backend": "local", "warnings": []}
    assert reply.headers["Location"].endswith("/kale-ext/jobs/second")
    said = [t for _, t in lines(await api.follow("second")) if t.startswith("world")]
    assert said == ["world 2", "world 2"]
    job = (await api.get("jobs/second")).json
    assert (
        check({k: v for k, v in job.items() if k != "result"}, "#/components/schemas/JobInfo")
        is None
    )
    assert (job["status"], job["num_nodes"]) == ("Complete", 2)
    assert (job["parent"], job["lineage"], job["resume_step"]) == ("first", "first", 7)
    assert job["provenance"]["kale-ext.io/parent"] == "first"


@pytest.mark.parametrize(
    ("body", "status", "field", "says"),
    [
        ({"nodes": 0}, 400, "nodes", "nodes: must be at least 1"),
        ({"nodes": "2"}, 400, "nodes", "nodes: must be a whole number, not a string"),
        ({"nodes": 1001}, 400, "nodes", "nodes: must be at most 1000"),
        ({"lineage": "x"}, 400, "lineage", "unknown field 'lineage'"),
        ({"parameters": {"depth": 1}}, 400, "parameters.depth", "no such parameter"),
    ],
)  # fmt: skip
async def test_a_bad_resume_is_refused_naming_why(api, jobs_dir, body, status, field, says):
    assert (
        await api.post("jobs", {"notebook": PRINTS, "options": {"name": "first"}})
    ).status == 201
    await _ended(api, "first")
    reply = await api.post("jobs/first/resume", body)
    assert reply.status == status, reply.text
    assert reply.json["field"] == field and says in reply.json["message"], reply.json
    assert [j["name"] for j in (await api.get("jobs")).json["jobs"]] == ["first"]


async def test_a_running_job_is_not_resumed(api, jobs_dir):
    assert (await api.post("jobs", {"notebook": SLOW, "options": {"name": "slow"}})).status == 201
    reply = await api.post("jobs/slow/resume")
    assert reply.status == 409, reply.text
    assert reply.json["message"].startswith("job slow is ")
    assert "a job is resumed once it has ended" in reply.json["message"]
    assert (await api.post("jobs/nope/resume")).status == 404
    await api.delete("jobs/slow")
