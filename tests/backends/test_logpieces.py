"""Log text in bounded pieces: lines as they are, a long one cut between characters, the rest
kept for the next read."""

from __future__ import annotations

import pytest

from kale_ext.backends.logpieces import MAX_PIECE, Piece, split_pieces, text_of


def test_short_lines_pass_whole_and_the_unfinished_rest_waits():
    pieces, rest = split_pieces(b"one\r\ntwo\nthr")
    assert pieces == [(b"one\r", False), (b"two", False)] and rest == b"thr"
    assert [text_of(raw, partial) for raw, partial in pieces] == ["one", "two"]


@pytest.mark.parametrize("char", ["x", "é", "€", "𝄞"], ids=["1-byte", "2-byte", "3-byte", "4-byte"])
def test_a_long_line_comes_in_pieces_cut_between_characters(char):
    line = char * (3 * MAX_PIECE // len(char.encode()) + 7)
    pieces, rest = split_pieces(line.encode() + b"\n")
    assert rest == b""
    assert all(len(raw) <= MAX_PIECE for raw, _ in pieces) and len(pieces) == 4
    assert [partial for _, partial in pieces] == [True, True, True, False]
    texts = [text_of(raw, partial) for raw, partial in pieces]
    assert "".join(texts) == line  # no character split, nothing lost
    assert all(isinstance(t, Piece) for t in texts[:-1]) and not isinstance(texts[-1], Piece)


def test_an_unfinished_long_line_gives_its_pieces_and_keeps_at_most_one():
    pieces, rest = split_pieces(b"a" * (2 * MAX_PIECE + 10))
    assert [(len(raw), partial) for raw, partial in pieces] == [
        (MAX_PIECE, True),
        (MAX_PIECE, True),
    ]
    assert rest == b"a" * 10
