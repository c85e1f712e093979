"""The kernel's context for a `%%trainjob` cell, and the notebook a kernel runs.

A `%%trainjob` cell reads names the notebook defined earlier. They travel into the job as:

- **imports**: a name bound to a module, or to an object a module provides, becomes an import
  statement: the one the kernel ran (found in its input history and checked against
  ``sys.modules``), else one made from the object's ``__name__``/``__module__``;
- **definitions**: functions and classes defined in the notebook, their source recovered from
  the cells that defined them (``inspect.getsource`` for functions, the defining cell for
  classes), together with everything *they* read, recursively;
- **parameters**: literal values (numbers, strings, bools, None, and lists/dicts/tuples of them)
  become the function's parameters, with the kernel's values as defaults.

Anything else (a DataFrame, an open file, a lambda, an instance of a notebook class, ...) cannot
travel: it is reported as a :class:`~kale_ext.ipython.problems.Problem` naming the variable
and saying why. The sources of definitions come from ``definitions.py``, import statements from
``kernelimports.py``.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import json
import math
import os
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..compile.analysis import NOTEBOOK_ONLY, cell_names, first_line_of
from ..compile.notebook import Cell, Notebook
from ..errors import KaleExtError
from .definitions import class_source, defined_name, function_source, unwrap
from .kernelimports import HistoryImports, module_import, object_import, submodule_imports
from .problems import Problem, why_not

#: A literal parameter's source may be at most this long (the job's command carries it).
MAX_LITERAL = 10_000
_IPYTHON_NAMES = re.compile(r"^_(i{1,3}|i?\d+|_{0,2})$")  # _, __, ___, _i, _ii, _i3, _7
_DUNDER = re.compile(r"^__\w+__$")  # __name__, __file__, ...: the module's own
_MISSING = object()


@dataclass(frozen=True)
class Definition:
    """A function or class the job defines again (or an alias of one: `g = f`)."""

    name: str  # the name the kernel binds it to
    kind: str  # "function", "class" or "alias"
    source: str


@dataclass
class KernelContext:
    """What a cell needs from the kernel, in the form the compiler takes."""

    imports: list[str] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    parameters: dict[str, object] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Recovering the context


def from_shell(shell, source: str, first_line: int = 1) -> KernelContext:
    """The context ``source`` (plain Python) needs from an IPython ``shell``."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", None)
    if history is None:
        history = shell.user_ns.get("In", [])
    return recover(
        source,
        shell.user_ns,
        hidden=getattr(shell, "user_ns_hidden", {}),
        history=list(history),
        user_module=getattr(getattr(shell, "user_module", None), "__name__", "__main__"),
        first_line=first_line,
    )


def recover(
    source: str,
    namespace: dict,
    *,
    hidden: dict | None = None,
    history: Sequence[str] = (),
    user_module: str = "__main__",
    first_line: int = 1,
) -> KernelContext:
    """The context ``source`` needs from ``namespace``.

    ``source`` must be plain Python (IPython syntax already transformed); a SyntaxError
    propagates. ``history`` holds the kernel's executed cells, oldest first; ``first_line`` is
    the cell line of ``source``'s first line (for messages).
    """
    return _Recovery(namespace, hidden or {}, history, user_module).run(source, first_line)


class _Recovery:
    """One recovery: resolves each name the source reads, recursively through definitions."""

    def __init__(self, ns: dict, hidden: dict, history: Sequence[str], user_module: str):
        self.ns = ns
        self.hidden = hidden
        self.history = history
        self.user_module = user_module
        self.ctx = KernelContext()
        self.known: set[str] = set()  # bound by the cell or by recovered code
        self.done: set[str] = set()
        self.defined: dict[int, str] = {}  # id of a recovered object -> the name it defines
        self.aliases: list[Definition] = []  # `g = f`: after every definition
        self.history_imports = HistoryImports(history)

    def run(self, source: str, first_line: int) -> KernelContext:
        names = cell_names(source)
        self.known |= names.binds | names.global_binds
        tree = ast.parse(source)
        reads = (names.reads_now | names.reads_later) - names.binds
        for n in sorted(reads):
            self.resolve(n, None, tree, first_line - 1)
        self.ctx.definitions += self.aliases
        return self.ctx

    # -- one name --

    def resolve(self, n: str, reader: str | None, tree: ast.AST, line_shift: int) -> None:
        if n in self.known or n in self.done:
            return
        value = self.ns.get(n, _MISSING)
        if value is _MISSING or self._kernel_provided(n, value):
            return  # undefined or notebook-only: the compiler reports it, with its line
        self.done.add(n)

        def problem(why: str) -> None:
            line = first_line_of(tree, n)
            self.ctx.problems.append(Problem(n, reader, line + line_shift if line else None, why))

        imports = self.history_imports.binding(n, value)
        if imports or isinstance(value, types.ModuleType):
            self._add_imports(imports or [module_import(n, value)])
            if isinstance(value, types.ModuleType):
                self._add_imports(submodule_imports(n, value, tree))
            return
        if _is_literal(value):
            text = repr(value)
            if len(text) > MAX_LITERAL:
                problem(
                    f"is a {type(value).__name__} whose value is {len(text):,} characters long: "
                    "too large to travel as a parameter; build or load it inside the cell"
                )
                return
            self.ctx.parameters[n] = value
            return
        target = unwrap(value)
        if inspect.isfunction(target) or inspect.isclass(target):
            if getattr(target, "__module__", None) == self.user_module:
                self._definition(n, target, problem)
                return
        statement = object_import(n, value)
        if statement:
            self._add_imports([statement])
            return
        problem(why_not(value, self.user_module))

    def _kernel_provided(self, n: str, value) -> bool:
        if n in NOTEBOOK_ONLY or _IPYTHON_NAMES.match(n) or _DUNDER.match(n):
            return True
        if n in self.hidden and self.hidden[n] is value:
            return True
        return getattr(builtins, n, _MISSING) is value

    def _add_imports(self, statements: list[str]) -> None:
        for s in statements:
            if s not in self.ctx.imports:
                self.ctx.imports.append(s)

    # -- definitions --

    def _definition(self, n: str, value, problem) -> None:
        """``value`` is the function itself (decorators unwrapped): its source has them."""
        kind = "class" if inspect.isclass(value) else "function"
        if id(value) in self.defined:  # another name for a definition already recovered
            self._alias(n, self.defined[id(value)])
            return
        qualname = getattr(value, "__qualname__", "")
        if getattr(value, "__name__", "") == "<lambda>":
            problem(
                "is a lambda, whose source cannot be separated from its line: define it with def"
            )
            return
        if "<locals>" in qualname:
            problem(
                f"is a {kind} defined inside another function: its closure cannot travel; "
                "define it at the top level of a cell"
            )
            return
        source = class_source(value, self.history) if kind == "class" else function_source(value)
        if source is None:
            problem(
                f"is a {kind} whose source code is not available (made with exec() or "
                "loaded from compiled code): define it in a cell, or import it from a module"
            )
            return
        try:
            tree = ast.parse(source)
            names = cell_names(source)
        except SyntaxError:
            problem(f"is a {kind} whose source could not be read back from the kernel")
            return
        defined = defined_name(tree)
        if defined is None:
            problem(f"is a {kind} whose source could not be read back from the kernel")
            return
        self.defined[id(value)] = defined
        self.known |= names.binds | names.global_binds | {n}
        for dep in sorted((names.reads_now | names.reads_later) - names.binds):
            self.resolve(dep, n, tree, 0)  # dependencies first: class bases, decorators
        self.ctx.definitions.append(Definition(defined, kind, source))
        if defined != n:
            self._alias(n, defined)

    def _alias(self, n: str, defined: str) -> None:
        if n != defined:
            self.aliases.append(Definition(n, "alias", f"{n} = {defined}\n"))


def _is_literal(value, depth: int = 0) -> bool:
    """Whether ``value`` travels as a parameter: a literal whose repr reads back equal."""
    if depth > 20:
        return False
    t = type(value)
    if t in (bool, int, str, type(None)):
        return True
    if t is float:
        return math.isfinite(value)
    if t in (list, tuple):
        if not all(_is_literal(v, depth + 1) for v in value):
            return False
    elif t is dict:
        if not all(
            type(k) in (bool, int, str, float, type(None)) and _is_literal(v, depth + 1)
            for k, v in value.items()
        ):
            return False
    else:
        return False
    if depth:
        return True
    try:  # the parameter's default is written as its repr and read back by the compiler
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False


# ---------------------------------------------------------------------------------------------
# The in-memory notebook


def context_notebook(
    ctx: KernelContext, body: str, name: str
) -> tuple[Notebook, dict[int, str], int]:
    """A notebook the compiler takes: imports, parameters, one `functions` cell per recovered
    definition, then the body. Returns it, a label for each recovered cell, and the body's
    index."""
    cells: list[tuple[str, tuple[str, ...], str]] = []
    if ctx.imports:
        cells.append(
            ("\n".join(ctx.imports) + "\n", ("imports",), "the imports recovered from the kernel")
        )
    if ctx.parameters:
        text = "".join(f"{k} = {v!r}\n" for k, v in ctx.parameters.items())
        cells.append((text, ("parameters",), "the kernel's variables"))
    for d in ctx.definitions:
        label = "the alias" if d.kind == "alias" else d.kind
        cells.append((d.source, ("functions",), f"{label} `{d.name}` (from the kernel)"))
    cells.append((body, (), "the cell"))
    digest = hashlib.sha256(json.dumps([c[:2] for c in cells]).encode()).hexdigest()
    nb = Notebook(
        cells=[
            Cell(index=i, cell_type="code", source=src, tags=tags, id=f"kale-ext-{i}")
            for i, (src, tags, _) in enumerate(cells)
        ],
        name=name,
        metadata={},
        sha256=digest,
    )
    labels = {i: label for i, (_, _, label) in enumerate(cells)}
    return nb, labels, len(cells) - 1


# ---------------------------------------------------------------------------------------------
# The kernel's notebook file


class NotebookNotFound(KaleExtError):
    """The kernel cannot tell which notebook file it runs."""


def session_notebook_name(shell=None) -> str | None:
    """The file name (no directory) of the kernel's notebook, when the kernel knows it."""
    try:
        return find_notebook(shell).name
    except NotebookNotFound:
        return None


def find_notebook(shell=None, explicit: str | os.PathLike | None = None) -> Path:
    """The notebook file this kernel runs: ``explicit``, else VS Code's ``__vsc_ipynb_file__``,
    else the ``JPY_SESSION_NAME`` that jupyter_server gives its kernels."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise NotebookNotFound(f"--notebook {explicit}: no such file")
        return path
    ns = getattr(shell, "user_ns", None) or {}
    tried = []
    vsc = ns.get("__vsc_ipynb_file__")
    if isinstance(vsc, str) and vsc:
        if Path(vsc).is_file():
            return Path(vsc)
        tried.append(f"VS Code names {vsc}, which does not exist")
    session = os.environ.get("JPY_SESSION_NAME")
    if session:
        p = Path(session)
        for candidate in (p, Path.cwd() / p, Path.cwd() / p.name):
            if candidate.suffix == ".ipynb" and candidate.is_file():
                return candidate
        tried.append(
            f"the kernel's session names {session}, which is not a notebook file here "
            "(renamed or moved?)"
        )
    why = "; ".join(tried) if tried else "this kernel was not started for a notebook file"
    raise NotebookNotFound(f"cannot tell which notebook to submit: {why}; pass --notebook PATH")
