"""Packages: imported modules → distributions, by name; where each came from.

The standard library is excluded; ``%pip``/``!pip`` lines and the user's own list override an
import's package of the same distribution name, or named like the import (:func:`provides`). A
module that is not installed here is reported, never guessed. A version is pinned only where the
user wrote one: the job stage (job/spec.py) pins the rest to the versions installed here when
the job asks for pinning (the ``pin_packages`` option), from the ``here`` each :class:`Package`
records. At start-up a package with a ``module`` is installed only when that import is missing;
one with a version only when the installed one differs (job/trainjob.py's bootstrap).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as md
import importlib.util
import sys
from dataclasses import dataclass, replace

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..errors import Diagnostic
from .notebook import Cell

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
NOT_PACKAGES = STDLIB | {"kale_ext"}  # kale_ext.report travels as a shim


#: Where a package of a job comes from, as every view names it.
SOURCES = {
    "import": "imported",
    "pip": "a %pip line",
    "sdk": "the train() call's packages_to_install",
    "option": "the packages option (panel, CLI, magic)",
}


@dataclass(frozen=True)
class Package:
    """One package of a job: what to install, where it came from, when it is installed."""

    requirement: str  # as pip gets it: `scikit-learn`, `numpy<3`, a URL
    source: str  # a key of SOURCES
    cell: int | None = None  # where the notebook says it (0-based), when it does
    line: int | None = None
    module: str | None = None  # the import it provides: installed only when that is missing
    here: str | None = None  # the version installed here: what pinning pins to
    pinned_here: bool = False  # pinned to ``here`` because the job asked for pinning

    @property
    def pinned(self) -> bool:
        """A version (or a URL) is asked for: installed unless the image has an accepted one."""
        if "://" in self.requirement or self.requirement.lstrip().lower().startswith("file:"):
            return True
        try:
            req = Requirement(self.requirement)
        except InvalidRequirement:
            return True
        return bool(req.specifier) or req.url is not None

    @property
    def check(self) -> str:
        """How start-up decides to install it: `import` (only when ``module`` cannot be
        imported), `version` (unless the installed distribution is an accepted version), `pip`
        (always handed to pip, which decides: an SDK notebook's list, as the SDK does)."""
        if self.source == "sdk":
            return "pip"
        return "version" if self.pinned or self.module is None else "import"

    def when(self) -> str:
        """When start-up installs it, in words."""
        return {
            "import": f"only if `import {self.module}` fails (never replaces the image's)",
            "version": "if the image lacks it or has another version",
            "pip": "by pip as listed, as the Kubeflow SDK does (pip skips what is there)",
        }[self.check]

    def origin(self) -> str:
        """Where it came from, in words: `imported (cell 2, line 3)`."""
        where = ""
        if self.cell is not None:
            where = f" (cell {self.cell + 1}" + (f", line {self.line})" if self.line else ")")
        pin = f", pinned to the version installed here ({self.here})" if self.pinned_here else ""
        return SOURCES[self.source] + where + pin

    def to_dict(self) -> dict:
        """As the REST API and --json show it."""
        return {
            "requirement": self.requirement,
            "source": self.source,
            "cell": self.cell,
            "line": self.line,
            "module": self.module,
            "pinned": self.pinned,
            "pinned_here": self.pinned_here,
            "check": self.check,
            "origin": self.origin(),
            "when": self.when(),
        }

    def pin_here(self) -> Package:
        """Pinned to the version installed here (when it is installed and not pinned yet)."""
        if self.here is None or self.pinned or self.source == "sdk":
            return self
        name = requirement_name(self.requirement)
        return replace(self, requirement=f"{name}=={self.here}", pinned_here=True)


def requirements(packages: list[Package]) -> list[str]:
    return [p.requirement for p in packages]


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


def installed_version(name: str) -> str | None:
    """The public version of distribution ``name`` installed here, or None."""
    try:
        return _public(md.version(name))
    except (md.PackageNotFoundError, ValueError):
        return None


def resolve(
    imports: list[Import],
    requested: list[tuple[str, Cell | None, int | None]],
    diagnostics: list[Diagnostic],
    local: frozenset[str] = frozenset(),
) -> list[Package]:
    """The packages of ``imports`` (by distribution name), overridden by ``requested`` specs (in
    order: a %pip line's, with its cell and line; the user's list, without). ``local``: modules
    beside the notebook, which travel with the job (never packages)."""
    found: dict[str, Package] = {}
    seen: set[str] = set()
    for imp in imports:
        if imp.module in NOT_PACKAGES or imp.module in local or imp.module in seen:
            continue
        seen.add(imp.module)
        dist = distribution_of(imp.module)
        if dist:
            name, version = dist
            found.setdefault(
                canonicalize_name(name),
                Package(name, "import", imp.cell.index, imp.line, imp.module, version),
            )
        elif importlib.util.find_spec(imp.module) is None:
            diagnostics.append(
                Diagnostic(
                    "warning",
                    f"module `{imp.module}` is imported but not installed here, so its package "
                    "is not known; add its package to the packages to install",
                    imp.cell.index,
                    imp.cell.id,
                    imp.line,
                    "module-not-installed",
                )
            )
    for spec, cell, line in requested:
        source, where = ("pip", cell.index) if cell is not None else ("option", None)
        cell_id = cell.id if cell is not None else None
        if "://" in spec:
            found[spec] = Package(spec, source, where, line)
            continue
        try:
            req = Requirement(spec)
        except InvalidRequirement as e:
            message = f"invalid package `{spec}`: {e}"
            diagnostics.append(Diagnostic("error", message, where, cell_id, line, "package"))
            continue
        key = canonicalize_name(req.name)
        same = [k for k, p in found.items() if provides(p, key)]
        module = next((found[k].module for k in same if found[k].module), None)
        for k in same:
            del found[k]
        found[key] = Package(spec, source, where, line, module, installed_version(req.name))
    return [found[k] for k in sorted(found)]


def provides(package: Package, name: str) -> bool:
    """Whether ``package`` is the one a requirement named ``name`` (canonical) stands for: the
    same distribution, or the import of that name (`%pip install xgboost` stands for the
    `import xgboost` this machine's xgboost-cpu provides)."""
    if canonicalize_name(requirement_name(package.requirement)) == name:
        return True
    return package.module is not None and canonicalize_name(package.module) == name
