"""GET/PUT kale-ext/panel-state against a real Jupyter server: the panel's form per notebook."""

from __future__ import annotations

import json

import pytest

from kale_ext.server import panel_state
from kale_ext.server.schema import check
from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

STATE = {
    "version": 1,
    "form": {"name": "my-run", "volumes": [], "parameters": {"epochs": "4"}, "pinPackages": "off"},
    "sweep": {"params": {"lr": "0.1, 0.01"}, "search": "grid", "parallel": "2"},
}


@pytest.fixture
def nb(root):
    (root / "nb.ipynb").write_text(json.dumps(notebook("x = 1")))
    return "nb.ipynb"


async def put(api, path, body):
    return await api.request("PUT", "panel-state", body, params={"path": path})


async def test_a_state_put_is_what_get_answers_after(api, nb):
    before = await api.get("panel-state", params={"path": nb})
    assert before.status == 200 and before.json == {"path": nb, "state": None, "saved": None}
    reply = await put(api, nb, STATE)
    assert reply.status == 200, reply.text
    again = await api.get("panel-state", params={"path": nb})
    assert again.json["state"] == STATE and again.json["saved"] == reply.json["saved"]
    for answer in (before, reply, again):  # as openapi.yaml publishes it
        assert check(answer.json, "#/components/schemas/PanelStateRecord") is None
    changed = {**STATE, "form": {"name": "", "volumes": ["pvc:d:/data=./d"]}}
    assert (await put(api, nb, changed)).status == 200
    assert (await api.get("panel-state", params={"path": nb})).json["state"] == changed


async def test_each_notebook_has_its_own_state(api, nb, root):
    (root / "sub").mkdir()
    (root / "sub" / "other.ipynb").write_text(json.dumps(notebook("y = 2")))
    assert (await put(api, nb, STATE)).status == 200
    other = await api.get("panel-state", params={"path": "sub/other.ipynb"})
    assert other.json["state"] is None
    # the same notebook by another spelling of its path is the same state
    same = await api.get("panel-state", params={"path": "./nb.ipynb"})
    assert same.json["state"] == STATE


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({**STATE, "version": 2}, "version", "must be one of 1"),
        ({"form": {}}, "body", "'version' is a required property"),
        ({**STATE, "form": {"nodes": 4}}, "form.nodes", "must be a string, not a whole number"),
        ({**STATE, "form": {"volumes": "pvc:d:/d"}}, "form.volumes", "must be an array"),
        ({**STATE, "form": {"volumes": [3]}}, "form.volumes[0]", "must be a string"),
        ({**STATE, "form": {"gpuMode": "all"}}, "form.gpuMode", "must be one of"),
        ({**STATE, "form": {"pinPackages": True}}, "form.pinPackages", "must be a string"),
        ({**STATE, "form": {"pinPackages": "yes"}}, "form.pinPackages", "must be one of"),
        ({**STATE, "form": {"speed": "1"}}, "form.speed", "unknown field"),
        ({**STATE, "sweep": {"earlyStop": "yes"}}, "sweep.earlyStop", "true or false"),
        ({**STATE, "extra": 1}, "extra", "unknown field 'extra'"),
    ],
)  # fmt: skip
async def test_a_bad_state_is_a_400_naming_the_field(api, nb, body, field, says):
    reply = await put(api, nb, body)
    assert reply.status == 400, reply.text
    assert reply.json["field"] == field and says in reply.json["message"], reply.json
    assert (await api.get("panel-state", params={"path": nb})).json["state"] is None


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("../nb.ipynb", 403, "outside the server root"),
        ("/etc/passwd", 400, "relative to the server root"),
        ("..%2fnb.ipynb", 400, "URL-encoded separator"),
        (".hidden.ipynb", 403, "hidden"),
        ("missing.ipynb", 404, "notebook not found"),
        ("notes.txt", 400, "not a notebook"),
    ],
)  # fmt: skip
async def test_a_path_outside_the_root_or_not_a_notebook_is_refused(api, nb, root, path, status,
                                                                    says):  # fmt: skip
    (root / "notes.txt").write_text("x")
    (root / ".hidden.ipynb").write_text(json.dumps(notebook("x = 1")))
    for reply in (
        await api.get("panel-state", params={"path": path}),
        await put(api, path, STATE),
    ):
        assert reply.status == status, reply.text
        assert reply.json["field"] == "path" and says in reply.json["message"], reply.json


async def test_the_path_is_required_and_taken_once(api, nb):
    reply = await api.get("panel-state")
    assert reply.status == 400 and reply.json["field"] == "path"
    reply = await api.get("panel-state", params=[("path", nb), ("path", nb)])
    assert reply.status == 400 and "more than once" in reply.json["message"]
    reply = await api.get("panel-state", params={"path": nb, "tail": "1"})
    assert reply.status == 400 and reply.json["field"] == "tail"


async def test_a_state_over_the_bound_is_a_413_and_the_kept_one_stays(api, nb):
    assert (await put(api, nb, STATE)).status == 200
    big = {**STATE, "form": {"extraOptions": {"image": "x" * panel_state.MAX_STATE_BYTES}}}
    reply = await put(api, nb, big)
    assert reply.status == 413, reply.text
    assert reply.json["field"] == "body" and "65,536 bytes" in reply.json["message"]
    assert (await api.get("panel-state", params={"path": nb})).json["state"] == STATE


async def test_writes_leave_whole_files_and_the_oldest_notebooks_are_forgotten(
    api, root, monkeypatch
):
    monkeypatch.setattr(panel_state, "MAX_NOTEBOOKS", 3)
    names = [f"nb{i}.ipynb" for i in range(5)]
    for i, name in enumerate(names):
        (root / name).write_text(json.dumps(notebook("x = 1")))
        body = {**STATE, "form": {"name": f"run-{i}"}}
        assert (await put(api, name, body)).status == 200
    folder = panel_state.state_dir()
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 3 and all(n.endswith(".json") and not n.startswith(".") for n in files)
    for f in folder.iterdir():
        assert json.loads(f.read_text())["state"]["version"] == 1  # whole: no half-written file
    kept = [(await api.get("panel-state", params={"path": n})).json["state"] for n in names]
    assert [s and s["form"]["name"] for s in kept] == [None, None, "run-2", "run-3", "run-4"]


async def test_a_corrupt_state_file_reads_as_none(api, nb):
    assert (await put(api, nb, STATE)).status == 200
    (file,) = panel_state.state_dir().iterdir()
    file.write_text("{not json")
    reply = await api.get("panel-state", params={"path": nb})
    assert reply.status == 200 and reply.json["state"] is None


async def test_without_authentication_both_verbs_are_403(api, nb, jp_fetch):
    for method, body in (("GET", None), ("PUT", json.dumps(STATE))):
        reply = await jp_fetch(
            "kale-ext",
            "panel-state",
            method=method,
            body=body,
            params={"path": nb},
            headers={"Authorization": ""},
            raise_error=False,
        )
        assert reply.code == 403, (method, reply.body)
        assert b"authentication required" in reply.body
    assert (await api.get("panel-state", params={"path": nb})).json["state"] is None


async def test_the_state_is_private_and_a_full_disk_is_a_507_naming_the_folder(
    api, nb, monkeypatch
):
    """Issue 42: values typed as env and secret-named parameters were kept 0644 in a 0755
    folder, and a full disk answered 500. Now 0600 in 0700; a full or read-only folder is a
    507 naming it."""
    import errno
    import os
    import stat

    typed = {**STATE, "form": {**STATE["form"], "parameters": {"api_token": "s3cret"}}}
    reply = await put(api, nb, typed)
    assert reply.status == 200, reply.text
    [file] = panel_state.state_dir().glob("*.json")
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    for code, says in ((errno.ENOSPC, "full"), (errno.EROFS, "read-only")):

        def no_room(*args, code=code, **kwargs):
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr("tempfile.mkstemp", no_room)
        r = await put(api, nb, typed)
        assert r.status == 507, r.text
        assert says in r.json["message"] and str(file.parent) in r.json["message"], r.text
