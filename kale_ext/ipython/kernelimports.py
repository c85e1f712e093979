"""Import statements that give a job the modules and imported names a kernel holds: the
statement the kernel ran (found in its input history and checked against ``sys.modules``), else
one made from the object's ``__name__`` and ``__module__``."""

from __future__ import annotations

import ast
import functools
import sys
import types
from collections.abc import Sequence

_MISSING = object()


class HistoryImports:
    """The import statements of a kernel's input history, by the name they bind."""

    def __init__(self, history: Sequence[str]):
        self._history = history

    @functools.cached_property
    def _found(self) -> dict[str, list[tuple[str, str, str]]]:
        """(statement, module, attribute) by bound name; read when first needed."""
        found: dict[str, list[tuple[str, str, str]]] = {}
        for cell in self._history:
            if isinstance(cell, str) and "import" in cell:
                for bound, statement, module, attr in _imports_in(cell):
                    found.setdefault(bound, []).append((statement, module, attr))
        return found

    def binding(self, n: str, value) -> list[str]:
        """The statements that bind ``n`` to ``value`` now (a star import gives a
        ``from module import n``)."""
        candidates = list(self._found.get(n, []))
        candidates += [
            (f"from {module} import {n}", module, n) for _, module, _ in self._found.get("*", [])
        ]
        out: list[str] = []
        for statement, module, attr in candidates:
            if _binds(module, attr, value) and statement not in out:
                out.append(statement)
        return out


def module_import(n: str, module: types.ModuleType) -> str:
    """The statement that binds ``n`` to ``module``."""
    name = module.__name__
    if name == n:
        return f"import {name}"
    parent, _, leaf = name.rpartition(".")
    if parent and leaf == n:
        return f"from {parent} import {leaf}"
    return f"import {name} as {n}"


def object_import(n: str, value) -> str | None:
    """`from module import name` for an object its module provides under its own name."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module == "__main__":
        return None
    if "." in qualname or "<" in qualname:
        return None
    if getattr(sys.modules.get(module), qualname, _MISSING) is not value:
        return None
    return f"from {module} import {qualname}" + (f" as {n}" if qualname != n else "")


def submodule_imports(n: str, module: types.ModuleType, tree: ast.AST) -> list[str]:
    """`import sklearn` then `sklearn.datasets.x` works in a kernel that imported
    sklearn.datasets somewhere; the job imports the loaded submodules the code reaches."""
    if n != module.__name__:
        return []
    out: list[str] = []
    for chain in sorted(_attribute_chains(tree, n)):
        parts = chain.split(".")
        for i in range(2, len(parts) + 1):
            sub = ".".join(parts[:i])
            statement = f"import {sub}"
            if isinstance(sys.modules.get(sub), types.ModuleType) and statement not in out:
                out.append(statement)
    return out


@functools.lru_cache(maxsize=2048)
def _imports_in(cell: str) -> tuple[tuple[str, str, str, str], ...]:
    """(bound name, statement, module, attribute) of each import a cell runs (outside
    functions and classes); a star import gives bound name "*"."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return ()
    found = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    found.append((a.asname, f"import {a.name} as {a.asname}", a.name, ""))
                else:
                    top = a.name.split(".")[0]
                    found.append((top, f"import {a.name}", top, ""))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name == "*":
                    found.append(("*", "", node.module, "*"))
                    continue
                bound = a.asname or a.name
                text = f"from {node.module} import {a.name}"
                found.append(
                    (bound, text + (f" as {a.asname}" if a.asname else ""), node.module, a.name)
                )
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo[0:0] = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return tuple(found)


def _binds(module: str, attr: str, value) -> bool:
    """Whether `import module` (attr "") or `from module import attr` gives ``value`` now."""
    if not attr:
        return sys.modules.get(module) is value
    mod = sys.modules.get(module)
    if mod is not None and getattr(mod, attr, _MISSING) is value:
        return True
    return sys.modules.get(f"{module}.{attr}") is value


def _attribute_chains(tree: ast.AST, root: str) -> set[str]:
    """The dotted attribute chains below ``root`` the code reads (`root.a.b` for `root.a.b.c`)."""
    chains = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id == root and len(parts) > 1:
                chains.add(".".join([root, *reversed(parts[1:])]))
    return chains
