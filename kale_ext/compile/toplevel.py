"""Whether Python's compiler may refuse a cell that its parser and symbol table accepted, told
from the cell's text and its symbol table, without compiling it.

The compiler refuses a `return` or `yield` outside every function (a class body is not a
function), an `await` outside an async function, a `break` or `continue` outside a loop, an
async comprehension outside an async function. Every such cell is an error in the training
function too (analysis.py reports it, naming its line), but most cells that hold the words hold
them in the body of a function. A body is known from indentation alone when its header ends on
its own line (no string, comment, backslash or open bracket in it, ending in `:`): each line
after it that is blank, is a comment, or starts with the header's indentation and then a space
or a tab belongs to that body, as Python reads indentation. A `return` or `yield` in such a body
of a plain `def` is where it may be. Any other occurrence of the words (in code, strings and
comments alike), any `await`, `async`, `break` or `continue`, a class inside a function, or a
line end or form feed Python reads differently: "may be refused", and the caller compiles the
cell to know.

The compiler also refuses, wherever they stand: a starred target or value it cannot take (`a,
*b, *c = x`, `*a = x`, `x = *a`, `for *a in x`), a bare `except:` before another, and an
assignment to `__debug__`. A cell with a `*` that is not a binary operator, a bare `except:` or
the name `__debug__` is compiled too. (Twenty blocks nested in one another, the compiler's last
refusal, are not looked for.)
"""

from __future__ import annotations

import _symtable
import re

#: Allowed in the body of a plain `def`.
WORDS = ("return", "yield")
#: Whose place the text does not tell (a loop, an async def): the cell is compiled.
COMPILED_WORDS = ("await", "async", "break", "continue")
#: A `*` that may start an operand (a starred target or value) rather than multiply or unpack
#: into a call or a display: not after an operand's end (a name, a number, a closing bracket,
#: a quote), an opening bracket or a `*`, alone or with one space between, unless that operand
#: is `for`, `return`, `yield` or `as`. Built on the `*` itself, so that only the few stars in
#: a cell are looked at (a pattern built on what comes before cost 1.1 ms a request, the
#: benchmark's 100 cells); what it takes for a starred operand that is not costs a compile.
_STARRED = re.compile(
    r"\*(?!\*)(?:(?<![\w)\]}'\"*(\[{]\*)(?<![\w)\]}'\"*(\[{] \*)"
    r"|(?<=\bfor \*)|(?<=\breturn \*)|(?<=\byield \*)|(?<=\bas \*))"
)
_BARE_EXCEPT = re.compile(r"\bexcept[ \t]*:")

#: A header on one line: indentation, `def` or `class`, its name, no string, comment or
#: backslash, ending in `:`.
_HEADER = re.compile(r"([ \t]*)(def|class)[ \t]+(\w+)[^'\"#\\]*:[ \t]*")


def may_not_compile(source: str, top, line_offset: int = 0) -> bool:
    """False when ``source`` holds no `await`, `async`, `break`, `continue`, starred operand,
    bare `except:` or `__debug__`, and every `return` and `yield` in it lies in the body of a
    `def` whose header is alone on its line
    (``top``: the cell's `_symtable` table, its line numbers ``line_offset`` past the
    source's)."""
    # spelled out, not any() over WORDS + COMPILED_WORDS: this runs for every changed cell
    compiled = (
        "await" in source
        or "async" in source
        or "break" in source
        or "continue" in source
        or ("*" in source and _STARRED.search(source) is not None)
        or ("except" in source and _BARE_EXCEPT.search(source) is not None)
        or "__debug__" in source
    )
    if compiled or "\r" in source or "\f" in source:
        return compiled or "return" in source or "yield" in source
    if "return" not in source and "yield" not in source:
        return False
    lines = source.split("\n")
    inside = bytearray(len(lines) + 1)  # by line number (1-based): in such a body
    todo = [(child, False) for child in top.children]  # (table, inside a function)
    while todo:
        table, in_function = todo.pop()
        if table.type == _symtable.TYPE_CLASS and in_function:
            return True  # its body is no function's, though the function's indentation holds it
        is_def = table.type == _symtable.TYPE_FUNCTION
        todo += [(child, in_function or is_def) for child in table.children]
        if is_def:
            _mark_body(lines, table.lineno - line_offset, table.name, inside)
    for word in WORDS:
        at = source.find(word)
        while at != -1:
            if not inside[source.count("\n", 0, at) + 1]:
                return True
            at = source.find(word, at + len(word))
    return False


def _mark_body(lines: list[str], start: int, name: str, inside: bytearray) -> None:
    """Mark the body of the `def` at line ``start`` (1-based) in ``inside``, when its header is
    alone on its line (lambdas and comprehensions have none: nothing is marked)."""
    header = _HEADER.fullmatch(lines[start - 1]) if 0 < start <= len(lines) else None
    if header is None or header[2] != "def" or header[3] != name or not _balanced(header[0]):
        return
    indent = header[1]
    deeper = len(indent)
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        code = line.lstrip(" \t")
        if code and code[0] != "#" and not (line.startswith(indent) and line[deeper] in " \t"):
            break  # code no deeper than the header: the body has ended
        inside[number] = 1


def _balanced(header: str) -> bool:
    """As many brackets closed as opened (a header without strings or comments: no bracket in
    it is text), so the statement ends with the line."""
    return sum(map(header.count, "([{")) == sum(map(header.count, ")]}"))
