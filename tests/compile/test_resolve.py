"""Static name resolution: what a name holds after the cells ran, without running them."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest

from kale_ext.compile.resolve import Client, Function, RuntimeRef, Scope, SdkObject, Unresolvable


def scope_after(*cells: str) -> Scope:
    scope = Scope()
    for index, source in enumerate(cells):
        scope.cell = index
        scope.run(ast.parse(source).body)
    return scope


def value(cells: tuple[str, ...], expression: str):
    return scope_after(*cells).eval(ast.parse(expression, mode="eval").body)


@dataclass
class Case:
    cells: tuple[str, ...]
    expression: str
    expected: object


@pytest.mark.parametrize(
    "case",
    [
        Case(("n = 2",), "n", 2),
        Case(("n = 2", "m = n * 2 + 1"), "m", 5),
        Case(("tp = 4",), "{'TP_SIZE': str(tp)}", {"TP_SIZE": "4"}),
        Case(("tp = 4", "name = f'bert-{tp:02d}'"), "name", "bert-04"),
        Case(("x = '3'",), "[int(x), float(x)]", [3, 3.0]),
        Case(
            ("r = {'cpu': 2}", "big = True\nif big:\n    r.update({'memory': '8Gi'})"),
            "r",
            {"cpu": 2, "memory": "8Gi"},
        ),  # fmt: skip
        Case(
            ("r = {'cpu': 2}", "big = False\nif big:\n    r['gpu'] = 1\nelse:\n    r['gpu'] = 0"),
            "r",
            {"cpu": 2, "gpu": 0},
        ),  # fmt: skip
        Case(("xs = [1]", "xs.append(2)", "xs += [3]"), "xs", [1, 2, 3]),
        Case(("a, b = 1, 'two'",), "(a, b)", (1, "two")),
        Case(("n = 2",), "n if n > 1 else 0", 2),
        Case(("base = {'a': 1}",), "{**base, 'b': 2}", {"a": 1, "b": 2}),
        Case(("total = 0\nfor i in [1, 2, 3]:\n    total += i",), "total", 6),
        Case(("from kubeflow.trainer import TrainerClient", "c = TrainerClient()"), "c", Client()),
        Case(
            (
                "from kubeflow.trainer import TrainerClient",
                "c = TrainerClient()\nrt = c.get_runtime('jax-distributed')",
            ),
            "rt",
            RuntimeRef("jax-distributed"),
        ),  # fmt: skip
        Case(
            (
                "from kubeflow.trainer import TrainerClient",
                "c = TrainerClient()\nfor r in c.list_runtimes():\n"
                "    if r.name == 'xgboost-distributed':\n        rt = r\n        break",
            ),
            "rt.name",
            "xgboost-distributed",
        ),  # fmt: skip
        Case(("def train():\n    pass",), "train", Function("train", 0, 1)),
    ],
    ids=lambda c: c.expression,
)
def test_a_name_holds_what_running_the_cells_would_give(case):
    assert value(case.cells, case.expression) == case.expected


def test_an_sdk_call_keeps_its_resolved_arguments():
    found = value(("import kubeflow.trainer as kt", "n = 3"), "kt.CustomTrainer(num_nodes=n)")
    assert isinstance(found, SdkObject)
    assert (found.kind, found.kwargs) == ("CustomTrainer", {"num_nodes": 3})


@pytest.mark.parametrize(
    "cells, expression, said",
    [
        ((), "BUCKET_NAME", "BUCKET_NAME is never defined"),
        (
            ("import os", "token = os.environ['HF_TOKEN']"),
            "token",
            "HF_TOKEN comes from the environment (cell 2, line 1), which kale_ext does not read "
            "when it compiles",
        ),
        (("import os", "token = os.getenv('HF_TOKEN', '')"), "token", "HF_TOKEN comes from"),
        (("from os import environ", "t = environ.get('T')"), "t", "T comes from the environment"),
        (
            ("import json", "cfg = json.load(open('c.json'))"),
            "cfg",
            "`cfg` (cell 2, line 1): `json.load(open('c.json'))` is computed when the notebook runs",
        ),
        (
            ("import random", "go = random.random() > 0.5", "n = 1\nif go:\n    n = 2"),
            "n",
            "`n` (cell 3, line 2): it is set under `if go`",
        ),
        (("x = 2 ** 100000",), "x", "too large"),
        (("x = 2 ** 200", "x = x ** 200"), "x", "too large"),
        (("x = 3\nfor _ in range(40):\n    x = x * x",), "x", "too large"),
        (
            ("n = 0\nfor a in range(1000):\n    for b in range(1000):\n        n += 1",),
            "n",
            "computes too much before it",
        ),
    ],
)
def test_what_cannot_be_known_says_where_and_why(cells, expression, said):
    with pytest.raises(Unresolvable) as info:
        value(cells, expression)
    assert said in info.value.message


def test_the_environment_is_named_for_the_caller():
    with pytest.raises(Unresolvable) as info:
        value(("import os", "t = os.environ['HF_TOKEN']"), "{'HF_TOKEN': t}")
    assert info.value.env == "HF_TOKEN"
