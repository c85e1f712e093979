"""One schema for checking requests and for publishing them: the component schemas of
openapi.yaml (beside this file; its JobOptions is generated from job/options.py), read once and
checked with jsonschema. A body that does not match is a ConfigError naming the field, with the
option table's own message where the field is a job option.

Before the schema, :func:`parse` refuses what JSON allows but no field can hold: integers
longer than Python converts (4,300 digits) and lone surrogates ("\\ud800"), which are not text.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError

OPENAPI = Path(__file__).with_name("openapi.yaml")
#: The body of POST compile and POST jobs.
NOTEBOOK_BODY = "#/components/requestBodies/Notebook/content/application~1json/schema"
#: A JSON escape and UTF-8 bytes of a surrogate, each after the literal that starts it: without
#: either, no string of the body holds one (a substring search finds the literal quickly).
_MAYBE_SURROGATE = (
    (b"\\u", re.compile(rb"\\u[dD][89a-fA-F]")),
    (b"\xed", re.compile(rb"\xed[\xa0-\xbf]")),
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class TooLong(str):
    """A JSON integer with more digits than Python converts: kept as its text, refused later."""


def parse(raw: bytes) -> Any:
    """The JSON value of ``raw``. ValueError (json.JSONDecodeError, UnicodeDecodeError,
    RecursionError as such) when it is no JSON; :class:`ConfigError` naming the field that holds
    an over-long integer or a lone surrogate.

    The walk that finds where such a value is runs only when there is one to find (an integer
    too long to convert was met, or the bytes hold a surrogate's escape or encoding): a 33 KiB
    notebook body is parsed on the event loop in 0.2 ms instead of 0.5 ms."""
    too_long: list[TooLong] = []

    def parse_int(text: str) -> int | TooLong:
        try:
            return int(text)
        except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
            too_long.append(TooLong(text))
            return too_long[-1]

    data = json.loads(raw, parse_int=parse_int)
    text = any(start in raw and pattern.search(raw) for start, pattern in _MAYBE_SURROGATE)
    if text or too_long:
        problem = find_non_text(data, check_text=text)
        if problem is not None:
            raise problem
    return data


def find_non_text(data: Any, check_text: bool = True) -> ConfigError | None:
    """The first over-long integer or string with a lone surrogate in ``data``, as an error
    naming where it is (``notebook.cells[0].source``; a job option as ``env.A``)."""
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, TooLong):
            digits = len(value.lstrip("-"))
            return ConfigError(field_of(path), f"is a number of {digits} digits: far too large")
        if isinstance(value, str):
            if check_text and _not_text(value):
                return ConfigError(
                    field_of(path), "holds a lone surrogate (such as \\ud800), which is not text"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if check_text and _not_text(key):
                    return ConfigError(field_of(path), "has a key that is not text")
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, i), item) for i, item in enumerate(value))
    return None


def _not_text(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


# ----- the schema ------------------------------------------------------------------------------


@functools.cache
def document() -> dict:
    """openapi.yaml as data."""
    import yaml

    return yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0's schema dialect → JSON Schema: `nullable: true` becomes a null type."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "example")}
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [{"type": "null"}, out]}
    return out


def validator(pointer: str):
    """A jsonschema validator of the schema at ``pointer`` in the OpenAPI document
    (`#/components/schemas/JobInfo`), with the option limits in force (job/limits.py)."""
    from ..job.limits_held import current

    return _validator(pointer, tuple(sorted(current().items())))


@functools.lru_cache(maxsize=64)
def _validator(pointer: str, limits: tuple):
    from jsonschema import Draft202012Validator

    from ..job.options import json_schema

    root = _json_schema({k: v for k, v in document().items() if k in ("paths", "components")})
    # the option table itself (tests/job/test_options.py keeps the document's copy equal)
    root["components"]["schemas"]["JobOptions"] = _json_schema(json_schema())
    # compiled once: the schema with its references resolved (a reference looked up on each
    # use was half the check's cost: 0.2 ms of the event loop's time for a POST compile body)
    return Draft202012Validator({**root, **inline_references({"$ref": pointer}, root)})


def inline_references(node: Any, root: dict, seen: tuple[str, ...] = ()) -> Any:
    """``node`` with each local `$ref` replaced by what it points at (a reference to itself
    stays a reference, resolved in ``root`` when used)."""
    if isinstance(node, list):
        return [inline_references(n, root, seen) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
        return {k: inline_references(v, root, seen) for k, v in node.items()}
    target: Any = root
    for part in ref[2:].split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    rest = {k: inline_references(v, root, seen) for k, v in node.items() if k != "$ref"}
    inlined = inline_references(target, root, (*seen, ref))
    if not rest:
        return inlined
    return {"allOf": [inlined, rest]} if set(rest) & set(inlined) else {**inlined, **rest}


def check(data: Any, pointer: str = NOTEBOOK_BODY) -> ConfigError | None:
    """The first way ``data`` does not match the schema at ``pointer``, or None."""
    from jsonschema.exceptions import best_match

    error = best_match(validator(pointer).iter_errors(data))
    return None if error is None else to_config_error(error, data)


def check_body(body: Any) -> tuple[ConfigError | None, ConfigError | None]:
    """A POST compile or POST jobs body against its schema: the first error outside the values
    of `options`, and the first within them (each None when there is none)."""
    from jsonschema.exceptions import best_match

    errors = list(validator(NOTEBOOK_BODY).iter_errors(body))
    inside = [e for e in errors if list(e.absolute_path)[:1] == ["options"]]
    inside = [e for e in inside if len(e.absolute_path) > 1 or e.validator != "type"]
    outside = [e for e in errors if e not in inside]
    body_error, options_error = (
        None if not group else to_config_error(best_match(group), body)
        for group in (outside, inside)
    )
    if body_error is None and options_error is None:
        options_error = redacted_value(body.get("options"))
    return body_error, options_error


def redacted_value(options: Any) -> ConfigError | None:
    """An env value or parameter that reads "<redacted>": a job's record (the options
    annotation) came back
    without the value it left out; say how to give it."""
    from ..job.redact import REDACTED

    if not isinstance(options, dict):
        return None
    env = options.get("env") if isinstance(options.get("env"), dict) else {}
    config = options.get("config") if isinstance(options.get("config"), dict) else {}
    entries = config.get("env") if isinstance(config.get("env"), list) else []
    parameters = options.get("parameters") if isinstance(options.get("parameters"), dict) else {}
    named = [(f"env.{k}", v) for k, v in env.items()]
    named += [(f"parameters.{k}", v) for k, v in parameters.items()]
    named += [
        (f"config.env[{i}].value", e.get("value"))
        for i, e in enumerate(entries)
        if isinstance(e, dict)
    ]
    for field, value in named:
        if value == REDACTED:
            return ConfigError(
                field,
                f"{REDACTED} stands for a value a job's record leaves out: give the value "
                "again, or let the job read it from a Secret (config.env valueFrom.secretKeyRef, "
                "or config.env_from)",
            )
    return None


def field_of(path) -> str:
    """`["options", "packages", 3]` → `packages[3]` (a job option is named as the flags name it,
    as the option table's checks name it); `["notebook", "cells", 0]` → `notebook.cells[0]`."""
    parts = list(path)
    if len(parts) > 1 and parts[0] == "options":
        parts = parts[1:]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


def to_config_error(error, data: Any) -> ConfigError:
    """A jsonschema error (of ``data``) as the message a user reads: the option table's own
    check where the field is a job option, else what the schema asks for."""
    from ..job.options import BY_NAME, JobOptions
    from ..job.options import check as check_option

    path = list(error.absolute_path)
    if path == ["options"] and error.validator == "additionalProperties":
        try:  # the table names the unknown option and lists the known ones
            JobOptions.from_dict(dict.fromkeys(data["options"]))
        except ConfigError as e:
            return e
    if len(path) >= 2 and path[0] == "options" and path[1] in BY_NAME:
        try:
            check_option(BY_NAME[path[1]], data["options"][path[1]], path[1])
        except ConfigError as e:
            return e
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        if unknown:
            return ConfigError(field_of([*path, unknown[0]]), "unknown field")
    return ConfigError(field_of(path), _message(error))


_TYPES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def json_type(value: Any) -> str:
    """How a JSON value's type reads in a message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    return {list: "an array", str: "a string", dict: "an object", type(None): "null"}.get(
        type(value), "a number"
    )


def _message(error) -> str:
    kind, bound = error.validator, error.validator_value
    if kind == "type":
        wanted = " or ".join(
            _TYPES.get(t, t) for t in ([bound] if isinstance(bound, str) else bound)
        )
        return f"must be {wanted}, not {json_type(error.instance)}"
    if kind in ("maximum", "minimum"):
        return f"must be at {'most' if kind == 'maximum' else 'least'} {bound}"
    if kind in ("maxLength", "maxItems", "maxProperties"):
        return f"is too long: at most {bound} allowed"
    if kind in ("minLength", "minItems"):
        return "must not be empty"
    if kind == "pattern":
        return f"must match {bound}"
    if kind == "enum":
        return f"must be one of {', '.join(json.dumps(v) for v in bound)}"
    if kind == "required":
        return error.message
    return f"is not valid here ({kind})"
