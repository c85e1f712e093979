"""Parameters: literal assignments in `parameters` cells become the function's keyword
parameters, with those defaults, overridable at submit time."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import Diagnostic
from .notebook import Cell


@dataclass(frozen=True)
class Parameter:
    name: str
    default: object
    cell: Cell
    line: int


def parse_parameters(cell: Cell, source: str, diagnostics: list[Diagnostic]) -> list[Parameter]:
    """Parameters of one cell; each statement must be `name = literal` (or annotated)."""

    def error(msg: str, line: int | None, code: str) -> None:
        diagnostics.append(Diagnostic("error", msg, cell.index, cell.id, line, code))

    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        error(f"syntax error: {e.msg}", e.lineno, "syntax-error")
        return []
    found = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring or a bare string is a comment
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            error(
                "a parameters cell holds only assignments `name = literal`; "
                f"found `{ast.get_source_segment(source, stmt) or type(stmt).__name__}`",
                stmt.lineno,
                "parameter-statement",
            )
            continue
        if not isinstance(target, ast.Name):
            error(
                "assign one parameter per line: `name = literal`", stmt.lineno, "parameter-target"
            )
            continue
        try:
            default = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            error(
                f"parameter `{target.id}` must be a literal (number, string, bool, None, or a "
                f"list/dict/tuple of these), not `{ast.get_source_segment(source, value)}`",
                stmt.lineno,
                "parameter-not-literal",
            )
            continue
        if isinstance(default, (set, frozenset, bytes, complex)):
            error(
                f"parameter `{target.id}` has a {type(default).__name__} value; use a number, "
                "string, bool, None, list, dict or tuple",
                stmt.lineno,
                "parameter-type",
            )
            continue
        found.append(Parameter(target.id, default, cell, stmt.lineno))
    return found
