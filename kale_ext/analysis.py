"""Names: what each cell defines and reads, and the self-containment check.

Python's own symbol tables (``symtable``) decide scoping, so nested functions, lambdas,
comprehensions, class bodies, ``global``, ``nonlocal``, ``del``, decorators and default
arguments follow the language's real rules. Reads at a cell's top level, in class bodies and in
comprehensions happen when the cell runs; reads inside functions and lambdas happen later.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import symtable
from dataclasses import dataclass, field

from .errors import Diagnostic
from .notebook import Cell

BUILTINS = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__",
    "__annotations__",
}  # fmt: skip

#: Names a notebook kernel provides but a script lacks. `display` gets a shim in the function.
SHIMS = frozenset({"display"})
NOTEBOOK_ONLY = frozenset(
    {"get_ipython", "In", "Out", "_", "__", "___", "_i", "_ii", "_iii", "_ih", "_oh", "_dh", "_exit_code"}
)
_COMPREHENSIONS = frozenset({"listcomp", "setcomp", "dictcomp", "genexpr"})


@dataclass
class CellNames:
    binds: set[str] = field(default_factory=set)  # bound at the cell's top level
    reads_now: set[str] = field(default_factory=set)  # read while the cell runs
    reads_later: set[str] = field(default_factory=set)  # read by functions it defines
    global_binds: set[str] = field(default_factory=set)  # assigned under `global` in a function
    top_globals: set[str] = field(default_factory=set)  # `global x` at the cell's top level
    star_import: bool = False


def cell_names(source: str) -> CellNames:
    """Names of one cell of plain Python. Raises SyntaxError (with a line) if it does not parse."""
    top = symtable.symtable(source, "<cell>", "exec")
    names = CellNames()
    for sym in top.get_symbols():
        n = sym.get_name()
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            names.binds.add(n)
        if sym.is_referenced():
            names.reads_now.add(n)
        if n == "*":
            names.star_import = True
    for child in top.get_children():
        _scope(child, _runs_now(child), names)
    names.binds.discard("*")
    if "global" in source:
        names.top_globals = _top_level_globals(ast.parse(source).body)
    return names


def _top_level_globals(stmts: list[ast.stmt]) -> set[str]:
    """Names in `global` statements outside any function or class."""
    found: set[str] = set()
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global):
            found.update(node.names)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _runs_now(table: symtable.SymbolTable) -> bool:
    return table.get_type() == "class" or table.get_name() in _COMPREHENSIONS


def _scope(table: symtable.SymbolTable, now: bool, names: CellNames) -> None:
    reads = names.reads_now if now else names.reads_later
    for sym in table.get_symbols():
        if sym.is_global():
            if sym.is_referenced():
                reads.add(sym.get_name())
            if sym.is_declared_global() and sym.is_assigned():
                names.global_binds.add(sym.get_name())
    for child in table.get_children():
        _scope(child, now and _runs_now(child), names)


@dataclass
class BodyCell:
    """A cell of the function body, in the order the function runs it."""

    cell: Cell
    names: CellNames
    tree_source: str  # plain Python of the cell (for locating a name's line)
    cell_line: object  # callable: source line -> cell line


def check_self_contained(
    body: list[BodyCell],
    parameters: set[str],
    left_out: dict[str, tuple[Cell, str]],
) -> tuple[list[Diagnostic], set[str]]:
    """Check every name the body reads; return diagnostics and the shims the body needs.

    ``left_out`` maps a name to a cell that defines it but is not part of the body, with the
    reason (e.g. "tagged skip").
    """
    diags: list[Diagnostic] = []
    shims: set[str] = set()
    defined = set(parameters)
    everywhere = set(parameters)
    first_def: dict[str, Cell] = {}
    for bc in body:
        for n in bc.names.binds | bc.names.global_binds:
            first_def.setdefault(n, bc.cell)
        everywhere |= bc.names.binds | bc.names.global_binds
    star = next((bc.cell for bc in body if bc.names.star_import), None)
    reported: set[str] = set()

    def check(bc: BodyCell, n: str, known: set[str]) -> None:
        if n in known or n in BUILTINS or n in reported:
            return
        if n in SHIMS:
            shims.add(n)
            return
        reported.add(n)
        line = bc.cell_line(_find_line(bc.tree_source, n))
        used = f"name `{n}` used in cell {bc.cell.index + 1}" + (f", line {line}" if line else "")
        severity, code = "error", "undefined-name"
        if n in NOTEBOOK_ONLY:
            msg = f"{used} exists only inside a notebook kernel; a training job has no `{n}`"
        elif n in first_def:
            later = first_def[n]
            msg = (
                f"{used} is defined only later, in cell {later.index + 1}; the function runs "
                "imports, then functions, then the other cells in notebook order"
            )
        elif n in left_out:
            where, why = left_out[n]
            msg = f"{used} is defined only in cell {where.index + 1}, which is {why}"
        elif star is not None:
            severity, code = "warning", "star-import"
            msg = (
                f"{used} is not defined in the notebook; it may come from the star import "
                f"in cell {star.index + 1}"
            )
        else:
            msg = f"{used} is never defined"
            close = difflib.get_close_matches(n, everywhere | BUILTINS, n=1)
            if close:
                msg += f" (did you mean `{close[0]}`?)"
        diags.append(Diagnostic(severity, msg, bc.cell.index, bc.cell.id, line, code))

    for bc in body:
        for n in sorted(bc.names.reads_now - bc.names.binds):
            check(bc, n, defined)
        defined |= bc.names.binds | bc.names.global_binds
    for bc in body:
        for n in sorted(bc.names.reads_later):
            check(bc, n, everywhere)
    return diags, shims


def _find_line(source: str, name: str) -> int | None:
    """The first line where ``name`` is read (only called to report an error)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names)
    ]
    return min(lines) if lines else None


def rewrite_globals(source: str, wrapper_names: set[str], keep_global: set[str]) -> str:
    """Make `global x` inside the cell's functions refer to the function body's `x`.

    In a notebook, `global x` reaches the notebook's top level; once the cells live inside one
    function, that top level is the function's scope, reached with `nonlocal`. A top-level
    `global` statement is a no-op in a notebook; it is kept (then every such name stays a
    module global, consistently).
    """
    if "global" not in source:
        return source
    tree = ast.parse(source)
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Global):
                    to_local = [n for n in inner.names if n in wrapper_names - keep_global]
                    if to_local:
                        edits.append((inner, to_local))
    if not edits:
        return source
    lines = source.splitlines(keepends=True)
    done = set()
    for node, to_local in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        if id(node) in done:
            continue
        done.add(id(node))
        rest = [n for n in node.names if n not in to_local]
        stmt = f"nonlocal {', '.join(to_local)}" + (f"; global {', '.join(rest)}" if rest else "")
        text = lines[node.lineno - 1]
        lines[node.lineno - 1] = text[: node.col_offset] + stmt + text[node.end_col_offset :]
    return "".join(lines)
