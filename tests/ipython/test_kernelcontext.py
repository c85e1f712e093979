"""Recovering a `%%trainjob` cell's context from a real IPython shell: literals become
parameters, notebook functions and classes their source, imports the statements the kernel ran;
what cannot travel is refused with a message naming it. Also the notebook built from a context,
which compiles and runs, and finding the kernel's notebook file."""

from __future__ import annotations

import functools
import linecache
import subprocess
import sys
import types

import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.ipython import kernelcontext
from kale_ext.ipython.kernelcontext import (
    MAX_LITERAL,
    Definition,
    KernelContext,
    NotebookNotFound,
    context_notebook,
    find_notebook,
    from_shell,
    session_notebook_name,
)


@pytest.fixture
def kernel(shell):
    """The shell with an empty namespace and history; call it with cells to run them."""
    shell.reset(new_session=True)

    def run(*cells: str):
        for cell in cells:
            result = shell.run_cell(cell, store_history=True)
            assert result.success, result.error_in_exec or result.error_before_exec
        return shell

    return run


def problems(ctx: KernelContext) -> list[str]:
    return [str(p) for p in ctx.problems]


def test_literals_become_parameters_with_the_kernels_values(kernel):
    shell = kernel("lr = 1e-3\nepochs = 3\nsizes = [64, (32, 'relu')]\ncfg = {'debug': False}")
    ctx = from_shell(shell, "scaled = lr * 2\nprint(scaled, epochs, sizes, cfg)\n")
    assert ctx.parameters == {
        "cfg": {"debug": False},
        "epochs": 3,
        "lr": 1e-3,
        "sizes": [64, (32, "relu")],
    }  # `scaled` is the cell's own
    assert ctx.imports == [] and ctx.definitions == [] and ctx.problems == []


def test_the_kernels_own_names_and_builtins_stay_behind(kernel):
    shell = kernel("1 + 1", "x = _")
    ctx = from_shell(shell, "print(_, __, _i1, In, Out, get_ipython, len, x)")
    assert ctx.parameters == {"x": 2} and ctx.problems == []


def test_functions_and_classes_travel_with_what_they_read(kernel):
    class_cell = (
        "class Scaler:\n"
        '    """Scales by the learning rate."""\n'
        "    def __call__(self, x):\n"
        "        return m.sqrt(x) * lr\n"
    )
    shell = kernel(
        "import math as m\nfrom functools import lru_cache",
        "lr = 0.5",
        class_cell,
        "@lru_cache\ndef scaled(x):\n    return Scaler()(x)\n",
        "train = scaled",
    )
    ctx = from_shell(shell, "print(train(16))")
    assert ctx.definitions == [
        Definition("Scaler", "class", class_cell),
        Definition("scaled", "function", "@lru_cache\ndef scaled(x):\n    return Scaler()(x)\n"),
        Definition("train", "alias", "train = scaled\n"),
    ]  # what a definition reads comes first; aliases last
    assert ctx.imports == ["import math as m", "from functools import lru_cache"]
    assert ctx.parameters == {"lr": 0.5} and ctx.problems == []


def test_imports_are_the_statements_the_kernel_ran(kernel):
    shell = kernel(
        "import os.path as p\nif True:\n    from json import dumps as to_json", "import os"
    )
    ctx = from_shell(shell, "print(p.sep, to_json([]), os.path.join('a', 'b'))")
    assert ctx.imports == ["import os", "import os.path", "import os.path as p",
                           "from json import dumps as to_json"]  # fmt: skip


def test_a_recovered_context_compiles_and_runs(kernel, tmp_path):
    shell = kernel(
        "import math",
        "base = 2\n",
        "def area(r):\n    return round(math.pi * r**base, 2)\n",
    )
    body = "print('area', area(3))\n"
    ctx = from_shell(shell, body)
    nb, labels, body_index = context_notebook(ctx, body, "circle.ipynb")
    assert [c.tags for c in nb.cells] == [("imports",), ("parameters",), ("functions",), ()]
    assert labels == {
        0: "the imports recovered from the kernel",
        1: "the kernel's variables",
        2: "function `area` (from the kernel)",
        3: "the cell",
    }
    assert body_index == 3 and nb.cells[body_index].source == body
    assert context_notebook(ctx, body, "circle.ipynb")[0].sha256 == nb.sha256
    assert context_notebook(ctx, body + "\n", "circle.ipynb")[0].sha256 != nb.sha256
    job = compile_notebook(nb, function_name="circle")
    module = write_module(job, tmp_path)
    out = subprocess.run([sys.executable, str(module)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["area 28.27"]
    run_with = subprocess.run(
        [sys.executable, str(module), '{"base": 3}'], capture_output=True, text=True
    )
    assert run_with.stdout.splitlines() == ["area 84.82"]  # the kernel's value is a default


@pytest.mark.parametrize(
    ("cell", "read", "message"),
    [
        ("f = lambda x: x", "f(1)",
         "line 1: `f` is a lambda, whose source cannot be separated from its line: define it "
         "with def"),
        ("import os\nfh = open(os.devnull)", "fh.read()",
         "line 1: `fh` is an open file: it cannot travel to another process; open it inside "
         "the cell"),
        ("class Net:\n    pass\nnet = Net()", "print(net)",
         "line 1: `net` is an instance of the notebook's class `Net`: its state cannot travel; "
         "create it inside the cell"),
        ("def outer():\n    def inner():\n        pass\n    return inner\ninner = outer()",
         "inner()",
         "line 1: `inner` is a function defined inside another function: its closure cannot "
         "travel; define it at the top level of a cell"),
        ("g = (i for i in range(3))", "next(g)",
         "line 1: `g` is a generator: its progress cannot travel; create it inside the cell"),
        ("tags = {'a', 'b'}", "print(tags)",
         "line 1: `tags` is a set: parameters are numbers, strings, bools, None, lists, dicts "
         "or tuples"),
        ("lr = float('nan')", "print(lr)",
         "line 1: `lr` is nan, which is not a finite number: set it inside the cell"),
        ("exec('def made(): pass')", "made()",
         "line 1: `made` is a function whose source code is not available (made with exec() or "
         "loaded from compiled code): define it in a cell, or import it from a module"),
    ],
)  # fmt: skip
def test_what_cannot_travel_is_refused_by_name(kernel, cell, read, message):
    ctx = from_shell(kernel(cell), read)
    assert problems(ctx) == [message]
    assert ctx.parameters == {} and ctx.definitions == []


def test_a_problem_names_its_line_and_the_definition_that_reads_it(kernel):
    shell = kernel("double = lambda x: 2 * x", "def train(x):\n    return double(x)\n")
    ctx = from_shell(shell, "y = 1\n\nprint(train(y))\n", first_line=2)
    assert problems(ctx) == [
        "`double` (read by `train`) is a lambda, whose source cannot be separated from its "
        "line: define it with def"
    ]
    ctx = from_shell(shell, "y = 1\n\nprint(double(y))\n", first_line=2)
    assert ctx.problems[0].line == 4  # the cell's line 3, below the magic's line


def test_a_literal_too_large_to_travel(kernel):
    shell = kernel(f"table = list(range({MAX_LITERAL}))")
    (problem,) = problems(from_shell(shell, "print(len(table))"))
    assert problem.startswith("line 1: `table` is a list whose value is ")
    assert problem.endswith("too large to travel as a parameter; build or load it inside the cell")


def test_a_syntax_error_in_the_cell_propagates(kernel):
    with pytest.raises(SyntaxError):
        from_shell(kernel("x = 1"), "print(x")


# ---------------------------------------------------------------------------------------------
# The kernel's notebook file


@pytest.fixture
def no_session(monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


class _Shell:
    def __init__(self, **user_ns):
        self.user_ns = user_ns


def test_an_explicit_notebook_must_exist(tmp_path, no_session):
    nb = tmp_path / "train.ipynb"
    with pytest.raises(NotebookNotFound, match=f"--notebook {nb}: no such file"):
        find_notebook(None, nb)
    nb.write_text("{}")
    assert find_notebook(_Shell(__vsc_ipynb_file__=str(tmp_path / "other.ipynb")), nb) == nb


def test_the_notebook_vs_code_or_jupyter_names(tmp_path, monkeypatch, no_session):
    nb = tmp_path / "train.ipynb"
    nb.write_text("{}")
    assert find_notebook(_Shell(__vsc_ipynb_file__=str(nb))) == nb
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "train.ipynb")  # relative to the kernel's folder
    assert find_notebook(_Shell()).resolve() == nb.resolve()
    assert session_notebook_name(None) == "train.ipynb"


def test_a_kernel_that_cannot_tell_says_what_to_pass(tmp_path, monkeypatch, no_session):
    assert session_notebook_name(None) is None
    with pytest.raises(NotebookNotFound) as e:
        find_notebook(None)
    assert str(e.value) == (
        "cannot tell which notebook to submit: this kernel was not started for a notebook "
        "file; pass --notebook PATH"
    )
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "moved.ipynb"))
    with pytest.raises(NotebookNotFound) as e:
        find_notebook(_Shell(__vsc_ipynb_file__="/gone.ipynb"))
    assert str(e.value) == (
        "cannot tell which notebook to submit: VS Code names /gone.ipynb, which does not exist; "
        f"the kernel's session names {tmp_path / 'moved.ipynb'}, which is not a notebook file "
        "here (renamed or moved?); pass --notebook PATH"
    )


# ---------------------------------------------------------------------------------------------
# Recovery from a plain namespace and a history (moved here from test_magics.py)


def _mod(name: str) -> types.ModuleType:
    import importlib

    return importlib.import_module(name)


def test_recover_from_a_namespace():
    ns = {
        "np": _mod("json"),
        "path": _mod("os.path"),
        "dumps": _mod("json").dumps,
        "reduce": functools.reduce,
        "lr": 0.1,
        "sizes": [1, 2, (3, "x")],
    }
    ctx = kernelcontext.recover("print(np, path, dumps, reduce, lr, sizes)\n", ns)
    # without history, from the objects' names (the history gives the user's own statements)
    assert ctx.imports == [
        "from json import dumps",
        "import json as np",
        f"import {_mod('os.path').__name__} as path",
        "from _functools import reduce",
    ]
    assert ctx.parameters == {"lr": 0.1, "sizes": [1, 2, (3, "x")]}
    assert ctx.problems == []


def test_recover_prefers_the_history_statement():
    history = [
        "",
        "import os.path as p\nfrom functools import reduce as fold\nif True:\n    import json",
    ]
    ns = {"p": _mod("os.path"), "fold": functools.reduce, "json": _mod("json")}
    ctx = kernelcontext.recover("print(p, fold, json)", ns, history=history)
    assert ctx.imports == [
        "from functools import reduce as fold",
        "import json",
        "import os.path as p",
    ]


def test_recover_star_import_from_history():
    ctx = kernelcontext.recover(
        "print(sqrt(2))", {"sqrt": _mod("math").sqrt}, history=["from math import *"]
    )
    assert ctx.imports == ["from math import sqrt"]


def test_recover_class_from_history_when_inspect_cannot():
    source = '@decorate\nclass Empty:\n    """no methods"""\n'
    ns = {"__name__": "__main__"}
    exec("decorate = lambda c: c\nclass Empty:\n    pass\n", ns)
    ctx = kernelcontext.recover("print(Empty())", ns, history=["x = 1", source, "y = 2"])
    assert ctx.definitions == [kernelcontext.Definition("Empty", "class", source)]
    # the decorator is a lambda: reported, with the definition that reads it
    assert [str(p) for p in ctx.problems] == [
        "`decorate` (read by `Empty`) is a lambda, whose source cannot be separated from its "
        "line: define it with def"
    ]


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (1, True), (True, True), (None, True), ("s", True), (1.5, True), ([1, [2, {"a": None}]], True),
        ((1, "a"), True), ({1: "x", "k": [True]}, True), (float("inf"), False), ({1, 2}, False),
        (b"x", False), (1j, False), ([object()], False), ({(1, 2): 1}, False),
    ],
)  # fmt: skip
def test_literal_values(value, literal):
    assert kernelcontext._is_literal(value) is literal


def test_self_referencing_list_is_not_a_literal():
    a: list = []
    a.append(a)
    assert not kernelcontext._is_literal(a)


def test_find_notebook_explicit_and_session(tmp_path, monkeypatch):
    nb = tmp_path / "x.ipynb"
    nb.write_text("{}")
    assert kernelcontext.find_notebook(None, nb) == nb
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    assert kernelcontext.find_notebook(None) == nb
    assert kernelcontext.session_notebook_name(None) == "x.ipynb"
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert kernelcontext.session_notebook_name(None) is None


def test_recovered_source_is_dedented(monkeypatch):
    text = "if True:\n    def inner(x):\n        return x\n"
    filename = "<ipython-input-99-kale-ext-test>"
    monkeypatch.setitem(
        linecache.cache, filename, (len(text), None, text.splitlines(True), filename)
    )
    ns = {"__name__": "__main__"}
    exec(compile(text, filename, "exec"), ns)
    ctx = kernelcontext.recover("inner(1)", ns)
    assert ctx.definitions == [
        kernelcontext.Definition("inner", "function", "def inner(x):\n    return x\n")
    ]
