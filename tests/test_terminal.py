"""Text from a job or a notebook, made safe to show on a terminal (kale_ext/terminal.py)."""

import pytest

from kale_ext.terminal import printable, printable_lines

#: What a hostile job's exception text can hold: retitle the window, clear the screen,
#: overwrite the line.
HOSTILE = "boom \x1b]0;title\x07\x1b[2J\rgotcha"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (HOSTILE, "boom \\x1b]0;title\\x07\\x1b[2J\\rgotcha"),
        ("a\nb\tc", "a\\nb\\tc"),
        ("csi \x9b2J del \x7f", "csi \\x9b2J del \\x7f"),
        ("right-to-left \u202eevil\u2066", "right-to-left \\u202eevil\\u2066"),
        ("line\u2028break", "line\\u2028break"),
        ("plain, ünïcode → ok; C:\\path", "plain, ünïcode → ok; C:\\path"),
        (42, "42"),
    ],
)
def test_control_characters_are_escaped_and_the_rest_kept(text, shown):
    assert printable(text) == shown


def test_escaping_twice_changes_nothing():
    once = printable(HOSTILE)
    assert printable(once) == once and printable_lines(once) == once


def test_lines_keep_their_breaks_and_nothing_else():
    assert printable_lines("one\r\ntwo \x1b[2J\nthree\r") == "one\ntwo \\x1b[2J\nthree\\r"
