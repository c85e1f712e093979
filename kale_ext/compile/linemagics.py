"""IPython's transform of a cell whose only IPython syntax is whole `%magic` and `!command`
lines, without IPython's tokenizer (0.15-0.2 ms a cell, most of a magic cell's compile).

IPython (IPython.core.inputtransformer2) turns a line whose first token is `%`, `!` or `!!`
into ``get_ipython().run_line_magic(name, args)``, ``.system(cmd)`` or ``.getoutput(cmd)``.
Which token is first needs a tokenizer only where strings, continued lines or brackets open
across lines can hide a line's start; :func:`transform` accepts only cells without them (and
without any other IPython syntax, tabs, odd line ends or indentation IPython's tokenizer
rejects), and gives None for every other cell: IPython transforms those. Checked against
IPython's own transform by a property test (tests/compile/test_linemagics.py).
"""

from __future__ import annotations

import re

# Anything that makes a cell not one this module reads as IPython does: a quote, a backslash,
# a `?` (help), whitespace other than a space or a newline (tabs, \r, form feeds, U+2028...),
# a line that starts (after spaces) with another escape, a prompt or a cell magic, `%=` or
# `!=` (operators, not escapes), `=` then `%` or `!` (a magic's or a command's value), or a
# line of spaces only (IPython 9.19 and later empty it, as textwrap.dedent does; earlier ones
# keep it: IPython itself gives the answer of the version installed).
_NOT_PLAIN = re.compile(
    r"""['"\\?]|[^\S \n]|^ *(?:[/,;]|>>>|\.\.\.|In \[|\[nav\]|\[ins\]|%%|%=|!=)|= *[%!]|^ +$""",
    re.M,
)
_BRACKET = re.compile(r"[()\[\]{}]")
_OPEN = frozenset("([{")


def transform(source: str) -> str | None:
    """What IPython's TransformerManager().transform_cell(source) gives, for a cell of plain
    Python and whole `%` / `!` lines; None for any other cell."""
    if _NOT_PLAIN.search(source):
        return None
    lines = (source if source.endswith("\n") else source + "\n").split("\n")[:-1]
    if not lines[0].strip() or lines[0][0] == " ":  # IPython drops blank lines, dedents
        return None
    indents = [0]
    out = []
    for line in lines:
        code = line.partition("#")[0]  # no quotes in the cell: a # starts a comment
        stripped = code.lstrip(" ")
        if not stripped.strip():  # blank or a comment: the tokenizer's NL
            out.append(line + "\n")
            continue
        column = len(code) - len(stripped)
        if column > indents[-1]:
            indents.append(column)
        while column < indents[-1]:
            indents.pop()
        if column != indents[-1] or not _balanced(code):
            return None  # IPython's tokenizer raises, or a line joins the next: IPython reads it
        if stripped[0] in "%!":
            out.append(line[:column] + _call(line[column:].rstrip()) + "\n")
        else:
            out.append(line + "\n")
    return "".join(out)


def _balanced(code: str) -> bool:
    """Brackets close on their line and never close more than are open."""
    depth = 0
    for bracket in _BRACKET.findall(code):
        depth += 1 if bracket in _OPEN else -1
        if depth < 0:
            return False
    return depth == 0


def _call(escaped: str) -> str:
    """IPython's call for an escaped line (its escape first)."""
    if escaped.startswith("!!"):
        return f"get_ipython().getoutput({escaped[2:]!r})"
    if escaped.startswith("!"):
        return f"get_ipython().system({escaped[1:]!r})"
    name, _, args = escaped[1:].partition(" ")
    return f"get_ipython().run_line_magic({name!r}, {args!r})"
