"""Work kept by a cell's exact source: done once per source, redone for a changed or too big
one, never kept when it fails, and forgotten on demand; a recompile with one cell changed gives
what a first compile gives."""

from __future__ import annotations

import pytest

from kale_ext.compile import kept
from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import CompileError
from tests.conftest import notebook


@pytest.fixture
def counted():
    calls: list[str] = []

    @kept.by_source
    def work(source: str, flag: bool = False) -> tuple:
        calls.append(source)
        if source == "fail":
            raise SyntaxError("not kept")
        return (source.upper(), flag)

    yield work, calls
    kept.forget_cells()


def test_the_same_source_is_worked_on_once(counted):
    work, calls = counted
    assert work("x = 1") == work("x = 1") == ("X = 1", False)
    assert work("x = 2") == ("X = 2", False)
    assert work("x = 1", True) == ("X = 1", True)  # other arguments: other work
    assert calls == ["x = 1", "x = 2", "x = 1"]


def test_a_source_over_the_bound_is_worked_on_each_time(counted):
    work, calls = counted
    big = "x" * (kept.MAX_SOURCE + 1)
    work(big)
    work(big)
    assert len(calls) == 2


def test_a_failure_is_not_kept(counted):
    work, calls = counted
    for _ in range(2):
        with pytest.raises(SyntaxError):
            work("fail")
    assert calls == ["fail", "fail"]


def test_forget_cells_drops_what_was_kept(counted):
    work, calls = counted
    work("x = 1")
    kept.forget_cells()
    work("x = 1")
    assert calls == ["x = 1", "x = 1"]


CELLS = (
    ("import math", ["imports"]),
    ("lr = 0.1", ["parameters"]),
    "%time total = math.sqrt(lr)",
    "values = [total * i for i in range(3)]\nprint(values)",
)


@pytest.mark.parametrize(
    "change",
    [
        "values = [total + i for i in range(4)]\nprint(values)",  # another program
        "values = [total * i for i in range(3)]\nprint(values)  # a comment",
        "print(undefined_here)",  # now an error, naming its cell and line
        "%time values = total\nprint(values)",
    ],
)
def test_a_recompile_with_one_cell_changed_is_a_first_compile(change):
    kept.forget_cells()
    compile_notebook(notebook(*CELLS))  # every cell's work kept
    changed = notebook(*CELLS[:-1], change)

    def result(nb):
        try:
            return compile_notebook(nb).to_dict()
        except CompileError as e:
            return [d.to_dict() for d in e.diagnostics]

    again = result(changed)
    kept.forget_cells()
    assert again == result(changed)
