"""What the compiler reads from each body cell (kale_ext/compile/cells.py): a cell that does not
parse is an error at its own line and leaves the body, settings set twice are warned about,
and a line map is kept only where a cell's code moved its lines."""

from __future__ import annotations

from kale_ext.compile.cells import analyse, cell_lines, imports_in, merge_settings
from kale_ext.compile.notebook import Cell, Role
from kale_ext.compile.transform import CellCode


def test_a_cell_that_does_not_parse_is_an_error_at_its_line_and_leaves_the_body():
    good, bad = Cell(0, "code", "x = 1\n"), Cell(1, "code", "y = 2\nif:\n", id="c1")
    body = [(Role.TRAINING, good, CellCode("x = 1\n")), (Role.TRAINING, bad, CellCode(bad.source))]
    diags: list = []
    analysed = analyse(body, diags)
    assert [bc.cell.index for bc in analysed] == [0] and [item[1] for item in body] == [good]
    assert [(d.severity, d.cell, d.line) for d in diags] == [("error", 1, 2)]


def test_a_setting_two_cells_give_differently_is_warned_about_and_the_later_wins():
    settings: dict = {}
    diags: list = []
    merge_settings(settings, {"env": {"A": "1"}, "nodes": 2}, Cell(0, "code", ""), diags)
    merge_settings(settings, {"env": {"A": "2", "B": "3"}, "nodes": 4}, Cell(3, "code", ""), diags)
    assert settings == {"env": {"A": "2", "B": "3"}, "nodes": 4}
    assert [(d.code, d.cell) for d in diags] == [("setting-conflict", 3)]
    assert "`env` `A` is set to '1' by an earlier cell and to '2' here" in diags[0].message


def test_a_line_map_only_where_the_code_moved_its_lines():
    assert cell_lines(CellCode("a = 1\nb = 2")) is None
    assert cell_lines(CellCode("a = 1\nb = 2", origin=[1, 2])) is None
    assert cell_lines(CellCode("a = 1\nb = 2", origin=[2, 4])) == (2, 4)


def test_imports_are_read_only_from_cells_that_import():
    assert imports_in("x = 1\n") == ()
    assert [module for module, _ in imports_in("import numpy as np\nfrom os import path\n")] == [
        "numpy",
        "os",
    ]
