"""Item 6: a literal env value reaches the job but is never echoed: not in the TrainJob's
options annotation, not in GET jobs; a Secret reference (valueFrom) is shown as it is."""

from __future__ import annotations

import json

import pytest

from kale_ext.job.redact import REDACTED
from tests.conftest import notebook
from tests.harness.server import lines

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

SECRET = "s3cret-token-value"
PRINTS_ITS_LENGTH = notebook("import os\nprint('token length', len(os.environ['API_TOKEN']))")
FROM_SECRET = {"name": "DB_PASSWORD",
               "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}  # fmt: skip


async def test_6_a_literal_env_value_is_never_echoed_locally(api):
    options = {"env": {"API_TOKEN": SECRET}, "config": {"env": [{"name": "MODE", "value": SECRET}]}}
    name = await api.submit(options, notebook=PRINTS_ITS_LENGTH)
    events = await api.follow(name)
    assert (0, f"token length {len(SECRET)}") in lines(events)  # the job got the value
    for path in ("jobs", f"jobs/{name}"):
        r = await api.get(path)
        assert r.status == 200 and SECRET not in r.text
    recorded = json.loads((await api.get(f"jobs/{name}")).json["provenance"]["kale-ext.io/options"])
    assert recorded["env"] == {"API_TOKEN": REDACTED}
    assert recorded["config"]["env"] == [{"name": "MODE", "value": REDACTED}]


async def test_6_a_rerun_of_a_redacted_record_is_told_how_to_give_the_value(api, jobs_dir):
    r = await api.post(
        "jobs", {"notebook": PRINTS_ITS_LENGTH, "options": {"env": {"API_TOKEN": REDACTED}}}
    )
    assert r.status == 400 and r.json["field"] == "env.API_TOKEN"
    assert "give the value again" in r.json["message"] and "secretKeyRef" in r.json["message"]
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())


class TestKubernetes:
    @pytest.fixture
    def kale_config(self, kube):
        return {"backend": "kubernetes", "poll_interval": 0.01, "warm_up": False}

    async def test_6_the_trainjob_annotation_and_listing_hide_literals_not_references(
        self, api, kube
    ):
        options = {"name": "fit", "env": {"API_TOKEN": SECRET}, "config": {"env": [FROM_SECRET]}}
        r = await api.post("jobs", {"notebook": PRINTS_ITS_LENGTH, "options": options})
        assert r.status == 201, r.text
        created = kube.get("trainjobs", "fit")
        recorded = json.loads(created["metadata"]["annotations"]["kale-ext.io/options"])
        assert recorded["env"] == {"API_TOKEN": REDACTED}
        assert recorded["config"]["env"] == [FROM_SECRET]  # a reference: no secret in it
        listed = await api.get("jobs")
        assert listed.status == 200 and SECRET not in listed.text


#: A parameters cell with secret-named parameters; the job prints their lengths.
SECRET_PARAMS = notebook(
    ("api_key = 'none'\ndb_password = 'none'\nlr = 0.1", ["parameters"]),
    "print('lengths', len(api_key), len(db_password), lr)",
)


async def test_28_9_secret_named_parameters_are_masked_in_listings_and_diffs(api, jobs_dir):
    given = {"parameters": {"api_key": SECRET, "db_password": SECRET + "2", "lr": 0.5}}
    name = await api.submit(given, notebook=SECRET_PARAMS)
    other = await api.submit({"parameters": {"lr": 0.25}}, notebook=SECRET_PARAMS)
    events = await api.follow(name)
    assert (0, f"lengths {len(SECRET)} {len(SECRET) + 1} 0.5") in lines(events)  # it got them
    for path in ("jobs", f"jobs/{name}"):
        r = await api.get(path)
        assert r.status == 200 and SECRET not in r.text
    recorded = json.loads((await api.get(f"jobs/{name}")).json["provenance"]["kale-ext.io/options"])
    assert recorded["parameters"] == {"api_key": REDACTED, "db_password": REDACTED, "lr": 0.5}
    await api.follow(other)
    diff = await api.get("diff", params={"jobs": f"{name},{other}"})
    assert diff.status == 200 and SECRET not in diff.text, diff.text
    assert "lr" in diff.text
    rerun = await api.post("jobs", {"notebook": SECRET_PARAMS, "options": recorded})
    assert rerun.status == 400 and rerun.json["field"] == "parameters.api_key", rerun.text
