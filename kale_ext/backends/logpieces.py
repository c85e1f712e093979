"""Log text in bounded pieces, for every backend's log reader.

A reader takes a log READ_SIZE bytes at a time and cuts a line longer than MAX_PIECE bytes into
pieces of at most MAX_PIECE (between UTF-8 characters), each but the last marked partial: it
holds at most one read and one piece, never a whole line or log, however large they are.
"""

from __future__ import annotations

#: The most bytes of a line one LogLine (one event of a log stream) carries.
MAX_PIECE = 256 * 1024
#: Bytes a reader takes from a log at a time.
READ_SIZE = 64 * 1024


class Piece(str):
    """Text of one piece of a line longer than MAX_PIECE: the next piece continues the line."""


def _cut(line: bytes) -> tuple[list[bytes], bytes]:
    """Pieces of at most MAX_PIECE bytes from the front of ``line``, and what is left (at most
    MAX_PIECE bytes). A cut never splits a UTF-8 character."""
    pieces = []
    while len(line) > MAX_PIECE:
        cut = MAX_PIECE
        while cut > MAX_PIECE - 3 and line[cut] & 0xC0 == 0x80:  # a continuation byte
            cut -= 1
        pieces.append(line[:cut])
        line = line[cut:]
    return pieces, line


def split_pieces(buffer: bytes) -> tuple[list[tuple[bytes, bool]], bytes]:
    """The lines of ``buffer`` (without their newline) as (bytes, partial), a long one in
    pieces, and the unfinished rest (at most MAX_PIECE bytes) to put before the next read."""
    *lines, rest = buffer.split(b"\n")
    out: list[tuple[bytes, bool]] = []
    for line in lines:
        pieces, last = _cut(line)
        out += [(p, True) for p in pieces]
        out.append((last, False))
    pieces, rest = _cut(rest)
    out += [(p, True) for p in pieces]
    return out, rest


def text_of(raw: bytes, partial: bool) -> str:
    """A line's text (a Piece when partial): UTF-8, invalid bytes replaced, a CR before the
    newline dropped."""
    text = raw.decode("utf-8", "replace")
    return Piece(text) if partial else text.rstrip("\r")
