"""The workspace through the REST API (a real Jupyter server): POST compile shows it, POST jobs
ships it, and no folder outside the server root can be chosen."""

from __future__ import annotations

import json

import pytest

from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

NB = notebook(
    ("from helpers import double", ["imports"]), "print(double(len(open('data.csv').read())))"
)


@pytest.fixture
def project(jp_root_dir):
    folder = jp_root_dir / "work" / "project"
    folder.mkdir(parents=True)
    (folder / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (folder / "data.csv").write_text("a\n1\n")
    (folder / ".gitignore").write_text("*.tmp\n")
    (folder / "scratch.tmp").write_text("x")
    (folder / "train.ipynb").write_text(json.dumps(NB))
    return folder


async def test_compile_shows_the_workspace_and_what_a_submit_creates(api, project):
    data = (await api.post("compile", {"path": "work/project/train.ipynb"})).json
    assert data["ok"], data["errors"]
    assert data["warnings"] == []  # helpers is beside the notebook: no missing package
    ws = data["workspace"]
    assert (ws["root"], ws["files"], ws["excluded"], ws["modules"]) == (
        "work/project", 3, 2, ["helpers"])  # fmt: skip
    assert [f["path"] for f in ws["list"]] == ["data.csv", "helpers.py", "train.ipynb"]
    assert [c["kind"] for c in data["creates"]] == ["ConfigMap", "TrainJob"]
    assert data["creates"][0]["name"] in data["trainjob_yaml"]


async def test_unsaved_content_without_a_path_has_no_workspace(api, project):
    data = (await api.post("compile", {"notebook": NB})).json
    assert data["ok"] and data["workspace"] is None
    assert [w["code"] for w in data["warnings"]] == ["module-not-installed"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"workspace": "../.."}, "leads outside the server root"),
        ({"workspace": "work/nope"}, "is not a folder"),
        ({"workspace_max_size": "8"}, "more than the 8 B a job ships; the largest: train.ipynb"),
    ],
)
async def test_a_workspace_that_cannot_be_is_a_config_error_on_workspace(api, project, options,
                                                                         message):  # fmt: skip
    body = {"path": "work/project/train.ipynb", "options": options}
    data = (await api.post("compile", body)).json
    [error] = data["errors"]
    assert data["ok"] is False and error["field"] == "workspace" and message in error["message"]
    r = await api.post("jobs", body)
    assert r.status == 400 and r.json["field"] == "workspace"


async def test_a_submitted_job_runs_in_its_workspace(api, project, jobs_dir):
    from kale_ext.backends.local.backend import LocalBackend

    r = await api.post("jobs", {"path": "work/project/train.ipynb"})
    assert r.status == 201, r.text
    backend = LocalBackend(jobs_dir)
    info = backend.wait(r.json["name"], timeout=120, interval=0.1)
    assert info.status.value == "Complete", info.reason
    assert [line.text for line in backend.logs(r.json["name"])] == ["8"]  # 2 × len("a\n1\n")
