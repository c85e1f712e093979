"""server/paths.py's under_root: a folder as the path Jupyter serves it under (resolve_notebook's
tests are in tests/test_files.py, with the other checks of a path the user gives)."""

from __future__ import annotations

import os

import pytest

from kale_ext.server.paths import under_root


@pytest.fixture
def root(tmp_path):
    (tmp_path / "root" / "outputs" / "job-a").mkdir(parents=True)
    (tmp_path / "root" / ".hidden" / "job-b").mkdir(parents=True)
    (tmp_path / "elsewhere" / "job-c").mkdir(parents=True)
    return tmp_path / "root"


def test_a_folder_under_the_root_is_its_path_from_the_root(root):
    assert under_root(str(root / "outputs" / "job-a"), str(root), False) == "outputs/job-a"
    assert under_root(str(root), str(root), False) == ""


def test_a_folder_outside_the_root_empty_or_hidden_is_none(root):
    assert under_root(str(root.parent / "elsewhere" / "job-c"), str(root), False) is None
    assert under_root("", str(root), False) is None
    assert under_root(str(root / ".hidden" / "job-b"), str(root), False) is None
    # served when the contents manager serves hidden files
    assert under_root(str(root / ".hidden" / "job-b"), str(root), True) == ".hidden/job-b"


def test_a_link_is_where_it_leads(root):
    os.symlink(root.parent / "elsewhere", root / "out")
    assert under_root(str(root / "out" / "job-c"), str(root), False) is None
    os.symlink(root / "outputs", root.parent / "link-in")
    assert under_root(str(root.parent / "link-in" / "job-a"), str(root), False) == "outputs/job-a"
