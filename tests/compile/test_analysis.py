from dataclasses import dataclass

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import CompileError
from tests.conftest import notebook


@dataclass
class Case:
    name: str
    cells: tuple
    error: str = ""  # expected message fragment; "" means it compiles
    cell: int | None = None  # expected 1-based cell of the error
    line: int | None = None


CASES = [
    Case("defined before use", ("x = 1", "print(x)")),
    Case("parameter is defined", (("lr = 0.1", ["parameters"]), "print(lr)")),
    Case("builtins are defined", ("print(len(range(3)), __name__)",)),
    Case("used in a later cell only", ("print(x)", "x = 1"), "defined only later, in cell 2", 1, 1),
    Case(
        "defined only in a skip cell",
        (("df = 1", ["skip"]), "\n\ny = df + 1"),
        "`df` used in cell 2, line 3 is defined only in cell 1, which is tagged skip",
        2,
        3,
    ),
    Case(  # a left-out cell that does not parse is passed over, not reported
        "defined only in a skip cell after a broken one",
        (("df = (", ["skip"]), ("df = 1", ["skip"]), "y = df"),
        "`df` used in cell 3, line 1 is defined only in cell 2, which is tagged skip",
        3,
        1,
    ),
    Case(
        "defined in two skip cells: the first is named",
        (("df = 1", ["skip"]), ("df = 2", ["skip"]), "y = df"),
        "is defined only in cell 1, which is tagged skip",
        3,
        1,
    ),
    Case(
        "never defined",
        ("x = 1\nprint(y)",),
        "name `y` used in cell 1, line 2 is never defined",
        1,
        2,
    ),
    Case("did you mean", ("total = 1\nprint(totl)",), "did you mean `total`?"),
    Case("inside nested function", ("def f():\n    return g()\n",), "`g` used in cell 1, line 2"),
    Case("function may use a later cell", ("def f():\n    return y\n", "y = 1\nf()")),
    Case("inside lambda", ("f = lambda: z",), "`z` used in cell 1, line 1 is never defined"),
    Case("inside comprehension", ("xs = [a + b for a in range(3)]",), "`b` used in cell 1"),
    Case("comprehension runs now", ("xs = [v for _ in range(2)]", "v = 1"), "defined only later"),
    Case("class body runs now", ("class A:\n    k = w\n", "w = 1"), "defined only later"),
    Case("decorator", ("@trace\ndef f():\n    pass\n",), "`trace` used in cell 1, line 1"),
    Case("default argument", ("def f(a=dflt):\n    return a\n",), "`dflt` used in cell 1, line 1"),
    Case("annotation in a def", ("def f(a: Frame):\n    return a\n",), "`Frame` used"),
    Case("del of undefined", ("del ghost",), "`ghost` used in cell 1, line 1"),
    Case("global helper", ("n = 0\ndef bump():\n    global n\n    n += 1\n", "bump()\nprint(n)")),
    Case(
        "global creates a name",
        ("def setup():\n    global cfg\n    cfg = 1\n", "setup()\nprint(cfg)"),
    ),
    Case(
        "nonlocal",
        ("def f():\n    a = 1\n    def g():\n        nonlocal a\n        a += 1\n    g()\n",),
    ),
    Case("get_ipython", ("ip = get_ipython()",), "exists only inside a notebook kernel"),
    Case("display gets a shim", ("display(1)",)),
    Case("star import is a warning", ("from math import *\nprint(pi)",)),
    Case(
        "distributed cell is not in the body",
        (
            (
                "from kale_ext.distributed import DistributedConfig\ncfg = DistributedConfig()",
                ["distributed"],
            ),
            "print(cfg)",
        ),
        "which is tagged distributed",
    ),
    Case(
        "functions run before training",
        ("k = 2", ("double = k * 2", ["functions"])),
        "defined only later, in cell 1",
        2,
    ),
    Case(
        "match statement binds", ("match [1, 2]:\n    case [a, *rest]:\n        print(a, rest)\n",)
    ),
    Case("walrus binds", ("if (n := 3) > 2:\n    print(n)",)),
    Case("top-level return", ("x = 1\nif x:\n    return x",), "`return` outside a function", 1, 3),
    Case("top-level yield", ("yield 1",), "`yield` outside a function", 1, 1),
    Case("top-level await", ("import asyncio\nawait asyncio.sleep(0)",), "top-level `await`", 1, 2),
    Case("return inside def is fine", ("def f():\n    return 1\nprint(f())",)),
    # what Python's compiler refuses where the AST walk finds no top-level statement: in its words
    Case(
        "return in a class body",
        ("import math", "class A:\n    x = 1\n    return x"),
        "'return' outside function",
        2,
        3,
    ),
    Case(
        "await in a plain def", ("def f(x):\n    await x",), "'await' outside async function", 1, 2
    ),
    Case("break outside a loop", ("x = 1\nif x:\n    break",), "'break' outside loop", 1, 3),
    Case("break in a loop is fine", ("for i in range(3):\n    if i:\n        break",)),
    Case(
        "two starred targets",
        ("xs = [1, 2, 3]", "first = 0\na, *b, *c = xs"),
        "multiple starred expressions in assignment",
        2,
        2,
    ),
    Case("a starred value", ("xs = [1]\ny = *xs",), "can't use starred expression here", 1, 2),
    Case(
        "a bare except before another",
        ("try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass",),
        "default 'except:' must be last",
        1,
        3,
    ),
    Case("starred arguments are fine", ("xs = [1, 2]\nprint(*xs, sep='')\na, *b = xs",)),
    Case("async def is fine", ("async def f(x):\n    await x\n    return 1",)),
    Case("try/except name", ("try:\n    pass\nexcept Exception as e:\n    print(e)",)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_self_containment(case: Case):
    nb = notebook(*case.cells)
    if not case.error:
        job = compile_notebook(nb)
        assert job.source
        return
    with pytest.raises(CompileError) as info:
        compile_notebook(nb)
    [d] = info.value.errors
    assert case.error in d.message, d.message
    if case.cell:
        assert d.cell == case.cell - 1
    if case.line:
        assert d.line == case.line


def test_star_import_warning_names_the_cell():
    job = compile_notebook(notebook("from math import *\nprint(pi)"))
    [w] = job.warnings
    assert w.code == "star-import" and "star import in cell 1" in w.message


def test_all_errors_are_reported_at_once():
    with pytest.raises(CompileError) as info:
        compile_notebook(notebook("print(a)", "print(b)\n!ls"))
    messages = [str(d) for d in info.value.errors]
    assert len(messages) == 2 and "cell 1" in messages[0] and "`!ls`" in messages[1]
