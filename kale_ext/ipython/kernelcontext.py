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
travel: it is reported as a :class:`Problem` naming the variable and saying why.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import inspect
import io
import json
import linecache
import math
import os
import re
import sys
import textwrap
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..compile.analysis import NOTEBOOK_ONLY, cell_names, first_line_of
from ..compile.notebook import Cell, Notebook
from ..errors import KaleExtError

#: A literal parameter's source may be at most this long (the job's command carries it).
MAX_LITERAL = 10_000
_IPYTHON_NAMES = re.compile(r"^_(i{1,3}|i?\d+|_{0,2})$")  # _, __, ___, _i, _ii, _i3, _7
_DUNDER = re.compile(r"^__\w+__$")  # __name__, __file__, ...: the module's own
_MISSING = object()
_LITERAL_HELP = (
    "only literals (numbers, strings, bools, None and lists, dicts or tuples of them), modules, "
    "imported names, and functions and classes defined in the notebook travel into the job"
)


@dataclass(frozen=True)
class Problem:
    """A name the code reads whose value cannot travel into the job."""

    name: str
    reader: str | None  # None: the cell itself; else the definition that reads it
    line: int | None  # line of the reader where the name is read (cell lines for the cell)
    why: str

    def __str__(self) -> str:
        if self.reader is None:
            where = f"line {self.line}: " if self.line else ""
            return f"{where}`{self.name}` {self.why}"
        return f"`{self.name}` (read by `{self.reader}`) {self.why}"


@dataclass(frozen=True)
class Definition:
    name: str  # the name the kernel binds it to
    kind: str  # "function" or "class"
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
        self._history_imports: dict[str, list[tuple[str, str, str]]] | None = None

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

        imports = self._history_import(n, value)
        if imports:
            self._add_imports(imports)
            if isinstance(value, types.ModuleType):
                self._submodules(n, value, tree)
            return
        if isinstance(value, types.ModuleType):
            self._add_imports([_module_import(n, value)])
            self._submodules(n, value, tree)
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
        target = _unwrap(value)
        if inspect.isfunction(target) or inspect.isclass(target):
            if getattr(target, "__module__", None) == self.user_module:
                self._definition(n, target, problem)
                return
        statement = _import_of_object(n, value)
        if statement:
            self._add_imports([statement])
            return
        problem(self._why_not(value))

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
        source = _class_source(value, self.history) if kind == "class" else _function_source(value)
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
        defined = _defined_name(tree)
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

    # -- imports --

    def _history_import(self, n: str, value) -> list[str]:
        """The import statements from the kernel's history that bind ``n`` to ``value``."""
        if self._history_imports is None:
            found: dict[str, list[tuple[str, str, str]]] = {}
            for cell in self.history:
                if isinstance(cell, str) and "import" in cell:
                    for bound, statement, module, attr in _imports_in(cell):
                        found.setdefault(bound, []).append((statement, module, attr))
            self._history_imports = found
        out: list[str] = []
        candidates = list(self._history_imports.get(n, []))
        candidates += [
            (f"from {module} import {n}", module, n)
            for _, module, _ in self._history_imports.get("*", [])
        ]
        for statement, module, attr in candidates:
            if _binds(module, attr, value) and statement not in out:
                out.append(statement)
        return out

    def _submodules(self, n: str, module: types.ModuleType, tree: ast.AST) -> None:
        """`import sklearn` then `sklearn.datasets.x` works in a kernel that imported
        sklearn.datasets somewhere; the job imports the submodules the code reaches."""
        if n != module.__name__:
            return
        for chain in sorted(_attribute_chains(tree, n)):
            parts = chain.split(".")
            for i in range(2, len(parts) + 1):
                sub = ".".join(parts[:i])
                if isinstance(sys.modules.get(sub), types.ModuleType):
                    self._add_imports([f"import {sub}"])

    # -- explaining --

    def _why_not(self, value) -> str:
        t = type(value)
        kind = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        if isinstance(value, io.IOBase):
            return "is an open file: it cannot travel to another process; open it inside the cell"
        if isinstance(value, (types.GeneratorType, types.AsyncGeneratorType)):
            return "is a generator: its progress cannot travel; create it inside the cell"
        if t.__name__ == "DistributedConfig" and t.__module__ == "kale_ext.job.distributed":
            return "is a DistributedConfig: pass it with --config instead of reading it in the cell"
        if t.__module__ == self.user_module:
            return (
                f"is an instance of the notebook's class `{t.__qualname__}`: its state cannot "
                "travel; create it inside the cell"
            )
        if t is float:
            return f"is {value!r}, which is not a finite number: set it inside the cell"
        if isinstance(value, (bool, int, float, str)):  # numpy scalars, enums, ...
            base = next(b for b in (bool, int, float, str) if isinstance(value, b)).__name__
            return (
                f"is a {kind}, not a plain {base}: convert it, e.g. `{base}(...)`, in the "
                "kernel, or compute it inside the cell"
            )
        if isinstance(value, (set, frozenset, bytes, bytearray, complex)):
            return (
                f"is a {kind}: parameters are numbers, strings, bools, None, lists, dicts or tuples"
            )
        if isinstance(value, (list, tuple, dict)):
            return (
                f"is a {kind} holding values that are not literals (or refer to themselves): "
                f"{_LITERAL_HELP}; build it inside the cell"
            )
        if callable(value):
            return (
                f"is a {kind} that is neither defined in the notebook nor importable by name: "
                "define it in a cell, or import it from a module"
            )
        return (
            f"is a {kind} object, which cannot travel: {_LITERAL_HELP}; create it inside the cell"
        )


def _is_literal(value, depth: int = 0) -> bool:
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


def _defined_name(tree: ast.Module) -> str | None:
    defs = [
        s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    return defs[0].name if len(defs) == 1 else None


def _unwrap(value):
    """The function under decorators that keep it in ``__wrapped__`` (functools.wraps,
    lru_cache, ...); other values as they are."""
    if callable(value) and not inspect.isclass(value) and hasattr(value, "__wrapped__"):
        try:
            return inspect.unwrap(value)
        except ValueError:
            return value
    return value


def _function_source(func) -> str | None:
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    return textwrap.dedent(source)


def _class_source(cls, history: Sequence[str]) -> str | None:
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


def _module_import(n: str, module: types.ModuleType) -> str:
    name = module.__name__
    if name == n:
        return f"import {name}"
    parent, _, leaf = name.rpartition(".")
    if parent and leaf == n:
        return f"from {parent} import {leaf}"
    return f"import {name} as {n}"


def _import_of_object(n: str, value) -> str | None:
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


def _attribute_chains(tree: ast.AST, root: str) -> set[str]:
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
