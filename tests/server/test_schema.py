"""The request schema's validator (kale_ext/server/schema.py) is compiled once, its references
resolved: it judges every body as the OpenAPI document's references do, and refuses the same
field with the same message."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from kale_ext.server import schema

NB = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}

BODIES = [
    {"notebook": NB},
    {"notebook": NB, "options": {"nodes": 2, "env": {"A": "1"}}},
    {"notebook": NB, "options": {"nodes": "two"}},
    {"notebook": NB, "options": {"bogus": 1}},
    {"notebook": NB, "options": {"config": {"volumes": [{"name": 3}]}}},
    {"notebook": NB, "options": {"config": {"resources": {"cpu": []}}}},
    {"notebook": [], "path": 3},
    {"notebook": NB, "extra": True},
    {"path": "a.ipynb", "options": {"parameters": {"lr": {"nested": [1, 2]}}}},
]


def by_reference(pointer: str) -> Draft202012Validator:
    """The document's schema as written: each reference looked up when used."""
    compiled = schema.validator(pointer)
    root = {k: compiled.schema[k] for k in ("paths", "components")}
    return Draft202012Validator({**root, "$ref": pointer})


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_the_compiled_validator_judges_as_the_documents_references_do(body):
    compiled = schema.validator(schema.NOTEBOOK_BODY)
    reference = by_reference(schema.NOTEBOOK_BODY)
    mine, theirs = list(compiled.iter_errors(body)), list(reference.iter_errors(body))
    assert sorted(e.message for e in mine) == sorted(e.message for e in theirs)
    if theirs:
        first, expected = best_match(mine), best_match(theirs)
        assert list(first.absolute_path) == list(expected.absolute_path)
        assert str(schema.to_config_error(first, body)) == str(
            schema.to_config_error(expected, body)
        )


def test_no_reference_is_left_to_look_up_in_the_compile_body():
    compiled = schema.validator(schema.NOTEBOOK_BODY).schema
    body = {k: v for k, v in compiled.items() if k not in ("paths", "components")}
    assert "$ref" not in repr(body) and body["properties"]["options"]["type"] == "object"


def test_a_reference_to_itself_stays_a_reference():
    root = {
        "components": {"T": {"type": "object", "properties": {"t": {"$ref": "#/components/T"}}}}
    }
    inlined = schema.inline_references({"$ref": "#/components/T"}, root)
    assert inlined == {"type": "object", "properties": {"t": {"$ref": "#/components/T"}}}
    validator = Draft202012Validator({**root, **inlined})
    assert validator.is_valid({"t": {"t": {}}}) and not validator.is_valid({"t": {"t": 3}})


def _said(result) -> list:
    return [None if e is None else (e.field, str(e)) for e in result]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_a_body_judged_again_gets_the_same_answer(body):
    assert _said(schema.check_body(body)) == _said(schema.check_body(body))


def test_every_name_in_the_document_is_text():
    """YAML reads a bare `on`, `off`, `yes` or `no` as a boolean: a property named `on` became
    the key True, and `required: [on]` demanded a property named True of every answer."""

    def names(node, where="$"):
        if isinstance(node, dict):
            for key, value in node.items():
                yield key, where
                if key == "required" and isinstance(value, list):
                    yield from ((item, f"{where}.required") for item in value)
                yield from names(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from names(item, f"{where}[{i}]")

    wrong = [(name, where) for name, where in names(schema.document()) if not isinstance(name, str)]
    assert not wrong, wrong
