"""Why a kernel's value cannot travel into a job, in the words a user reads."""

from __future__ import annotations

import enum
import io
import types

import pytest

from kale_ext.ipython.problems import Problem, why_not
from kale_ext.job.distributed import DistributedConfig

_NOT_LITERAL = (
    "only literals (numbers, strings, bools, None and lists, dicts or tuples of them), modules, "
    "imported names, and functions and classes defined in the notebook travel into the job"
)


class Color(enum.IntEnum):
    RED = 1


def _generator():
    yield 1


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (io.StringIO(), "is an open file: it cannot travel to another process; open it inside "
         "the cell"),
        (_generator(), "is a generator: its progress cannot travel; create it inside the cell"),
        (DistributedConfig(), "is a DistributedConfig: pass it with --config instead of reading "
         "it in the cell"),
        (float("inf"), "is inf, which is not a finite number: set it inside the cell"),
        (Color.RED, f"is a {__name__}.Color, not a plain int: convert it, e.g. `int(...)`, in "
         "the kernel, or compute it inside the cell"),
        (b"x", "is a bytes: parameters are numbers, strings, bools, None, lists, dicts or tuples"),
        ([object()], f"is a list holding values that are not literals (or refer to themselves): "
         f"{_NOT_LITERAL}; build it inside the cell"),
        (types.SimpleNamespace(), f"is a types.SimpleNamespace object, which cannot travel: "
         f"{_NOT_LITERAL}; create it inside the cell"),
        (print, "is a builtin_function_or_method that is neither defined in the notebook nor "
         "importable by name: define it in a cell, or import it from a module"),
    ],
)  # fmt: skip
def test_why_a_value_cannot_travel(value, why):
    assert why_not(value) == why


def test_an_instance_of_a_notebook_class():
    notebook_class = type("Net", (), {"__module__": "__main__"})
    assert why_not(notebook_class()) == (
        "is an instance of the notebook's class `Net`: its state cannot travel; create it "
        "inside the cell"
    )
    assert why_not(notebook_class(), user_module="other").startswith("is a __main__.Net object")


def test_a_problem_names_the_variable_its_line_and_its_reader():
    assert str(Problem("fh", None, 3, "is an open file")) == "line 3: `fh` is an open file"
    assert str(Problem("fh", None, None, "is an open file")) == "`fh` is an open file"
    assert str(Problem("fh", "load", 2, "is an open file")) == (
        "`fh` (read by `load`) is an open file"
    )
