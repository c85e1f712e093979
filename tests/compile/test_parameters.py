"""Parameters: a `parameters` cell's literal assignments become the function's keyword
parameters; anything else is refused with the cell and line it is on."""

from __future__ import annotations

import pytest

from kale_ext.compile.notebook import Cell
from kale_ext.compile.parameters import parse_parameters


def parse(source: str) -> tuple[dict[str, tuple[object, int]], list[str]]:
    """(name → (default, line)), and the diagnostics in words, of a cell (the notebook's 4th)."""
    cell = Cell(3, "code", source, ("parameters",), "p1")
    diagnostics = []
    found = parse_parameters(cell, source, diagnostics)
    assert all(p.cell is cell for p in found)
    assert all((d.cell, d.cell_id) == (3, "p1") for d in diagnostics)
    return {p.name: (p.default, p.line) for p in found}, [str(d) for d in diagnostics]


def test_literal_assignments_become_parameters_with_their_lines():
    source = (
        '"""Knobs of the run."""\n'  # a docstring is a comment
        "lr = 1e-3\n"
        "epochs = 10\n"
        "offset = -2\n"
        "debug = False\n"
        "name = 'run'\n"
        "checkpoint = None\n"
        "layers = [64, (32, 16)]\n"
        "extra = {'dropout': 0.1}\n"
    )
    assert parse(source) == (
        {
            "lr": (0.001, 2),
            "epochs": (10, 3),
            "offset": (-2, 4),
            "debug": (False, 5),
            "name": ("run", 6),
            "checkpoint": (None, 7),
            "layers": ([64, (32, 16)], 8),
            "extra": ({"dropout": 0.1}, 9),
        },
        [],
    )


def test_annotated_assignments_are_parameters_too():
    assert parse("lr: float = 0.1\nsizes: list[int] = [1, 2]") == (
        {"lr": (0.1, 1), "sizes": ([1, 2], 2)},
        [],
    )


@pytest.mark.parametrize(
    "source, error",
    [
        ("lr = (1,\n", "cell 4, line 1: syntax error: '(' was never closed"),
        (
            "x = 1\nimport os",
            "cell 4, line 2: a parameters cell holds only assignments "
            "`name = literal`; found `import os`",
        ),
        (
            "lr: float",
            "cell 4, line 1: a parameters cell holds only assignments "
            "`name = literal`; found `lr: float`",
        ),
        ("a = b = 1", "cell 4, line 1: a parameters cell holds only assignments"),
        ("lr = 1\nlr += 1", "cell 4, line 2: a parameters cell holds only assignments"),
        ("a, b = 1, 2", "cell 4, line 1: assign one parameter per line: `name = literal`"),
        ("config.lr = 1", "cell 4, line 1: assign one parameter per line"),
        (
            "lr = compute()",
            "cell 4, line 1: parameter `lr` must be a literal (number, string, "
            "bool, None, or a list/dict/tuple of these), not `compute()`",
        ),
        ("n = 2 ** 8", "cell 4, line 1: parameter `n` must be a literal"),
        (
            "s = {1, 2}",
            "cell 4, line 1: parameter `s` has a set value; use a number, string, "
            "bool, None, list, dict or tuple",
        ),
        ("data = b'raw'", "cell 4, line 1: parameter `data` has a bytes value"),
        ("z = 1j", "cell 4, line 1: parameter `z` has a complex value"),
    ],
)
def test_refused_statements_name_cell_and_line(source, error):
    _, errors = parse(source)
    [message] = errors
    assert message.startswith(error), message


def test_every_refusal_is_reported_and_the_valid_parameters_kept():
    found, errors = parse("a = 1\nb = f()\nc = 3\nprint(c)\nd = {2}")
    assert found == {"a": (1, 1), "c": (3, 3)}
    assert [e.split(":")[0] for e in errors] == [
        "cell 4, line 2",
        "cell 4, line 4",
        "cell 4, line 5",
    ]
