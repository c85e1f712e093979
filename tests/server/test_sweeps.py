"""POST/GET sweeps against a real Jupyter server: a sweep's trials are real local jobs."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from kale_ext.runs.sweep import MAX_PARALLEL, MAX_TRIALS
from kale_ext.server.schema import check, document
from tests.conftest import notebook
from tests.harness.server import lines
from tests.runs.conftest import TRAINING

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

NB = notebook(("quality = 0.5\nlayers = 1\n", ["parameters"]), (TRAINING, ["training"]))


async def test_a_grid_sweep_from_the_api_lists_its_trials_best_first(api, jobs_dir):
    body = {
        "notebook": NB,
        "path": "sweep.ipynb",
        "sweep": {"params": {"quality": [0.6, 0.9]}, "parallel": 2, "metric": "accuracy"},
    }
    started = await api.post("sweeps", body)
    assert started.status == 201, started.text
    name = started.json["name"]
    assert started.headers["Location"].endswith(f"/kale-ext/sweeps/{name}")
    assert (jobs_dir / ".sweeps" / name / "sweep.json").is_file()  # beside the server's jobs
    deadline = time.monotonic() + 180
    while (got := (await api.get(f"sweeps/{name}")).json)["status"] in ("Starting", "Running"):
        assert time.monotonic() < deadline, got
        await asyncio.sleep(0.2)
    assert check(got, "#/components/schemas/Sweep") is None
    assert got["status"] == "Complete" and got["best"] == f"{name}-1"
    assert got["reason"] == f"2 of 2 complete; best {name}-1"
    assert [(t["parameters"], t["metric"], t["best"]) for t in got["trials"]] == [
        ({"quality": 0.9}, 0.9, True), ({"quality": 0.6}, 0.6, False)]  # fmt: skip
    job = (await api.get(f"jobs/{name}-1")).json
    assert job["sweep"] == name and job["status"] == "Complete"
    listed = (await api.get("sweeps")).json["sweeps"]
    assert [s["name"] for s in listed] == [name]


@pytest.mark.parametrize(
    ("sweep", "field", "says"),
    [
        ({"params": {"quality": "uniform(0,1)"}}, "param.quality", "a range needs a random"),
        ({"params": {"depth": "1,2"}}, "param.depth", "no such parameter"),
        ({"params": {"quality": "0.1"}, "search": "random", "trials": 2}, "metric", "metric"),
        ({"params": {"quality": "0.1"}, "parallel": MAX_PARALLEL + 1}, "sweep.parallel", ""),
        ({"params": {"quality": "0.1"}, "trials": MAX_TRIALS + 1}, "sweep.trials", ""),
        ({"params": {}}, "sweep.params", ""),
        ({"params": {"quality": "0.1"}, "speed": 1}, "sweep.speed", "speed"),
    ],
)  # fmt: skip
async def test_a_bad_sweep_is_a_400_naming_the_field(api, jobs_dir, sweep, field, says):
    reply = await api.post("sweeps", {"notebook": NB, "sweep": sweep})
    assert reply.status == 400, reply.text
    assert reply.json["field"] == field and says in reply.json["message"]
    assert (await api.get("sweeps")).json["sweeps"] == []


async def test_an_unknown_sweep_is_a_404(api):
    reply = await api.get("sweeps/nope")
    assert reply.status == 404 and "no sweep named 'nope'" in reply.json["message"]
    reply = await api.delete("sweeps/nope")
    assert reply.status == 404 and "no sweep named 'nope'" in reply.json["message"]


async def _until(api, name: str, done) -> dict:
    deadline = time.monotonic() + 180
    while not done(got := (await api.get(f"sweeps/{name}")).json):
        assert time.monotonic() < deadline, got
        await asyncio.sleep(0.2)
    return got


async def test_delete_cancels_a_running_sweep_and_keeps_its_trials(api, jobs_dir):
    body = {"notebook": NB, "sweep": {"params": {"quality": "0.1,0.2"}, "metric": "accuracy"}}
    name = (await api.post("sweeps", body)).json["name"]
    await _until(api, name, lambda s: any(t["metric"] is not None for t in s["trials"]))
    reply = await api.delete(f"sweeps/{name}")
    assert reply.status == 200, reply.text
    assert check(reply.json, "#/components/schemas/Sweep") is None
    assert reply.json["status"] == "Cancelled" and reply.json["best"] is None
    assert [(t["job"], t["status"]) for t in reply.json["trials"]] == [(f"{name}-0", "Cancelled")]
    assert reply.json["reason"] == "0 of 2 complete; 1 cancelled; 1 never started"
    job = (await api.get(f"jobs/{name}-0")).json  # kept, reading Cancelled
    assert job["status_text"] == "Cancelled" and job["sweep"] == name
    assert (await api.delete(f"sweeps/{name}")).json["status"] == "Cancelled"


async def test_delete_of_an_ended_sweep_is_a_409(api, jobs_dir):
    body = {"notebook": NB, "sweep": {"params": {"quality": [0.9]}, "metric": "accuracy"}}
    name = (await api.post("sweeps", body)).json["name"]
    await _until(api, name, lambda s: s["status"] not in ("Starting", "Running"))
    reply = await api.delete(f"sweeps/{name}")
    assert reply.status == 409 and "has ended already (Complete)" in reply.json["message"]


def test_the_schema_bounds_are_the_sweeps_own():
    props = document()["components"]["schemas"]["SweepSettings"]["properties"]
    assert props["trials"]["maximum"] == MAX_TRIALS and props["parallel"]["maximum"] == MAX_PARALLEL


FAILS_WHEN_GOOD = notebook(
    ("quality = 0.5\nlayers = 1\n", ["parameters"]),
    ("assert quality < 0.8, 'too good'\nprint('trained', quality, layers)\n", ["training"]),
)


async def test_a_panel_sweep_runs_every_option_shown_under_the_name_shown(api, jobs_dir):
    # as the panel sends it: the form's every parameter (the swept one too) and its name
    options = {"name": "shown-name", "parameters": {"layers": "3", "quality": "0.5"}}
    sweep = {"params": {"quality": "0.6, 0.9"}, "parallel": 2}
    started = await api.post("sweeps", {"notebook": FAILS_WHEN_GOOD, "options": options,
                                        "sweep": sweep})  # fmt: skip
    assert started.status == 201, started.text
    assert started.json["name"] == "shown-name" and started.json["fixed"] == {"layers": "3"}
    got = await _until(api, "shown-name", lambda s: s["status"] not in ("Starting", "Running"))
    assert check(got, "#/components/schemas/Sweep") is None
    assert got["status"] == "Complete" and got["reason"] == "1 of 2 complete; 1 failed"
    assert got["tally"] == got["reason"]
    assert got["counts"] == {"planned": 2, "complete": 1, "failed": 1, "stopped": 0,
                             "cancelled": 0, "running": 0, "not_started": 0}  # fmt: skip
    texts = [text for _, text in lines(await api.logs("shown-name-0"))]
    assert "trained 0.6 3" in texts  # the unswept parameter reached the trial
    info = (await api.get("jobs/shown-name-1")).json
    recorded = json.loads(info["provenance"]["kale-ext.io/options"])
    assert recorded["parameters"] == {"layers": "3", "quality": 0.9}  # what ran


async def test_a_sweep_named_twice_differently_is_a_400(api, jobs_dir):
    body = {"notebook": NB, "options": {"name": "one-name"},
            "sweep": {"params": {"quality": [0.9]}, "name": "another-name"}}  # fmt: skip
    reply = await api.post("sweeps", body)
    assert reply.status == 400 and reply.json["field"] == "name", reply.text
