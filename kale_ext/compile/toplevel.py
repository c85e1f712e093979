"""Whether a cell's `return`, `yield` or `await` may stand at its top level, told from its text
and its symbol table, without compiling it.

Such a statement outside every function is an error in the training function (analysis.py
reports it, naming its line), but most cells that hold the words hold them in the body of a
function or class. A body is known from indentation alone when its header starts at column 0
and ends on its own line (no string, comment, backslash or open bracket in it, ending in `:`):
each line after it that starts with a space or a tab, is blank, or starts with `#` belongs to
that body, as Python reads indentation (only a line starting at column 0 with code ends it).
Every occurrence of the words (in code, strings and comments alike) in such a body: no such
statement can be at the top level. Any other occurrence, or a line end or form feed Python
reads differently: "may be", and the caller compiles the cell to know.
"""

from __future__ import annotations

import _symtable
import re

WORDS = ("return", "yield", "await")
_BLOCK = frozenset({_symtable.TYPE_FUNCTION, _symtable.TYPE_CLASS})
#: A header on one line at column 0: no string, comment or backslash in it, ending in `:`.
_HEADER = re.compile(r"(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)[^'\"#\\]*:[ \t]*")


def may_be_top_level(source: str, top, line_offset: int = 0) -> bool:
    """False when every occurrence of `return`, `yield` and `await` in ``source`` lies in the
    body of a function or class whose header is alone on its line at column 0 (``top``: the
    cell's `_symtable` table, its line numbers ``line_offset`` past the source's)."""
    if "return" not in source and "yield" not in source and "await" not in source:
        return False
    if "\r" in source or "\f" in source:
        return True
    lines = source.split("\n")
    inside = bytearray(len(lines) + 1)  # by line number (1-based): in such a body
    for child in top.children:
        if child.type not in _BLOCK:
            continue
        start = child.lineno - line_offset  # the `def`/`class` line
        header = _HEADER.fullmatch(lines[start - 1]) if 0 < start <= len(lines) else None
        if header is None or header[1] != child.name or not _balanced(header[0]):
            continue
        for number in range(start + 1, len(lines) + 1):
            line = lines[number - 1]
            if line and line[0] not in " \t#":  # code at column 0: the body has ended
                break
            inside[number] = 1
    for word in WORDS:
        at = source.find(word)
        while at != -1:
            if not inside[source.count("\n", 0, at) + 1]:
                return True
            at = source.find(word, at + len(word))
    return False


def _balanced(header: str) -> bool:
    """As many brackets closed as opened (a header without strings or comments: no bracket in
    it is text), so the statement ends with the line."""
    return sum(map(header.count, "([{")) == sum(map(header.count, ")]}"))
