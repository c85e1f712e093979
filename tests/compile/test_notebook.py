import pytest

from kale_ext.compile.notebook import (
    TAGS,
    Role,
    match_tag,
    parse_notebook,
    plan_cell,
    read_notebook,
)
from kale_ext.errors import NotebookError
from tests.conftest import notebook


@pytest.mark.parametrize(
    "tag, role, setting",
    [
        ("imports", Role.IMPORTS, None),
        ("functions", Role.FUNCTIONS, None),
        ("parameters", Role.PARAMETERS, None),
        ("pipeline-parameters", Role.PARAMETERS, None),
        ("training", Role.TRAINING, None),
        ("skip", Role.SKIP, None),
        ("distributed", Role.DISTRIBUTED, None),
        ("step:load_data", Role.TRAINING, None),
        ("block:train", Role.TRAINING, None),
        ("pipeline-metrics", Role.TRAINING, None),
        ("limit:nvidia.com/gpu:2", None, "limits"),
        ("annotation:team:ml", None, "annotations"),
        ("label:app:kale", None, "labels"),
        ("image:python:3.11", None, "image"),
    ],
)
def test_tag_grammar_maps_known_tags(tag, role, setting):
    rule, _ = match_tag(tag)
    assert rule.role == role
    assert rule.setting == setting


@pytest.mark.parametrize("tag", ["step:Bad-Name", "imports2", "limit:cpu", "Skip"])
def test_malformed_or_unknown_tags_do_not_match(tag):
    assert match_tag(tag) is None


def test_every_tag_rule_is_explained():
    for rule in TAGS:
        assert rule.role or rule.setting or rule.note, rule.pattern


def _cell(tags, source="x = 1"):
    nb = parse_notebook(notebook((source, tags)))
    return plan_cell(nb.cells[0])


def test_unknown_tag_is_a_warning_naming_cell_and_tag():
    plan = _cell(["trianing"])
    assert plan.role is Role.TRAINING
    [d] = plan.diagnostics
    assert d.severity == "warning" and "`trianing`" in d.message and d.cell == 0


def test_kale_tags_are_mapped_or_explained():
    plan = _cell(["step:train", "prev:load", "limit:memory:4Gi", "label:team:ml", "cache:enabled"])
    assert plan.role is Role.TRAINING
    assert plan.settings == {"limits": {"memory": "4Gi"}, "labels": {"team": "ml"}}
    messages = " ".join(d.message for d in plan.diagnostics)
    assert "prev:load" in messages and "cache:enabled" in messages


def test_conflicting_roles_are_an_error():
    plan = _cell(["skip", "imports"])
    [d] = plan.diagnostics
    assert d.severity == "error" and "`skip`" in d.message and "`imports`" in d.message


def test_untagged_code_cell_is_training_and_markdown_has_no_role():
    assert _cell([]).role is Role.TRAINING
    nb = parse_notebook(notebook(("md", "# title")))
    assert plan_cell(nb.cells[0]).role is None


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", "not valid notebook JSON (line 1, column 2)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not UTF-8 text"),
        (b"[1, 2]", "the JSON is not an object"),
        (b'{"cells": []}', "no `nbformat` version"),
        (b'{"nbformat": 99, "cells": []}', "nbformat version 99 is not supported"),
        (b'{"nbformat": 2, "worksheets": []}', "nbformat version 2 is not supported"),
        (b'{"nbformat": 4, "cells": {}}', "no `cells` list"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "video"}]}', "cell 1: unknown cell_type"),
        (
            b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}',
            "cell 1: `source` must be a string",
        ),
        (
            b'{"nbformat": 4, "metadata": {"kernelspec": {"language": "R"}}, "cells": []}',
            "kernel language is R",
        ),
    ],
)
def test_bad_files_give_clear_errors(write_nb, content, message):
    path = write_nb(content)
    with pytest.raises(NotebookError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_notebook(path)
    assert path.read_bytes() == content  # never changed


def test_missing_notebook(tmp_path):
    with pytest.raises(NotebookError, match="notebook not found"):
        read_notebook(tmp_path / "nope.ipynb")


def test_nbformat3_is_converted():
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "outputs": [],
                                   "language": "python", "metadata": {"tags": ["training"]}}]}],
    }  # fmt: skip
    nb = parse_notebook(v3)
    assert [(c.source, c.tags) for c in nb.cells] == [("x = 1", ("training",))]


def test_list_sources_are_joined_and_name_is_kept_without_path(write_nb):
    content = notebook("a")
    content["cells"][0]["source"] = ["x = 1\n", "y = 2"]
    nb = read_notebook(write_nb(content, "my run.ipynb"))
    assert nb.cells[0].source == "x = 1\ny = 2"
    assert nb.name == "my run.ipynb" and nb.stem == "my run"
    assert len(nb.sha256) == 64
