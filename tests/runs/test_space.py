"""A sweep's --param specs, typed by the parameters cell; each bad one names the parameter."""

from __future__ import annotations

import pytest

from kale_ext.errors import ConfigError
from kale_ext.runs.space import parse_space, split_items

PARAMS = {"lr": 0.01, "layers": 2, "opt": "sgd", "debug": False, "sizes": [1, 2]}


@pytest.mark.parametrize(
    ("specs", "grid"),
    [
        ({"lr": "1e-4,1e-3"}, [{"lr": 1e-4}, {"lr": 1e-3}]),
        ({"layers": "1, 2", "opt": "choice(sgd,adam)"},
         [{"layers": 1, "opt": "sgd"}, {"layers": 1, "opt": "adam"},
          {"layers": 2, "opt": "sgd"}, {"layers": 2, "opt": "adam"}]),
        ({"debug": "true,no"}, [{"debug": True}, {"debug": False}]),
        ({"sizes": "[1,2],[3]"}, [{"sizes": [1, 2]}, {"sizes": [3]}]),
        ({"lr": [0.1, 1]}, [{"lr": 0.1}, {"lr": 1.0}]),  # a JSON list from the REST API
        ({"lr": 0.5}, [{"lr": 0.5}]),
    ],
)  # fmt: skip
def test_grid_values_are_typed_as_in_the_parameters_cell(specs, grid):
    assert parse_space(PARAMS, specs).grid() == grid


def test_ranges_for_a_random_search():
    space = parse_space(PARAMS, {"lr": "loguniform(1e-5,1e-1)", "layers": "int(1,4)",
                                 "opt": "choice(sgd,adam)"})  # fmt: skip
    assert [d.to_dict() for d in space.dimensions] == [
        {"name": "lr", "kind": "loguniform", "low": 1e-5, "high": 1e-1},
        {"name": "layers", "kind": "int", "low": 1, "high": 4},
        {"name": "opt", "kind": "values", "values": ["sgd", "adam"]},
    ]
    with pytest.raises(ConfigError, match="param.lr: a range needs a random or tpe search"):
        space.grid()


@pytest.mark.parametrize(
    ("specs", "field", "message"),
    [
        ({"lr": "loguniform(0,1)"}, "param.lr", "loguniform needs both ends above 0, got 0"),
        ({"layers": "int(4,1)"}, "param.layers", "the low end 4 must be below the high end 1"),
        ({"layers": "int(1.5,4)"}, "param.layers", "int(LOW,HIGH) takes whole numbers"),
        ({"lr": "int(1,4)"}, "param.lr", "needs an int parameter; lr is float"),
        ({"layers": "uniform(1,4)"}, "param.layers", "needs a float parameter; layers is int"),
        ({"lr": "uniform(a,1)"}, "param.lr", "'a' is not a number"),
        ({"lr": "uniform(1)"}, "param.lr", "takes two numbers"),
        ({"lr": "normal(0,1)"}, "param.lr", "unknown range normal(...)"),
        ({"depth": "1,2"}, "param.depth", "the notebook has no such parameter (it has: lr, "),
        ({"layers": "1,two"}, "param.layers", "expects an int (a whole number) like its "
                                              "default 2, not 'two'"),
        ({"lr": "0.1,,0.2"}, "param.lr", "has an empty value"),
        ({}, "param", "at least one --param"),
    ],
)  # fmt: skip
def test_a_bad_spec_names_the_parameter_and_the_text(specs, field, message):
    with pytest.raises(ConfigError) as e:
        parse_space(PARAMS, specs)
    assert e.value.field == field
    assert message in str(e.value)


def test_commas_inside_brackets_and_quotes_do_not_split():
    assert split_items("[1,2], 'a,b', (3,4)") == ["[1,2]", "'a,b'", "(3,4)"]


def test_optuna_draws_each_kind_within_its_range():
    import optuna

    space = parse_space(PARAMS, {"lr": "loguniform(1e-5,1e-1)", "layers": "int(1,4)",
                                 "sizes": "[1],[2,3]"})  # fmt: skip
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    for _ in range(20):
        point = space.suggest(study.ask())
        assert 1e-5 <= point["lr"] <= 1e-1 and point["layers"] in (1, 2, 3, 4)
        assert point["sizes"] in ([1], [2, 3])
