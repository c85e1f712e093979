"""Reading back the source of the functions and classes a kernel defined."""

from __future__ import annotations

import ast
import functools
import linecache

import pytest

from kale_ext.ipython.definitions import class_source, defined_name, function_source, unwrap


@pytest.fixture
def cell(monkeypatch):
    """Run ``text`` as a kernel runs a cell (its lines in linecache); returns its namespace."""

    def run(text: str, n: int = 1) -> dict:
        filename = f"<ipython-input-{n}-kale-ext-test>"
        lines = text.splitlines(True)
        monkeypatch.setitem(linecache.cache, filename, (len(text), None, lines, filename))
        ns = {"__name__": "__main__"}
        exec(compile(text, filename, "exec"), ns)
        return ns

    return run


def test_a_functions_source_is_dedented_with_its_decorators(cell):
    ns = cell("import functools\nif True:\n    @functools.cache\n    def f(x):\n        return x\n")
    assert function_source(unwrap(ns["f"])) == "@functools.cache\ndef f(x):\n    return x\n"


def test_a_function_made_by_exec_has_no_source():
    ns: dict = {}
    exec("def made():\n    pass\n", ns)
    assert function_source(ns["made"]) is None
    assert function_source(len) is None


def test_unwrap_finds_the_function_under_wrapping_decorators():
    def f(x):
        return x

    @functools.wraps(f)
    def wrapper(x):
        return f(x)

    assert unwrap(wrapper) is f and unwrap(functools.lru_cache(f)) is f
    assert unwrap(f) is f and unwrap(3) == 3

    class Wrapped:  # a class with __wrapped__ stays itself
        __wrapped__ = f

    assert unwrap(Wrapped) is Wrapped


def test_a_class_from_the_cell_its_methods_came_from(cell):
    net = (
        "@keep\nclass Net:\n    def forward(self):\n        return 1\n\n    @property\n"
        "    def size(self):\n        return 2\n"
    )
    ns = cell(f"def keep(c):\n    return c\n\n\n{net}y = 2\n")
    assert class_source(ns["Net"], history=[]) == net


def test_a_class_without_methods_from_the_newest_cell_of_the_history():
    ns: dict = {"__name__": "__main__"}
    exec("class Empty:\n    pass\n", ns)
    history = ["class Empty:\n    x = 1\n", "print(1)", "@dataclass\nclass Empty:\n    y: int\n"]
    assert class_source(ns["Empty"], history) == "@dataclass\nclass Empty:\n    y: int\n"
    assert class_source(ns["Empty"], ["print('no class here')", "class Empty(:"]) is None


@pytest.mark.parametrize(
    ("source", "name"),
    [("def f():\n    pass\n", "f"), ("async def g():\n    pass\n", "g"),
     ("@d\nclass C:\n    pass\n", "C"), ("x = 1\n", None),
     ("def a():\n    pass\ndef b():\n    pass\n", None)],
)  # fmt: skip
def test_defined_name(source, name):
    assert defined_name(ast.parse(source)) == name
