"""What a magic says to a user: options read as a shell reads them, errors as one message."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.core.magic_arguments import MagicArgumentParser

from kale_ext.errors import CompileError, ConfigError, Diagnostic
from kale_ext.ipython.usage import parse, user_errors

PARSER = MagicArgumentParser(prog="%kale_x")
PARSER.add_argument("--name")


def test_options_are_read_as_a_shell_reads_them():
    assert parse(PARSER, "--name 'two words'").name == "two words"


@pytest.mark.parametrize(
    "line, says",
    [
        ("--name 'open", "%kale_x: cannot read the options: No closing quotation"),
        ("--nmae x", "(see %kale_x?)"),
    ],
)
def test_options_that_cannot_be_read_say_why(line, says):
    with pytest.raises(UsageError) as caught:
        parse(PARSER, line)
    assert says in str(caught.value)


def error(cell: int, line: int, message: str) -> Diagnostic:
    return Diagnostic("error", message, cell=cell, line=line)


@pytest.mark.parametrize(
    "raised, says",
    [
        (ConfigError("nodes", "must be at least 1"), "%kale_x: nodes: must be at least 1"),
        (CompileError([error(2, 3, "x is not defined")]), "%kale_x: cannot compile: cell 3"),
        (
            CompileError([error(0, 1, "a"), error(1, 1, "b")]),
            "%kale_x: cannot compile (2 errors):\n  cell 1",
        ),
        (UsageError("%kale_x: already said"), "%kale_x: already said"),
        (UsageError("bad"), "%kale_x: bad"),
    ],
)
def test_kale_ext_errors_become_one_usage_message(raised, says):
    with pytest.raises(UsageError) as caught, user_errors("%kale_x"):
        raise raised
    assert str(caught.value).startswith(says), str(caught.value)
    assert not str(caught.value).startswith("%kale_x: %kale_x")
