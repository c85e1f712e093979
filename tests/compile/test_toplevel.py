"""toplevel.may_not_compile: ruling out the compiler's refusal of a cell (a `return` outside a
function, an `await` outside an async one, a `break` outside a loop) from the cell's text and
symbol table, checked on tricky cells against what compile() and the AST say; the cell's names
against the analysis that compiles every cell holding the words; and the refusals the AST walk
does not find, reported in the compiler's words at their line."""

import _symtable
import ast
import os
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kale_ext.compile import analysis
from kale_ext.compile.toplevel import COMPILED_WORDS, WORDS, may_not_compile


@dataclass
class Case:
    name: str
    source: str
    maybe: bool  # what may_not_compile answers
    compile_error: str | None  # compile()'s message, None when it compiles
    #: the analysis reports a return/yield/await outside every def, class and lambda (it does
    #: not look into a def's defaults: compile() finds a `yield` there, the AST walk does not)
    top_level: bool = False


CASES = [
    Case("no such word", "x = 1\nprint(x)", False, None),
    Case("return", "return 1", True, "'return' outside function", True),
    Case("return under if", "if x:\n    return 1", True, "'return' outside function", True),
    Case("yield in a loop", "for i in y:\n    yield i", True, "'yield' outside function", True),
    Case("yield from", "yield from y", True, "'yield' outside function", True),
    Case("await", "await x", True, "'await' outside function", True),
    Case(
        "await in a comprehension",
        "[await x for x in y]",
        True,
        "asynchronous comprehension outside of an asynchronous function",
        True,
    ),
    Case("def", "def f():\n    return 1", False, None),
    Case("decorated def", "@dec\ndef f():\n    return 1", False, None),
    Case("async def", "async def f():\n    await g()\n    return 1", True, None),
    Case("method", "class A:\n    def m(self):\n        return 1", False, None),
    Case("generator method", "class A(B):\n    def m(self):\n        yield 1", False, None),
    Case("return annotation", "def f() -> dict[str, int]:\n    return {}", False, None),
    Case("tab indent", "def f():\n\treturn 1", False, None),
    Case("trailing blanks", "def f():   \n    return 1\n\n", False, None),
    Case(
        "blank and column-0 comment lines in a body",
        "def f():\n    x = 1\n\n# note\n    return x",
        False,
        None,
    ),
    Case("await in a plain def", "def f():\n    await x", True, "'await' outside async function"),
    Case("return in a class body", "class A:\n    return 1", True, "'return' outside function"),
    Case(
        "return in a class body in a def",
        "def f():\n    class A:\n        return 1",
        True,
        "'return' outside function",
    ),
    Case(
        "a method of a class in a def",
        "def f():\n    class A:\n        def m(self):\n            return 1",
        True,
        None,
    ),
    Case(
        "a method after a column-0 string in a class",
        'class A:\n    x = """\nabc"""\n    def m(self):\n        return 1',
        False,
        None,
    ),
    Case("nested def", "def f():\n    def g():\n        yield 1\n    return g", False, None),
    Case("break outside a loop", "if x:\n    break", True, "'break' outside loop"),
    Case("break in a def", "def f():\n    break", True, "'break' outside loop"),
    Case("continue in a loop", "for i in y:\n    continue", True, None),
    Case(
        "async comprehension in a plain def",
        "def f():\n    return [x async for x in y]",
        True,
        "asynchronous comprehension outside of an asynchronous function",
    ),
    Case(
        "after a body", "def f():\n    return 1\nreturn 2", True, "'return' outside function", True
    ),
    Case(
        "yield in a default, header on two lines",
        "def f(a,\n      b=(yield)):\n    return b",
        True,
        "'yield' outside function",
    ),
    Case(
        "yield in a default, header on one line",
        "def f(b=(yield)):\n    return b",
        True,
        "'yield' outside function",
    ),
    Case(
        "a second header on two lines",
        "def f():\n    return 1\ndef g(a,\n      b=(yield)):\n    pass",
        True,
        "'yield' outside function",
    ),
    Case(
        "backslash in a header",
        "def f(a=\\\n  (yield)):\n    return a",
        True,
        "'yield' outside function",
    ),
    Case("comment in a header", "def f():  # it returns\n    return 1", True, None),
    Case("string in a header", "def f(a='x'):\n    return a", True, None),
    Case(
        "a string reaching column 0",
        'def f():\n    x = """\nabc"""\n    return x',
        True,
        None,
    ),
    Case(
        "a string reaching column 0, then a top-level return",
        'def f():\n    x = """\nabc"""\nreturn x',
        True,
        "'return' outside function",
        True,
    ),
    Case("def under if", "if x:\n    def f():\n        return 1", False, None),
    Case("lambda", "g = lambda: (yield)", True, None),
    Case("in a string", "s = 'return'", True, None),
    Case("in a comment", "# return here\nx = 1", True, None),
    Case("a longer word", "returned = yielded = 1", True, None),
    Case("CRLF", "def f():\r\n    return 1", True, None),
    Case(
        "two starred targets", "a, *b, *c = x", True, "multiple starred expressions in assignment"
    ),
    Case(
        "a lone starred target",
        "*a = x",
        True,
        "starred assignment target must be in a list or tuple",
    ),
    Case(
        "a starred loop target",
        "for *a in x:\n    pass",
        True,
        "starred assignment target must be in a list or tuple",
    ),
    Case("a starred value", "y = *x", True, "can't use starred expression here"),
    Case("a starred return", "def f():\n    return *x", True, "can't use starred expression here"),
    Case(
        "a bare except before another",
        "try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass",
        True,
        "default 'except:' must be last",
    ),
    Case("__debug__ assigned", "__debug__ = 1", True, "cannot assign to __debug__"),
    Case("starred arguments and a starred target", "f(*a, **k)\na, *b = x", True, None),
    Case(
        "multiplication and powers",
        "y = [w * 0.5 for w in r]\nz = (a +\n     b) * c ** 2\ns = 'x' * 3",
        False,
        None,
    ),
    Case(
        "form feed at column 0",
        "def f():\n    x = 1\n\x0creturn 2",
        True,
        "'return' outside function",
        True,
    ),
]


def _compile_error(source: str) -> str | None:
    try:
        compile(source, "<cell>", "exec", dont_inherit=True)
    except SyntaxError as e:
        return e.msg
    return None


def _top_level(source: str) -> bool:
    names = analysis.CellNames()
    analysis._top_level(ast.parse(source).body, names)
    return bool(names.invalid)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compared_with_compile(case):
    assert _compile_error(case.source) == case.compile_error
    assert _top_level(case.source) == case.top_level
    top = _symtable.symtable(case.source, "<cell>", "exec")
    maybe = may_not_compile(case.source, top)
    assert maybe == case.maybe
    if case.compile_error:  # never ruled out when there is one
        assert maybe


@pytest.mark.parametrize("future", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_names_as_before(case, future, monkeypatch):
    """The cell's names (its top-level errors with their lines included) are those of the
    analysis that compiled every cell holding the words."""
    now = analysis._cell_names(case.source, future)
    monkeypatch.setattr(
        analysis,
        "may_not_compile",
        lambda source, *_: any(
            w in source for w in (*WORDS, *COMPILED_WORDS, "*", "except", "__debug__")
        ),
    )
    assert now == analysis._cell_names(case.source, future)


def test_lines_follow_a_future_import():
    """With `from __future__ import annotations` put first, the table's lines are one past the
    source's."""
    source = "def f():\n    return 1"
    top = _symtable.symtable("from __future__ import annotations\n" + source, "<cell>", "exec")
    assert may_not_compile(source, top, 1) is False
    assert may_not_compile(source, top, 0) is True  # the wrong line: not ruled out


#: Statements a generated cell is made of: simple ones, with the words in code, strings and
#: comments, and compound ones whose bodies are generated in turn.
SIMPLE = ["x = 1", "return x", "return", "yield x", "yield from y", "await g()", "break",
          "continue", "pass", "s = 'return yield'", "# return here", "f = lambda: (yield)",
          "z = [i async for i in y]", "returned = 1", "a, *b = y", "a, *b, *c = y", "*a = y",
          "v = *y", "f(*y, **k)", "w = y * 2", "__debug__ = 1"]  # fmt: skip
HEADERS = ["def f():", "def f(a, b=(yield)):", "async def g():", "class A:", "class B(A):",
           "for i in y:", "while x:", "if x:", "with m:", "try:", "@dec\ndef h():",
           "def f():  # note", "try:  # bare"]  # fmt: skip


def _statements(depth: int):
    simple = st.sampled_from(SIMPLE).map(lambda s: [s])
    if depth == 0:
        return simple
    compound = st.tuples(st.sampled_from(HEADERS), _statements(depth - 1)).map(
        lambda hb: (
            [*hb[0].split("\n"), *("    " + line for line in hb[1])]
            + (["except E:", "    pass"] if hb[0] == "try:" else [])
            + (["except:", "    pass", "except E:", "    pass"] if hb[0] == "try:  # bare" else [])
        )
    )
    return st.lists(st.one_of(simple, compound), min_size=1, max_size=3).map(
        lambda parts: [line for part in parts for line in part]
    )


CELLS = _statements(3).map("\n".join)


@settings(max_examples=int(os.environ.get("KALE_EXT_PROPERTY_EXAMPLES", "400")), deadline=None)
@given(CELLS)
def test_no_refusal_of_the_compiler_is_ruled_out_or_left_unreported(source):
    """Whatever the nesting of defs, classes, loops and async defs: a cell compile() refuses is
    never ruled out, and its names carry an error exactly when compile() refuses it."""
    try:
        top = _symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return  # refused before the compiler (the analysis reports that error itself)
    error = _compile_error(source)
    if error is not None:
        assert may_not_compile(source, top)
    assert bool(analysis._cell_names(source, False).invalid) == (error is not None), error


@pytest.mark.parametrize("word", COMPILED_WORDS + WORDS)
def test_each_word_is_looked_for(word):
    """may_not_compile spells its words out (it runs for every changed cell): each word of
    COMPILED_WORDS and WORDS, even in a comment, still sends the cell to the compiler."""
    source = f"x = 1  # {word}"
    assert may_not_compile(source, _symtable.symtable(source, "<cell>", "exec"))
