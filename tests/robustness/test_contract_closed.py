"""Issue 28, case 9: the contract closed. The running server serves its OpenAPI document (to an
authenticated client), concurrent DELETEs of one job answer one 200 and then 404s, and an
encoded traversal is told as such."""

from __future__ import annotations

import asyncio

import pytest
import yaml

from kale_ext.server.schema import OPENAPI

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


async def test_9_the_openapi_document_is_served_to_an_authenticated_client(api, jp_fetch):
    r = await api.get("openapi.yaml")
    assert r.status == 200 and r.headers["Content-Type"].startswith("application/yaml")
    assert r.body == OPENAPI.read_bytes()
    served = yaml.safe_load(r.body)
    assert "/kale-ext/openapi.yaml" in served["paths"]
    anonymous = await jp_fetch("kale-ext", "openapi.yaml", headers={"Authorization": ""},
                               raise_error=False)  # fmt: skip
    assert anonymous.code == 403


async def test_9_concurrent_deletes_of_one_job_answer_one_200_then_404s(api):
    name = await api.submit(path="plain_python.ipynb", options={"parameters": {"steps": 1}})
    answers = await asyncio.gather(*(api.delete(f"jobs/{name}") for _ in range(10)))
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] + [404] * 9, [a.text for a in answers]
    for a in answers:
        if a.status == 404:
            assert f"job {name} does not exist" in a.json["message"]
    assert (await api.delete(f"jobs/{name}")).status == 404


@pytest.mark.parametrize(
    ("path", "says"),
    [("..%2f..%2fetc/passwd.ipynb", "%2f, an URL-encoded separator"),
     ("%2E%2E/x.ipynb", "%2E, an URL-encoded dot"), ("a%5cb.ipynb", "separator")],
)  # fmt: skip
@pytest.mark.parametrize("with_notebook", [False, True])
async def test_9_an_encoded_traversal_is_refused_as_such(api, path, says, with_notebook):
    from tests.conftest import notebook

    body = {"path": path, **({"notebook": notebook("print(1)")} if with_notebook else {})}
    r = await api.post("compile", body)
    assert r.status == 400 and r.json["field"] == "path", r.text
    assert says in r.json["message"] and "hidden" not in r.json["message"]
