"""Packages: imported modules → distributions, pinned to the versions installed here.

The standard library is excluded; ``%pip``/``!pip`` lines and the user's own list override the
pins by distribution name. A module that is not installed here is reported, never guessed.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as md
import importlib.util
import sys
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..errors import Diagnostic
from .notebook import Cell

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
NOT_PACKAGES = STDLIB | {"kale_ext"}  # kale_ext.report travels as a shim


@dataclass(frozen=True)
class Import:
    module: str  # top-level module name
    cell: Cell
    line: int


def imports_of(tree: ast.AST) -> list[tuple[str, int]]:
    """Top-level module names imported anywhere in ``tree``, with their lines."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module.split(".")[0], node.lineno))
    return found


@functools.lru_cache(maxsize=1)
def _module_index() -> dict[str, list[str]]:
    return md.packages_distributions()


@functools.lru_cache(maxsize=512)
def distribution_of(module: str) -> tuple[str, str] | None:
    """(distribution name, installed version) providing ``module``, or None."""
    try:  # most distributions are named like their module: a cheap first try
        dist = md.distribution(module)
        files = dist.read_text("top_level.txt")
        if files is None or module in files.split():
            return dist.metadata["Name"], _public(dist.version)
    except md.PackageNotFoundError:
        pass
    for name in _module_index().get(module, []):
        try:
            return md.distribution(name).metadata["Name"], _public(md.version(name))
        except md.PackageNotFoundError:
            continue
    return None


def requirement_name(spec: str) -> str:
    """The distribution name of a requirement string (the string itself for a URL)."""
    try:
        return Requirement(spec).name
    except InvalidRequirement:
        return spec


def _public(version: str) -> str:
    """The public part of a version: `2.13.0+cpu` → `2.13.0` (indexes serve no local labels)."""
    try:
        return Version(version).public
    except InvalidVersion:
        return version


def resolve(
    imports: list[Import],
    requested: list[tuple[str, Cell | None]],
    diagnostics: list[Diagnostic],
    local: frozenset[str] = frozenset(),
) -> list[str]:
    """Pinned requirements for ``imports``, overridden by ``requested`` specs (in order).
    ``local``: modules beside the notebook, which travel with the job (never pinned)."""
    pins: dict[str, str] = {}
    seen: set[str] = set()
    for imp in imports:
        if imp.module in NOT_PACKAGES or imp.module in local or imp.module in seen:
            continue
        seen.add(imp.module)
        found = distribution_of(imp.module)
        if found:
            name, version = found
            pins.setdefault(canonicalize_name(name), f"{name}=={version}")
        elif importlib.util.find_spec(imp.module) is None:
            diagnostics.append(
                Diagnostic(
                    "warning",
                    f"module `{imp.module}` is imported but not installed here, so it cannot be "
                    "pinned; add its package to the packages to install",
                    imp.cell.index,
                    imp.cell.id,
                    imp.line,
                    "module-not-installed",
                )
            )
    for spec, cell in requested:
        if "://" in spec:
            pins[spec] = spec
            continue
        try:
            req = Requirement(spec)
        except InvalidRequirement as e:
            where = cell.index if cell else None
            diagnostics.append(
                Diagnostic("error", f"invalid package `{spec}`: {e}", where, None, None, "package")
            )
            continue
        pins[canonicalize_name(req.name)] = spec
    return [pins[k] for k in sorted(pins)]
