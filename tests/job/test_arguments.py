"""Parameter overrides are typed by the literal in the parameters cell, from every front end."""

from dataclasses import dataclass
from typing import Any

import pytest

from kale_ext.errors import ConfigError
from kale_ext.job.arguments import typed_arguments

PARAMS = {"debug": False, "lr": 0.01, "epochs": 6, "name": "run", "layers": [64], "opt": None}


@dataclass
class Case:
    given: dict
    expected: Any  # the typed arguments, or the error's (field, message)


CASES = [
    Case({"debug": "False"}, {"debug": False}),
    Case({"debug": "true"}, {"debug": True}),
    Case({"debug": True}, {"debug": True}),
    Case({"lr": "1e-3"}, {"lr": 0.001}),
    Case({"lr": 1}, {"lr": 1.0}),
    Case({"epochs": "40"}, {"epochs": 40}),
    Case({"epochs": 3.0}, {"epochs": 3}),
    Case({"name": "3"}, {"name": "3"}),  # a str parameter keeps the text
    Case({"layers": "[32, 32]"}, {"layers": [32, 32]}),
    Case({"layers": "(8, 8)"}, {"layers": [8, 8]}),
    Case({"opt": "adam"}, {"opt": "adam"}),  # None: no type to go by; text stays text
    Case({"opt": "3"}, {"opt": 3}),
    Case(
        {"epochs": "abc"},
        ("parameters.epochs", "expects an int (a whole number) like its default 6, not 'abc'"),
    ),
    Case({"epochs": 2.5}, ("parameters.epochs", "expects an int")),
    Case({"epochs": True}, ("parameters.epochs", "expects an int")),
    Case({"debug": "maybe"}, ("parameters.debug", "expects a bool (true or false)")),
    Case({"lr": "fast"}, ("parameters.lr", "expects a float like its default 0.01, not 'fast'")),
    Case({"lr": "nan"}, ("parameters.lr", "expects a float")),
    Case({"name": 3}, ("parameters.name", "expects a str")),
    Case({"layers": "64"}, ("parameters.layers", "expects a list")),
    Case(
        {"momentum": 0.9},
        ("parameters.momentum", "no such parameter (it has: debug, lr, epochs, name, layers, opt)"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c.given))
def test_overrides_are_typed_by_the_parameters_cell(case):
    if isinstance(case.expected, dict):
        assert typed_arguments(PARAMS, case.given) == case.expected
        return
    with pytest.raises(ConfigError) as info:
        typed_arguments(PARAMS, case.given)
    field, message = case.expected
    assert info.value.field == field and message in str(info.value)


def test_no_parameters_cell_says_how_to_get_one():
    with pytest.raises(ConfigError, match="it has: none: tag a cell `parameters`"):
        typed_arguments({}, {"lr": "1"})
