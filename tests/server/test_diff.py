"""GET diff against a real Jupyter server: two real local runs, a changed parameter and cell."""

from __future__ import annotations

import pytest

from kale_ext.server.schema import check
from tests.runs.test_diff import AFTER, BEFORE, tiny

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


async def test_diff_of_two_runs_from_the_api(api, jobs_dir):
    first = await api.submit({"name": "first"}, notebook=tiny(BEFORE), path="train.ipynb")
    second = await api.submit(
        {"name": "second", "parameters": {"epochs": 3}}, notebook=tiny(AFTER), path="train.ipynb"
    )
    for name in (first, second):
        await api.follow(name)  # to its end
    reply = await api.get("diff", params={"jobs": f"{first},{second}"})
    assert reply.status == 200, reply.text
    got = reply.json
    assert check(got, "#/components/schemas/Comparison") is None
    differ = {d["field"]: d["values"] for d in got["differences"]}
    assert differ["parameters.epochs"] == ["2", "3"]  # the first ran with the default, 2
    assert {"notebook-sha256", "source-sha256"} <= set(differ)
    assert {m["metric"]: m["values"] for m in got["metrics"]} == {
        "loss": [0.5, 0.25],
        "accuracy": [None, 0.2],
    }
    assert [(d["from"], d["to"]) for d in got["source_diffs"]] == [(first, second)]
    assert [j["status"] for j in got["jobs"]] == ["Complete", "Complete"]


@pytest.mark.parametrize(
    ("jobs", "status", "field", "says"),
    [
        (None, 400, "jobs", "give the jobs to compare"),
        ("first", 400, "jobs", "name 2 to 10 different jobs"),
        ("first,Bad_Name", 400, "name", "'Bad_Name' is not a valid job name"),
        ("first,nope", 404, None, "no local job named 'nope'"),
    ],
)
async def test_a_bad_diff_names_the_job(api, jobs_dir, jobs, status, field, says):
    await api.submit({"name": "first"}, notebook=tiny(BEFORE), path="train.ipynb")
    reply = await api.get("diff", params={} if jobs is None else {"jobs": jobs})
    assert reply.status == status, reply.text
    assert says in reply.json["message"]
    assert reply.json.get("field") == field
