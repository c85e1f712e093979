"""POST compile's answer is kept per exact inputs (service.preview_json): the same request again
is a look-up that answers the same bytes, and a change to anything that shapes the answer (the
notebook, its name or path, an option, the runtime, a file in the workspace, a module beside the
notebook, the installed packages) is previewed afresh."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kale_ext.backends.local.backend import LocalBackend
from kale_ext.server import service
from kale_ext.server.compile_inputs import runtime_for
from tests.conftest import notebook

NB = notebook(("steps = 1", ["parameters"]), "print('step', steps)")


@pytest.fixture
def previews(monkeypatch):
    """Counts the previews built (not looked up); starts from no kept answer."""
    monkeypatch.setattr(service, "_PREVIEWS", type(service._PREVIEWS)())
    built = []
    real = service.preview

    def counted(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "preview", counted)
    return built


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "nb.ipynb").write_text(json.dumps(NB))
    (tmp_path / "work" / "data.csv").write_text("a,b\n1,2\n")
    return tmp_path


def ask(root: Path, data=None, path="work/nb.ipynb", options=None, runtime_name=None) -> dict:
    """POST compile's preview as the compile process makes it: the answer, decoded."""
    data = data if data is not None else (root / path).read_bytes()
    options = options if options is not None else {"nodes": 2, "name": "fit"}
    if runtime_name is not None:
        options = {**options, "runtime": runtime_name}
    runtime, installed = runtime_for(LocalBackend(root / "jobs"), data, options)
    name = Path(path).name if path else "notebook.ipynb"
    answer = service.preview_json(data, name, path, options, runtime, None, installed, str(root))
    return json.loads(answer)


def test_the_same_request_is_a_look_up_with_the_same_answer(previews, root):
    first = ask(root)
    assert first["ok"] and len(previews) == 1
    again = ask(root)
    assert again == first and len(previews) == 1
    sent = ask(root, data=json.loads((root / "work/nb.ipynb").read_text()), path=None)
    assert sent["ok"] and len(previews) == 2  # the same notebook sent as JSON, without a path
    assert ask(root, data=json.loads(json.dumps(NB)), path=None) == sent and len(previews) == 2


def _edit_notebook(root: Path) -> None:
    changed = notebook(("steps = 5", ["parameters"]), "print('step', steps)")
    (root / "work/nb.ipynb").write_text(json.dumps(changed))


def _add_file(root: Path) -> None:
    (root / "work" / "more.txt").write_text("more")


def _grow_file(root: Path) -> None:
    (root / "work" / "data.csv").write_text("a,b\n1,2\n3,4\n")


def _touch_file(root: Path) -> None:  # the same size, written again later
    stat = (root / "work" / "data.csv").stat()
    os.utime(root / "work" / "data.csv", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def _add_module(root: Path) -> None:
    (root / "work" / "helpers.py").write_text("def f():\n    return 1\n")


def _install_a_package(monkeypatch) -> None:
    monkeypatch.setattr(service, "_environment_stamp", lambda: ("packages changed",))


def workspace(answer: dict):
    return answer["workspace"]


#: What changes, how the request then differs, and what of the answer shows it (None: the
#: answer may read the same; it is built again all the same).
CHANGES = {
    "the notebook": (lambda root, mp: _edit_notebook(root), {}, lambda a: a["parameters"]),
    "an option": (
        lambda root, mp: None,
        {"options": {"nodes": 3, "name": "fit"}},
        lambda a: a["nodes"],
    ),
    "the runtime": (lambda root, mp: None, {"runtime_name": "nope"}, lambda a: a["errors"]),
    "a file added to the workspace": (lambda root, mp: _add_file(root), {}, workspace),
    "a workspace file that grew": (lambda root, mp: _grow_file(root), {}, workspace),
    "a workspace file written again": (lambda root, mp: _touch_file(root), {}, None),
    "a module beside the notebook": (lambda root, mp: _add_module(root), {}, workspace),
    "the installed packages": (lambda root, mp: _install_a_package(mp), {}, None),
}


@pytest.mark.parametrize("what", CHANGES)
def test_a_change_to_what_shapes_the_answer_is_previewed_afresh(what, previews, root, monkeypatch):
    change, asked, shown = CHANGES[what]
    before = ask(root)
    change(root, monkeypatch)
    after = ask(root, **asked)
    assert len(previews) == 2, f"{what}: the kept answer was given"
    if shown is not None:
        assert shown(after) != shown(before)


def test_answers_kept_are_bounded(previews, root):
    for nodes in range(1, service._PREVIEWS_SIZE + 6):
        ask(root, options={"nodes": nodes, "name": "fit"})
    assert len(service._PREVIEWS) == service._PREVIEWS_SIZE
    ask(root, options={"nodes": service._PREVIEWS_SIZE + 5, "name": "fit"})  # the newest is kept
    assert len(previews) == service._PREVIEWS_SIZE + 5
    ask(root, options={"nodes": 1, "name": "fit"})  # the oldest went
    assert len(previews) == service._PREVIEWS_SIZE + 6


def test_a_request_that_names_no_job_gets_a_new_name_each_time(previews, root):
    """The same notebook previewed twice without a name: two names, so the job submitted after
    the first preview does not make the second one's name taken (a submit would be a 409)."""
    names = {ask(root, options={"nodes": 2})["job_name"] for _ in range(3)}
    assert len(names) == 3 and all(n.startswith("nb-") for n in names)
    assert len(previews) == 3 and not service._PREVIEWS


def test_the_answer_says_where_each_package_comes_from_and_the_pinning(previews, root):
    from importlib.metadata import version

    nb = notebook(("import yaml", ["imports"]), "print(yaml)")
    here = ask(root, data=nb, path=None)
    assert here["packages"] == ["PyYAML"]  # what compile found, by name
    [package] = here["package_sources"]  # what the local job installs: pinned to this version
    assert package["requirement"] == f"PyYAML=={version('PyYAML')}" and package["pinned_here"]
    assert (package["source"], package["cell"], package["line"]) == ("import", 0, 1)
    assert here["pinning"]["on"] and "local" in here["pinning"]["why"]
    off = ask(root, data=nb, path=None, options={"name": "fit", "pin_packages": False})
    assert [p["requirement"] for p in off["package_sources"]] == ["PyYAML"]
    assert off["package_sources"][0]["check"] == "import"
    assert off["pinning"] == {"on": False, "why": "--no-pin-packages asked"}


def test_the_preview_of_a_runtime_only_a_cluster_runs_says_where_its_facts_came_from(root):
    """The panel's preview needs no cluster: on the local backend, the data-cache runtime's
    facts are the Trainer's published ones, and the answer's warnings say so."""
    answer = ask(root, runtime_name="torch-distributed-with-cache")
    assert answer["ok"], answer["errors"]
    assert answer["runtime"] == "torch-distributed-with-cache"
    assert "name: torch-distributed-with-cache" in answer["trainjob_yaml"]
    said = [w["message"] for w in answer["warnings"] if "its facts are" in w["message"]]
    assert said == [
        "runtime torch-distributed-with-cache: its facts are Kubeflow Trainer v2.3.0's published "
        "runtimes, not the cluster's (the local backend has no cluster to ask)"
    ]
