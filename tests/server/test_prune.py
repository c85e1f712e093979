"""POST jobs/prune on real local jobs: a dry run lists the finished ones, the real one removes
them and leaves a running job; every bad body is a 400 naming the field; GET jobs carries each
job's disk use; GET jobs/prune is still the job named prune's."""

from __future__ import annotations

import pytest

from tests.conftest import notebook

pytest.register_assert_rewrite("tests.harness.server")

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


async def test_prune_lists_then_removes_finished_jobs_and_leaves_a_running_one(api, jobs_dir):
    done = await api.submit({"name": "done-one"}, notebook=notebook("print('x' * 5000)"))
    assert (await api.follow(done))[-1].data["status"] == "Complete"
    slow = notebook("import time\nprint('up', flush=True)\ntime.sleep(600)")
    running = await api.submit({"name": "still-running"}, notebook=slow)

    listed = {j["name"]: j for j in (await api.get("jobs")).json["jobs"]}
    assert listed["done-one"]["disk_bytes"] >= 5000 and listed["done-one"]["disk_partial"] is False

    dry = await api.post("jobs/prune", {"older_than": "0s", "dry_run": True})
    assert dry.status == 200, dry.text
    assert dry.json["dry_run"] is True
    assert [(j["name"], j["status"], j["deleted"]) for j in dry.json["jobs"]] == [
        ("done-one", "Complete", False)
    ]
    assert dry.json["jobs"][0]["disk_bytes"] > 0 and (jobs_dir / "done-one").is_dir()

    real = await api.post("jobs/prune", {"older_than": "0s", "statuses": ["complete"]})
    assert real.status == 200, real.text
    [gone] = real.json["jobs"]
    assert (gone["name"], gone["deleted"]) == ("done-one", True)
    assert not (jobs_dir / "done-one").exists()
    left = [j["name"] for j in (await api.get("jobs")).json["jobs"]]
    assert left == [running]
    assert (await api.post("jobs/prune", {"older_than": "0s"})).json["jobs"] == []


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({}, "older_than", "is required"),
        ({"older_than": "7y"}, "older_than", "must match"),
        ({"older_than": 7}, "older_than", "string"),
        ({"older_than": "3651d"}, "older_than", "more than the most, 3650d"),
        ({"older_than": "0s", "statuses": ["running"]}, "statuses[0]", "must be one of"),
        ({"older_than": "0s", "statuses": []}, "statuses", ""),
        ({"older_than": "0s", "dry_run": "yes"}, "dry_run", "true or false"),
        ({"older_than": "0s", "outputs": 1}, "outputs", "true or false"),
        ({"older_than": "0s", "everything": True}, "everything", "unknown field"),
    ],
)
async def test_a_bad_body_is_a_400_naming_the_field(api, body, field, says):
    r = await api.post("jobs/prune", body)
    assert r.status == 400, r.text
    assert r.json["field"] == field and says in r.json["message"]


async def test_not_json_and_the_job_named_prune(api):
    r = await api.post("jobs/prune", "older_than=0s")
    assert r.status == 400 and "not valid JSON" in r.json["message"]
    missing = await api.get("jobs/prune")  # no job of that name: its 404, as for any name
    assert missing.status == 404 and "prune" in missing.json["message"]
