"""The source code of the functions and classes a notebook defined, read back from a kernel:
``inspect.getsource`` for functions (decorators unwrapped), the defining cell for classes
(Python 3.11's ``inspect`` cannot find classes defined in a kernel)."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from collections.abc import Sequence


def defined_name(tree: ast.Module) -> str | None:
    """The name a source defines, when it holds exactly one function or class."""
    defs = [
        s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    return defs[0].name if len(defs) == 1 else None


def unwrap(value):
    """The function under decorators that keep it in ``__wrapped__`` (functools.wraps,
    lru_cache, ...); other values as they are."""
    if callable(value) and not inspect.isclass(value) and hasattr(value, "__wrapped__"):
        try:
            return inspect.unwrap(value)
        except ValueError:
            return value
    return value


def function_source(func) -> str | None:
    """A function's source, dedented (decorators included), or None when it has none."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    return textwrap.dedent(source)


def class_source(cls, history: Sequence[str]) -> str | None:
    """A notebook class's source: the cell its methods were compiled from, else the newest cell
    of the kernel's history that defines a class of that name (Python 3.11's inspect cannot find
    classes defined in a kernel)."""
    try:
        return textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        pass
    for code in _codes_of(cls):
        lines = linecache.getlines(code.co_filename)
        if not lines:
            continue
        found = _class_in("".join(lines), cls.__name__, code.co_firstlineno)
        if found:
            return found
    for cell in reversed(history):
        if isinstance(cell, str) and cls.__name__ in cell:
            found = _class_in(cell, cls.__name__, None)
            if found:
                return found
    return None


def _codes_of(cls):
    """The code objects of a class's methods and properties (not those made by exec)."""
    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            candidates = [value.fget, value.fset, value.fdel]
        else:
            candidates = [value]
        for c in candidates:
            if inspect.isfunction(c):
                c = inspect.unwrap(c)
                if not c.__code__.co_filename.startswith("<string"):
                    yield c.__code__


def _class_in(text: str, name: str, line: int | None) -> str | None:
    """The source of the last top-level class ``name`` in ``text`` (the one spanning ``line``
    when given), decorators included."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    matches = [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and node.name == name
        and (line is None or node.lineno <= line <= (node.end_lineno or node.lineno))
    ]
    if not matches:
        return None
    node = matches[-1]
    start = min([d.lineno for d in node.decorator_list] + [node.lineno])
    lines = text.splitlines(keepends=True)
    return "".join(lines[start - 1 : node.end_lineno])
