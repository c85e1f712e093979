"""What cannot travel into a job, and why, in the words a user sees: a :class:`Problem` names
the variable (and the definition that reads it) and says what to do instead."""

from __future__ import annotations

import io
import types
from dataclasses import dataclass

_LITERAL_HELP = (
    "only literals (numbers, strings, bools, None and lists, dicts or tuples of them), modules, "
    "imported names, and functions and classes defined in the notebook travel into the job"
)


@dataclass(frozen=True)
class Problem:
    """A name the code reads whose value cannot travel into the job."""

    name: str
    reader: str | None  # None: the cell itself; else the definition that reads it
    line: int | None  # line of the reader where the name is read (cell lines for the cell)
    why: str

    def __str__(self) -> str:
        if self.reader is None:
            where = f"line {self.line}: " if self.line else ""
            return f"{where}`{self.name}` {self.why}"
        return f"`{self.name}` (read by `{self.reader}`) {self.why}"


def why_not(value, user_module: str = "__main__") -> str:
    """Why ``value`` cannot travel, for a kernel whose notebook module is ``user_module``."""
    t = type(value)
    kind = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    if isinstance(value, io.IOBase):
        return "is an open file: it cannot travel to another process; open it inside the cell"
    if isinstance(value, (types.GeneratorType, types.AsyncGeneratorType)):
        return "is a generator: its progress cannot travel; create it inside the cell"
    if t.__name__ == "DistributedConfig" and t.__module__ == "kale_ext.job.distributed":
        return "is a DistributedConfig: pass it with --config instead of reading it in the cell"
    if t.__module__ == user_module:
        return (
            f"is an instance of the notebook's class `{t.__qualname__}`: its state cannot "
            "travel; create it inside the cell"
        )
    if t is float:
        return f"is {value!r}, which is not a finite number: set it inside the cell"
    if isinstance(value, (bool, int, float, str)):  # numpy scalars, enums, ...
        base = next(b for b in (bool, int, float, str) if isinstance(value, b)).__name__
        return (
            f"is a {kind}, not a plain {base}: convert it, e.g. `{base}(...)`, in the "
            "kernel, or compute it inside the cell"
        )
    if isinstance(value, (set, frozenset, bytes, bytearray, complex)):
        return f"is a {kind}: parameters are numbers, strings, bools, None, lists, dicts or tuples"
    if isinstance(value, (list, tuple, dict)):
        return (
            f"is a {kind} holding values that are not literals (or refer to themselves): "
            f"{_LITERAL_HELP}; build it inside the cell"
        )
    if callable(value):
        return (
            f"is a {kind} that is neither defined in the notebook nor importable by name: "
            "define it in a cell, or import it from a module"
        )
    return f"is a {kind} object, which cannot travel: {_LITERAL_HELP}; create it inside the cell"
