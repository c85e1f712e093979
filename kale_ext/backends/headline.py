"""A failure's one line: the exception's type and its most informative line.

An exception's first line is not always its cause: XGBoost (dmlc) starts with where it was
raised (``[07:57:27] /workspace/src/collective/result.cc:83: [tracker.cc:132|07:57:27]:``) and
chains its causes below as ``- `` lines, innermost last; NCCL puts the failed call under
``Last error:``; CUDA and pydantic add advice and links. :func:`headline` keeps the type and
the line that says what went wrong.
"""

from __future__ import annotations

import re

#: The most characters a headline keeps.
MAX_CHARS = 300
#: The most lines, and characters of each, read from an exception's message (bounded work).
MAX_LINES, MAX_LINE = 200, 2000
#: Where a line was raised, at its start: a time, a source file and line, dmlc's `[f.cc:1|t]:`.
_LOCATION = re.compile(
    r"^(?:\s*(?:-\s+)?(?:\[\d\d:\d\d:\d\d\]|\[[\w./-]+:\d+(?:\|[^\]]*)?\]:?|"
    r"(?:/|\.{1,2}/)?[\w./-]+\.(?:cc|cpp|cxx|cu|c|h|hpp|py):\d+:)\s*)+"
)
#: A location inside a line: NCCL's `NCCL error in: /pytorch/.../NCCLUtils.hpp:268, `.
_INNER_LOCATION = re.compile(r"\s+in:?\s+\S+\.(?:cc|cpp|cu|c|h|hpp|py):\d+,")
#: Lines (or their end) that are advice, links or stack dumps, never the cause.
_BOILERPLATE = re.compile(
    r"^(?:Stack trace:|\[bt\]|frame #\d+|Exception raised from |<omitting python frames>"
    r"|For further information visit |CUDA kernel errors might be asynchronously reported"
    r"|For debugging consider passing |Compile with `TORCH_USE_CUDA_DSA`|Traceback \(most)"
)
_ADVICE = re.compile(
    r"\s*(?:\(run with NCCL_DEBUG=\w+ for details\)|If reserved but unallocated memory is large"
    r".*|See documentation for Memory Management.*)"
)
_CHAIN_LINK = re.compile(r"^\s*-\s+")  # dmlc's causes, one a line
_LAST_ERROR = "Last error:"  # NCCL: the failed call on the next line
_PYDANTIC = re.compile(r"\d+ validation errors? for \S+$")
_TYPE = re.compile(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\w*)(?::\s?(.*))?$")


def _clean(line: str) -> str:
    return _ADVICE.sub("", _INNER_LOCATION.sub(":", _LOCATION.sub("", line))).strip()


def informative(message: str) -> str:
    """The line of ``message`` (an exception's text, without its type) that says what went
    wrong: the innermost cause of a chain, else its first line that is no location or
    boilerplate; pydantic's first error with its field."""
    raw = [r[:MAX_LINE] for r in message.splitlines()[:MAX_LINES]]
    lines = [(r, _clean(r)) for r in raw if r.strip() and not _BOILERPLATE.match(r.strip())]
    if not lines:
        return message.strip()
    for i, (_, text) in enumerate(lines):  # NCCL: the call under "Last error:"
        if text == _LAST_ERROR and i + 1 < len(lines):
            return lines[i + 1][1]
    links = [text for r, text in lines if _CHAIN_LINK.match(r) and text]
    if links:
        return links[-1]
    first = next((text for _, text in lines if text), message.strip())
    if _PYDANTIC.match(first) and len(lines) >= 3:  # the field, then its error
        return f"{first}: {lines[1][1]}: {lines[2][1]}"
    return first


def headline(exception: str) -> str:
    """``Type: the most informative line`` of an exception's text (``Type: message...`` as
    Python prints its last line, possibly over several lines), at most MAX_CHARS."""
    text = exception.strip()
    first, _, rest = text.partition("\n")
    m = _TYPE.match(first)
    if m is None:
        line = informative(text)
    else:
        message = "\n".join(filter(None, [m[2], rest]))
        line = f"{m[1]}: {informative(message)}" if message.strip() else m[1]
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 3] + "..."


def last_exception(traceback_text: str) -> str | None:
    """The exception at the end of a printed traceback (its type and whole message): what
    follows the last frame and its source lines."""
    lines = traceback_text.rstrip("\n").splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith('  File "')]
    if not frames:
        return None
    i = frames[-1] + 1
    while i < len(lines) and lines[i].startswith("    "):
        i += 1
    return "\n".join(lines[i:]) or None
