"""Text a job or a notebook wrote, made safe to show on a terminal: the one way every view
(the CLI's tables, status, events, logs, sweeps, diffs and errors; the magics' text) shows
it. A job's exception text, a reason, a metric name or a file name may hold terminal control
sequences (``ESC ]0;title BEL`` retitles the window, ``ESC [2J`` clears the screen, ``CR``
overwrites the line); shown through :func:`printable` they read as escapes (``\\x1b]0;title``)
and do nothing. Stdlib only: any stage may import it."""

from __future__ import annotations

import re

#: What is escaped: the C0 controls (ESC, BEL, CR, LF, TAB, ...), DEL and the C1 controls
#: (U+0080-U+009F: U+009B is a one-character CSI to some terminals), and the Unicode
#: characters that reorder or break what follows (bidirectional overrides and isolates, the
#: line and paragraph separators).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match) -> str:
    char = found.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` (made a str) on one line, each control character escaped as Python writes it
    (``\\x1b``, ``\\r``, ``\\n``, ``\\u202e``); any other text is kept as it is."""
    text = text if isinstance(text, str) else str(text)
    return _CONTROL.sub(_escape, text)


def printable_lines(text: object) -> str:
    """``text`` with its line breaks kept (``\\n``; ``\\r\\n`` read as one) and every other
    control character escaped, as :func:`printable` does: for a view of many lines (a diff,
    an error message)."""
    text = text if isinstance(text, str) else str(text)
    return "\n".join(printable(line) for line in text.replace("\r\n", "\n").split("\n"))
