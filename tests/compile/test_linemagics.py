"""A cell of plain Python and whole `%` / `!` lines is transformed as IPython's transformer
does it, without its tokenizer; any other cell is left to IPython (None)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kale_ext.compile import linemagics


def ipython(source: str) -> str:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


READ = [
    "%matplotlib inline\n%time x_51 = 51\n# variant 3",
    "%pip install -q torch==2.13.0 numpy\nimport torch\n",
    "!pip install a b\n!!ls -la\n!\n%\n",
    "for i in range(3):\n    %time f(i)  # a comment (\n    y = g(i)\nprint(y)\n",
    "x = 1 % 2\ny = x != 3\n%env A=1",
    "def f():\n    return 1\n\n\n%time f()\n\n",
]
LEFT_TO_IPYTHON = [
    "",
    "\n%time x",  # IPython drops the leading blank line
    "  %time x",  # and dedents an indented first line
    "%%time\nx = 1",
    "x = %time y",
    "files = !ls",
    "%time f(\n1)",  # a bracket open across lines: the next line is no line start
    "s = '%not a magic'\n%time x",
    "x = 1 + \\\n%time y",
    "x?\n%time y",
    "%time x\r\ny",
    "%time x\n\ty",
    "if x:\n        a = 1\n    b = 2\n%time y",  # a dedent IPython's tokenizer rejects
    "%= 2",
    "!= 2",
    ">>> %time x",
    "x = 1\n... \n%time y",
    "x = 1\n   ",  # a line of spaces: IPython 9.19 empties it, 8.x keeps it
    "%time x\n  \ny = 2",
]


@pytest.mark.parametrize("source", READ)
def test_a_cell_of_whole_magic_lines_is_transformed_as_ipython_does(source):
    assert linemagics.transform(source) == ipython(source)


@pytest.mark.parametrize("source", LEFT_TO_IPYTHON)
def test_any_other_cell_is_left_to_ipython(source):
    assert linemagics.transform(source) is None


_LINES = st.sampled_from(
    ["x = 1", "%time x = f(1)", "%matplotlib inline", "%pip install a b", "%", "!", "!!ls",
     "!pip install x", "%time y = [1,", "2]", "if x:", "    %time z", "    y = 2", "  w = 3",
     "        v = 4", "# (comment", "z = x % 3", "w = x != 1", "%env A=1  # note", "a = %x",
     "print(x)", "%%time", "   ", "", "def f():", "    return (1)", "...", "x = 1 ! 2",
     "%time x = {1: 2}", "% x", "!!", "%%", "%=", "x)", "(x"]
)  # fmt: skip
CELLS = st.lists(_LINES, max_size=7).map("\n".join)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=int(os.environ.get("KALE_EXT_PROPERTY_EXAMPLES", "400")), deadline=None)
@given(st.one_of(CELLS, CELLS.map(lambda c: c + "\n")))
def test_what_it_reads_is_what_ipython_gives(source):
    fast = linemagics.transform(source)
    if fast is None:
        return  # left to IPython
    assert fast == ipython(source)
