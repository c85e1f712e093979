"""The workspace: which files of a folder travel with a job, and what the user is told."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kale_ext.errors import ConfigError
from kale_ext.job.workspace import Place, choose, collect, modules_beside


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def shipped(ws) -> list[str]:
    return [f.path for f in ws.files if not f.is_dir]


@dataclass
class Case:
    name: str
    files: dict
    ships: list[str]
    excluded: int = 0
    exclude: tuple = field(default_factory=tuple)


# fmt: off
CASES = [
    Case("plain files and folders", {"a.py": "", "data/x.csv": "1"}, ["a.py", "data/x.csv"]),
    Case("gitignore, git's rules", {".gitignore": "*.log\n/build/\n", "a.log": "", "src/b.log": "",
         "build/x": "", "src/build/y": "", "a.py": ""},
         ["a.py", "src/build/y"], excluded=4),
    Case("kaleignore, and a negation", {".kaleignore": "*.csv\n!keep.csv\n", "big.csv": "",
         "keep.csv": ""}, ["keep.csv"], excluded=2),  # the .kaleignore itself is hidden
    Case("a deeper ignore file wins", {".gitignore": "*.txt\n", "sub/.gitignore": "!b.txt\n",
         "a.txt": "", "sub/b.txt": "", "sub/c.txt": ""}, ["sub/b.txt"], excluded=4),
    Case("hidden files and folders", {".env": "SECRET=1", ".git/config": "", ".ipynb_checkpoints/a": "",
         "nb.ipynb": "{}"}, ["nb.ipynb"], excluded=3),
    Case("virtualenvs and caches", {"venv/pyvenv.cfg": "", "venv/lib/x.py": "", "conda/conda-meta/h": "",
         "pkg/__pycache__/m.pyc": "", "pkg/__init__.py": ""}, ["pkg/__init__.py"], excluded=3),
    Case("the local backend's jobs folder", {"jobs/.kale_ext-jobs": "", "jobs/nb-abcde/job.json": "{}",
         "train.py": ""}, ["train.py"], excluded=1),
    Case("the outputs folder", {"outputs/job/model.pt": "w", "train.py": ""}, ["train.py"], excluded=1,
         exclude=("outputs",)),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_which_files_travel(tmp_path, case):
    ws = collect(tree(tmp_path, case.files), exclude=case.exclude)
    assert shipped(ws) == case.ships
    assert ws.excluded == case.excluded


def test_listing_is_sorted_with_sizes_modes_and_folders(tmp_path):
    tree(tmp_path, {"b.py": "xx", "a/z.txt": "y", "run.sh": "#!/bin/sh\n"})
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "empty").mkdir()
    ws = collect(tmp_path)
    assert [(f.path, f.size, oct(f.mode)) for f in ws.files] == [
        ("a/", 0, "0o755"), ("a/z.txt", 1, "0o644"), ("b.py", 2, "0o644"), ("empty/", 0, "0o755"),
        ("run.sh", 10, "0o755"),
    ]  # fmt: skip
    assert ws.count == 3 and ws.size == 13


def test_links_inside_travel_as_links_and_links_out_are_skipped_and_reported(tmp_path):
    outside = tmp_path / "outside"
    root = tree(tmp_path / "ws", {"helpers.py": "x = 1", "data/a.csv": "1"})
    tree(outside, {"secret.txt": "no"})
    (root / "alias.py").symlink_to("helpers.py")
    (root / "shared").symlink_to(root / "data")  # absolute, but inside
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "leakdir").symlink_to(outside)
    (root / "broken").symlink_to(root / "missing")
    ws = collect(root)
    links = {f.path: f.link for f in ws.files if f.link is not None}
    assert links == {"alias.py": "helpers.py", "shared": "data"}
    skipped = dict(ws.skipped)
    assert set(skipped) == {"leak.txt", "leakdir", "broken"}
    assert "outside the workspace" in skipped["leak.txt"] and "broken" in skipped["broken"]
    assert "workspace: leak.txt is not shipped: a symbolic link to" in ws.warnings()[1]


def test_a_pipe_is_skipped_and_reported(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    ws = collect(tree(tmp_path, {"a.py": ""}))
    assert shipped(ws) == ["a.py"]
    assert ws.skipped == [("fifo", "not a regular file (a pipe, socket or device)")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: no unreadable file to make")
def test_an_unreadable_file_is_skipped_and_reported(tmp_path):
    tree(tmp_path, {"a.py": "", "private.txt": "x"})
    (tmp_path / "private.txt").chmod(0)
    ws = collect(tmp_path)
    assert ws.skipped == [("private.txt", "cannot be read (permission denied)")]


def test_a_workspace_over_its_cap_names_its_largest_files_and_the_ways_out(tmp_path):
    tree(tmp_path, {"model.bin": b"x" * 3000, "data.csv": b"y" * 2000, "a.py": "z"})
    with pytest.raises(ConfigError) as info:
        collect(tmp_path, max_size=4096)
    message = str(info.value)
    assert message.startswith("workspace: ")
    assert "model.bin (2.9 KiB), data.csv (2.0 KiB), a.py (1 B)" in message
    for way in (
        ".kaleignore",
        "--volume pvc:NAME:/mount",
        "--workspace-max-size",
        "--no-workspace",
    ):
        assert way in message
    assert collect(tmp_path, max_size=4096, check_size=False).size == 5001


def test_a_huge_folder_is_refused_early(tmp_path, monkeypatch):
    monkeypatch.setattr("kale_ext.job.workspace.MAX_ENTRIES", 10)
    tree(tmp_path, {f"f{i}.txt": "" for i in range(11)})
    with pytest.raises(ConfigError, match="holds more than 10 files and folders"):
        collect(tmp_path)


def test_each_way_out_of_a_huge_folder_that_its_error_names_works(tmp_path, monkeypatch):
    """`pick a smaller folder with --workspace DIR, exclude folders in .kaleignore, or ship
    nothing with --no-workspace`: each one, applied, is accepted."""
    monkeypatch.setattr("kale_ext.job.workspace.MAX_ENTRIES", 10)
    tree(tmp_path, {**{f"data/f{i}.txt": "" for i in range(11)}, "code/train.py": ""})
    place = Place(tmp_path)
    with pytest.raises(ConfigError, match="--workspace DIR") as said:
        choose({}, None, place)
    assert "--no-workspace" in str(said.value) and ".kaleignore" in str(said.value)
    assert choose({"workspace": "code"}, None, place).modules == ["train"]
    assert choose({"no_workspace": True}, None, place) is None
    (tmp_path / ".kaleignore").write_text("data/\n")
    assert choose({}, None, place).modules == []


def test_modules_and_packages_a_job_can_import(tmp_path):
    tree(tmp_path, {"helpers.py": "", "mylib/__init__.py": "", "mylib/core.py": "", "data/x.py": "",
                    "not-a-module.py": "", "sub/deep.py": ""})  # fmt: skip
    assert collect(tmp_path).modules == ["helpers", "mylib"]
    assert modules_beside(tmp_path) == ["helpers", "mylib"]
    assert modules_beside(None) == [] and modules_beside(tmp_path / "missing") == []


def test_the_summary_the_preview_shows(tmp_path):
    tree(tmp_path, {"big.csv": b"1" * 100, "a.py": "x", ".gitignore": "*.tmp\n", "t.tmp": ""})
    summary = collect(tmp_path).summary("work")
    assert summary == {
        "root": "work", "files": 2, "size": 101, "max_size": 10 * 2**20, "excluded": 2,
        "largest": [{"path": "big.csv", "size": 100}, {"path": "a.py", "size": 1}],
        "skipped": [], "modules": ["a"],
        "list": [{"path": "a.py", "size": 1}, {"path": "big.csv", "size": 100}],
        "list_truncated": False,
    }  # fmt: skip


# ----- choosing the folder -----------------------------------------------------------------------


@pytest.fixture
def home(tmp_path) -> Path:
    return tree(tmp_path / "root", {"project/nb/a.py": "", "project/lib.py": "", "other/x.py": "",
                                    "project/nb/outputs/old/model.pt": "w"})  # fmt: skip


def test_by_default_the_notebooks_folder_without_its_outputs(home):
    ws = choose(None, {}, Place(home / "project" / "nb"))
    assert ws.root == home / "project" / "nb" and shipped(ws) == ["a.py"]


@pytest.mark.parametrize(
    "options, metadata, ships",
    [
        ({"no_workspace": True}, {}, None),
        ({}, {"options": {"no_workspace": True}}, None),
        ({"no_workspace": False}, {"options": {"no_workspace": True}}, ["a.py"]),
        ({"workspace": ".."}, {}, ["lib.py", "nb/a.py"]),  # relative to the base (here: nb)
        ({}, {"options": {"workspace": ".."}}, ["lib.py", "nb/a.py"]),
    ],
)
def test_options_and_the_notebooks_metadata_choose(home, options, metadata, ships):
    folder = home / "project" / "nb"
    ws = choose(options, metadata, Place(folder, base=folder))
    assert (shipped(ws) if ws else None) == ships


def test_outputs_beside_the_notebook_stay_out_of_a_wider_workspace(home):
    ws = choose({"workspace": "project"}, {}, Place(home / "project" / "nb", base=home))
    assert shipped(ws) == ["lib.py", "nb/a.py"]


@pytest.mark.parametrize(
    "options, metadata, field, message",
    [
        ({"workspace": "../.."}, {}, "workspace", "leads outside the server root"),
        ({}, {"options": {"workspace": "/etc"}}, "metadata.kale_ext.options.workspace",
         "relative to the notebook's"),
        ({"workspace": "missing"}, {}, "workspace", "is not a folder"),
        ({"workspace_max_size": "lots"}, {}, "workspace_max_size", "not a Kubernetes quantity"),
        ({"no_workspace": "yes"}, {}, "no_workspace", "must be true or false"),
    ],
)  # fmt: skip
def test_a_folder_that_cannot_be_the_workspace_is_a_config_error(home, options, metadata, field,
                                                                 message):  # fmt: skip
    folder = home / "project"
    with pytest.raises(ConfigError) as info:
        choose(options, metadata, Place(folder, base=folder, confine=home / "project"))
    assert info.value.field == field and message in info.value.message


def test_a_link_out_of_the_server_root_is_refused(home, tmp_path):
    (home / "project" / "escape").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="leads outside the server root"):
        choose({"workspace": "project/escape"}, {}, Place(None, base=home, confine=home))


def test_a_notebook_without_a_folder_ships_nothing_unless_one_is_named(home):
    assert choose(None, {}, Place()) is None
    assert choose(None, {}, Place(home / "not-saved-yet")) is None
    assert choose({"workspace": str(home / "other")}, {}, Place()).modules == ["x"]


def test_the_size_cap_is_an_option(home):
    ws = choose({"workspace_max_size": "1Ki"}, {}, Place(home / "project"))
    assert ws.max_size == 1024


def test_an_edited_ignore_file_applies_at_the_next_collect(tmp_path):
    root = tree(tmp_path, {".gitignore": "*.csv\n", "a.csv": "1", "b.py": "2"})
    assert [f.path for f in collect(root).files] == ["b.py"]
    (root / ".gitignore").write_text("*.py\n")  # the rules' answers are kept by content
    assert [f.path for f in collect(root).files] == ["a.csv"]
