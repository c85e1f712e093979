"""A sweep's search space: ``--param`` specs, typed by the notebook's parameters cell.

    lr=1e-4,1e-3,1e-2        values (a grid axis; a categorical choice in a random search)
    opt=choice(sgd,adam)     the same, spelled as a choice
    lr=loguniform(1e-5,1e-1) a float range, sampled on a log scale (random and tpe searches)
    dropout=uniform(0,0.5)   a float range
    layers=int(1,4)          a whole-number range, both ends included

Every value is typed as the parameter's default is (kale_ext/job/arguments.py); a bad spec is a
ConfigError naming the parameter and the text.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..job.arguments import typed_arguments

WHERE = "param"
RANGES = ("uniform", "loguniform", "int")
_CALL = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.S)


@dataclass(frozen=True)
class Dimension:
    """One swept parameter: its values (``values``), or a range (``kind``, ``low``, ``high``)."""

    name: str
    text: str  # as the user wrote it
    values: tuple = ()
    kind: str = "values"  # values, uniform, loguniform, int
    low: float = 0
    high: float = 0

    @property
    def is_range(self) -> bool:
        return self.kind != "values"

    def to_dict(self) -> dict:
        if self.is_range:
            return {"name": self.name, "kind": self.kind, "low": self.low, "high": self.high}
        return {"name": self.name, "kind": "values", "values": list(self.values)}


def split_items(text: str) -> list[str]:
    """``text`` cut at its commas, except those inside brackets, parentheses or quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def _typed(parameters: dict, name: str, values: list, text: str) -> tuple:
    if not values or any(v == "" for v in values):
        raise ConfigError(f"{WHERE}.{name}", f"{text!r} has an empty value")
    return tuple(typed_arguments(parameters, {name: v}, WHERE)[name] for v in values)


def _number(name: str, text: str, item: str) -> float:
    try:
        value = float(item)
    except ValueError:
        raise ConfigError(f"{WHERE}.{name}", f"{text!r}: {item!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{WHERE}.{name}", f"{text!r}: {item!r} is not a finite number")
    return value


def _range(parameters: dict, name: str, kind: str, args: list[str], text: str) -> Dimension:
    where = f"{WHERE}.{name}"
    if len(args) != 2:
        raise ConfigError(where, f"{text!r}: {kind}(LOW,HIGH) takes two numbers")
    low, high = (_number(name, text, a) for a in args)
    default = parameters[name]
    if kind == "int":
        if isinstance(default, bool) or not isinstance(default, int):
            kind_of = type(default).__name__
            raise ConfigError(where, f"{text!r}: int(LOW,HIGH) needs an int parameter; "
                              f"{name} is {kind_of} (default {default!r})")  # fmt: skip
        if not (low.is_integer() and high.is_integer()):
            raise ConfigError(where, f"{text!r}: int(LOW,HIGH) takes whole numbers")
    elif isinstance(default, bool) or not isinstance(default, float):
        raise ConfigError(where, f"{text!r}: {kind}(LOW,HIGH) needs a float parameter; {name} is "
                          f"{type(default).__name__} (default {default!r})")  # fmt: skip
    if kind == "loguniform" and low <= 0:
        raise ConfigError(where, f"{text!r}: loguniform needs both ends above 0, got {args[0]}")
    if low >= high:
        raise ConfigError(where, f"{text!r}: the low end {args[0]} must be below the high end "
                          f"{args[1]}")  # fmt: skip
    if kind == "int":
        low, high = int(low), int(high)
    return Dimension(name, text, kind=kind, low=low, high=high)


def parse_dimension(parameters: dict, name: str, text: Any) -> Dimension:
    """One ``NAME=SPEC`` (``text`` the SPEC; a JSON list from the REST API is its values)."""
    if name not in parameters:
        typed_arguments(parameters, {name: None}, WHERE)  # the error naming the known ones
    if isinstance(text, list):
        return Dimension(name, repr(text), _typed(parameters, name, text, repr(text)))
    if not isinstance(text, str):
        return Dimension(name, repr(text), _typed(parameters, name, [text], repr(text)))
    call = _CALL.match(text)
    if call and call.group(1) in (*RANGES, "choice"):
        kind, args = call.group(1), split_items(call.group(2))
        if kind == "choice":
            return Dimension(name, text, _typed(parameters, name, args, text))
        return _range(parameters, name, kind, args, text)
    if (
        call
        and isinstance(parameters[name], (int, float))
        and not isinstance(parameters[name], bool)
    ):
        raise ConfigError(f"{WHERE}.{name}", f"{text!r}: unknown range {call.group(1)}(...) "
                          "(use uniform, loguniform, int or choice)")  # fmt: skip
    return Dimension(name, text, _typed(parameters, name, split_items(text), text))


@dataclass(frozen=True)
class Space:
    dimensions: tuple[Dimension, ...]

    @property
    def has_ranges(self) -> bool:
        return any(d.is_range for d in self.dimensions)

    def size(self) -> int:
        """How many points the grid has: the product of the values' counts (nothing built)."""
        return math.prod(len(d.values) for d in self.dimensions)

    def grid(self, limit: int | None = None) -> list[dict]:
        """Every combination of the values, in order (the first parameter varies slowest). With
        ``limit``, a grid of more points is refused before any point is made."""
        ranged = [d.name for d in self.dimensions if d.is_range]
        if ranged:
            raise ConfigError(f"{WHERE}.{ranged[0]}", "a range needs a random or tpe search "
                              "(--random N or --search tpe), not a grid")  # fmt: skip
        if limit is not None and self.size() > limit:
            counts = " × ".join(f"{len(d.values)} {d.name}" for d in self.dimensions)
            raise ConfigError(WHERE, f"the grid has {self.size():,} points ({counts}); a sweep "
                              f"runs at most {limit:,} trials: give fewer values, or search "
                              f"a sample of them (--random N)")  # fmt: skip
        names = [d.name for d in self.dimensions]
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(
            *(d.values for d in self.dimensions))]  # fmt: skip

    def suggest(self, trial) -> dict:
        """One point drawn through an Optuna trial (its sampler decides)."""
        point = {}
        for d in self.dimensions:
            if d.kind == "int":
                point[d.name] = trial.suggest_int(d.name, int(d.low), int(d.high))
            elif d.is_range:
                log = d.kind == "loguniform"
                point[d.name] = trial.suggest_float(d.name, d.low, d.high, log=log)
            else:  # Optuna keeps choices that are str, int, float, bool or None: others by index
                plain = all(v is None or isinstance(v, (str, int, float)) for v in d.values)
                choices = list(d.values) if plain else list(range(len(d.values)))
                picked = trial.suggest_categorical(d.name, choices)
                point[d.name] = picked if plain else d.values[picked]
        return point

    def to_dict(self) -> list[dict]:
        return [d.to_dict() for d in self.dimensions]


def parse_space(parameters: dict, specs: dict[str, Any]) -> Space:
    """The space of ``specs`` (parameter name → spec text or list of values)."""
    if not specs:
        raise ConfigError(WHERE, "a sweep needs at least one --param NAME=VALUES")
    return Space(tuple(parse_dimension(parameters, n, t) for n, t in specs.items()))
