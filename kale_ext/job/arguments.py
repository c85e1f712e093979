"""A job's arguments: parameter overrides typed by the literal in the `parameters` cell.

Every front end sends overrides here unchanged: the CLI's and the magics' ``--param NAME=VALUE``
as text, the REST API and the panel as JSON values. ``debug=False`` becomes ``False`` for a bool
parameter, ``lr=1e-3`` a float, ``epochs=abc`` for an int parameter is an error naming the
parameter, the type it expects and the value.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from ..errors import ConfigError

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


_TYPES = {bool: "a bool (true or false)", int: "an int (a whole number)", float: "a float",
          str: "a str", list: "a list", tuple: "a list", dict: "a dict"}  # fmt: skip


def _type_name(default: Any) -> str:
    return _TYPES.get(type(default), type(default).__name__)


def _literal(text: str) -> Any:
    """A JSON or Python literal from text (`[1, 2]`, `{"a": 1}`, `None`), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text


def _convert(default: Any, value: Any) -> Any:
    """``value`` as the type of ``default``; ValueError when it cannot be."""
    if default is None:  # no type to go by: a literal if the text is one, else the text
        return _literal(value) if isinstance(value, str) else value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise ValueError
    if isinstance(default, int):
        if isinstance(value, str):
            value = _literal(value.strip().replace("_", ""))
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        return value
    if isinstance(default, float):
        if isinstance(value, str):
            value = float(value.strip())  # ValueError when not a number
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError
        if not math.isfinite(value):
            raise ValueError
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ValueError
        return value
    if isinstance(default, (list, tuple, dict)):
        if isinstance(value, str):
            value = _literal(value)
        kinds = (list, tuple) if isinstance(default, (list, tuple)) else (dict,)
        if not isinstance(value, kinds):
            raise ValueError
        return list(value) if isinstance(value, tuple) else value
    return value


def _json_value(value: Any, where: str) -> None:
    try:
        if json.loads(json.dumps(value, allow_nan=False)) != value:
            raise ValueError
    except (TypeError, ValueError, RecursionError):
        raise ConfigError(
            where, f"{value!r} must be a JSON value (number, string, bool, null, list or object)"
        ) from None


def typed_arguments(
    parameters: dict[str, Any], given: Any, where: str = "parameters", function: str | None = None
) -> dict:
    """The overrides ``given`` (name → text or JSON value), each typed by its parameter's
    default in ``parameters`` (the arguments of ``function``, when the job is a function of the
    notebook). ConfigError on an unknown name or a value of the wrong type."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise ConfigError(where, "must be a mapping of parameter names to values")
    typed = {}
    for name, value in given.items():
        if name not in parameters and function is not None:
            known = ", ".join(parameters) or "none"
            raise ConfigError(
                f"{where}.{name}", f"{function}() has no argument `{name}` (its arguments: {known})"
            )
        if name not in parameters:
            known = ", ".join(parameters) or "none: tag a cell `parameters`"
            raise ConfigError(
                f"{where}.{name}", f"the notebook has no such parameter (it has: {known})"
            )
        default = parameters[name]
        try:
            typed[name] = _convert(default, value)
        except (ValueError, TypeError, OverflowError):
            raise ConfigError(
                f"{where}.{name}",
                f"expects {_type_name(default)} like its default {default!r}, not {value!r}",
            ) from None
        _json_value(typed[name], f"{where}.{name}")
    return typed
