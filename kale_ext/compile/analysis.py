"""Names: what each cell defines and reads, and the self-containment check.

Python's own symbol tables (``symtable``) decide scoping, so nested functions, lambdas,
comprehensions, class bodies, ``global``, ``nonlocal``, ``del``, decorators and default
arguments follow the language's real rules. Reads at a cell's top level, in class bodies and in
comprehensions happen when the cell runs; reads inside functions and lambdas happen later.
"""

from __future__ import annotations

import _symtable  # the raw tables behind `symtable`: flags, without a wrapper per name
import ast
import builtins
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import Diagnostic
from . import kept
from .notebook import Cell
from .toplevel import may_not_compile

BUILTINS = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__",
    "__annotations__",
}  # fmt: skip

#: Names a notebook kernel provides but a script lacks. `display` gets a shim in the function.
SHIMS = frozenset({"display"})
#: What a job may import from kale_ext (`from kale_ext import report, checkpoint`): shims.
IN_JOB = frozenset({"report", "checkpoint"})
_IN_JOB_IMPORT = "`from kale_ext import report` or `checkpoint`"
NOTEBOOK_ONLY = frozenset(
    {
        "get_ipython",
        "In",
        "Out",
        "_",
        "__",
        "___",
        "_i",
        "_ii",
        "_iii",
        "_ih",
        "_oh",
        "_dh",
        "_exit_code",
    }
)
_COMPREHENSIONS = frozenset({"listcomp", "setcomp", "dictcomp", "genexpr"})


def _word(word: str, then: str = r"\b") -> re.Pattern:
    """``\bword`` then ``then``, written to start with the word's letters: the regex engine
    skips to them as str.find does (a pattern that starts with \b or an alternation is tried at
    every position: 30-100x slower on a cell)."""
    return re.compile(f"{word}(?<!\\w{word}){then}")


_GLOBAL, _DEL, _KALE_EXT = _word("global"), _word("del"), _word("kale_ext")
_STAR_IMPORT = _word("import", r"\s+\*")
_USE = _symtable.USE
_BINDS = _symtable.DEF_LOCAL | _symtable.DEF_IMPORT
_SCOPE_OFF, _SCOPE_MASK, _DEF_LOCAL = _symtable.SCOPE_OFF, _symtable.SCOPE_MASK, _symtable.DEF_LOCAL
_GLOBAL_IMPLICIT, _GLOBAL_EXPLICIT = _symtable.GLOBAL_IMPLICIT, _symtable.GLOBAL_EXPLICIT
_NOT_IN_A_FUNCTION = {
    ast.Return: "`return` outside a function",
    ast.Yield: "`yield` outside a function",
    ast.YieldFrom: "`yield from` outside a function",
    ast.Await: "top-level `await` (it works in a notebook, not in a training function: "
    "wrap it in asyncio.run())",
}


@dataclass
class CellNames:
    binds: set[str] = field(default_factory=set)  # bound at the cell's top level
    reads_now: set[str] = field(default_factory=set)  # read while the cell runs
    reads_later: set[str] = field(default_factory=set)  # read by functions it defines
    global_binds: set[str] = field(default_factory=set)  # assigned under `global` in a function
    top_globals: set[str] = field(default_factory=set)  # `global x` at the cell's top level
    star_import: bool = False
    future: set[str] = field(default_factory=set)  # `from __future__ import x` features
    #: what `from kale_ext import report, checkpoint` imports: replaced by shims
    kale_ext_names: frozenset[str] = frozenset()
    invalid: list[tuple[int, str]] = field(default_factory=list)  # (line, what) at top level


_FUTURE_ANNOTATIONS = "from __future__ import annotations\n"


def cell_names(source: str, future_annotations: bool = False) -> CellNames:
    """Names of one cell of plain Python. Raises SyntaxError (with a line) if it does not parse.

    With ``future_annotations`` (another cell imports it), annotations are not read. Results are
    kept by source (kept.py), so they are frozen.
    """
    return _cell_names_kept(source, future_annotations)


def _cell_names(source: str, future_annotations: bool) -> CellNames:
    try:
        if future_annotations:
            top = _symtable.symtable(_FUTURE_ANNOTATIONS + source, "<cell>", "exec")
        else:
            top = _symtable.symtable(source, "<cell>", "exec")
    except SyntaxError as e:
        if future_annotations and e.lineno:
            e.lineno -= 1
        raise
    symbols = top.symbols
    if future_annotations:
        symbols = {n: f for n, f in symbols.items() if n != "annotations"}
    binds = {n for n, flags in symbols.items() if flags & _BINDS}
    reads_now = {n for n, flags in symbols.items() if flags & _USE}
    children = top.children
    needs_ast, refused = _needs_ast(source, top, 1 if future_annotations else 0)
    if not children and not needs_ast:  # many cells: no nested scope, nothing more to find
        return CellNames(frozenset(binds), frozenset(reads_now), *_NOTHING_MORE)
    reads_later: set[str] = set()
    global_binds: set[str] = set()
    for child in children:
        if child.name in symbols:  # def, class
            binds.add(child.name)
        _scope(child, _runs_now(child), reads_now, reads_later, global_binds)
    if not needs_ast:  # most others: what symtable tells is all
        return CellNames(
            frozenset(binds),
            frozenset(reads_now),
            frozenset(reads_later),
            frozenset(global_binds),
            *_NOTHING_MORE[2:],
        )
    names = CellNames(binds, reads_now, reads_later, global_binds)
    _refine(ast.parse(source), names)
    if refused is not None and all(line != refused.lineno for line, _ in names.invalid):
        names.invalid.append((refused.lineno or 1, refused.msg))  # in Python's own words
    return _frozen(names)


#: CellNames' other fields, frozen, for a cell without nested scopes or what _refine finds.
_NOTHING_MORE = (frozenset(), frozenset(), frozenset(), False, frozenset(), frozenset(), ())
_cell_names_kept = kept.by_source(_cell_names)


def _frozen(n: CellNames) -> CellNames:
    return CellNames(
        frozenset(n.binds),
        frozenset(n.reads_now),
        frozenset(n.reads_later),
        frozenset(n.global_binds),
        frozenset(n.top_globals),
        n.star_import,
        frozenset(n.future),
        frozenset(n.kale_ext_names),
        tuple(sorted(n.invalid)),
    )


def _needs_ast(source: str, top, line_offset: int) -> tuple[bool, SyntaxError | None]:
    """Whether the cell's text could hold what symtable does not tell (most cells hold none of
    it), and the compiler's refusal of the cell, if it refuses it: `global`, `del`, a kale_ext
    or star import, `__future__`, or a statement the compiler refuses where it stands (a
    `return` outside a function, a `break` outside a loop: where the text cannot rule one out
    (toplevel.py), compiling, 4x cheaper than an AST, tells; the AST then says where a
    top-level one is, and the compiler's message is kept for any other)."""
    needs = bool(  # a substring test first: most cells hold none of the words
        "__future__" in source
        or ("global" in source and _GLOBAL.search(source))
        or ("del" in source and _DEL.search(source))
        or ("kale_ext" in source and _KALE_EXT.search(source))
        or ("import" in source and _STAR_IMPORT.search(source))
    )
    if may_not_compile(source, top, line_offset):
        try:
            compile(source, "<cell>", "exec", dont_inherit=True)
        except SyntaxError as e:  # e.g. "'return' outside function"
            return True, e
    return needs, None


def _refine(tree: ast.Module, names: CellNames) -> None:
    """What symtable does not tell: top-level `global`, `del` of unbound names, star imports."""
    _top_level(tree.body, names)
    stored, deleted = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (deleted if isinstance(node.ctx, ast.Del) else stored).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
            names.star_import |= any(a.name == "*" for a in node.names)
    for n in deleted - stored:  # `del x` of a name the cell never binds reads it first
        names.binds.discard(n)
        names.reads_now.add(n)


def _top_level(stmts: list[ast.stmt], names: CellNames) -> None:
    """What the cell does outside any function or class: `global`, `__future__`, and
    statements that would change meaning inside the training function."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global):
            names.top_globals.update(node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            names.future.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "kale_ext":
            imported = {a.name for a in node.names if a.asname is None}
            if imported <= IN_JOB and len(imported) == len(node.names):
                names.kale_ext_names = frozenset(names.kale_ext_names | imported)
                names.binds.difference_update(imported)
            else:
                names.invalid.append((node.lineno, f"a job can import only {_IN_JOB_IMPORT}"))
        elif isinstance(node, ast.Import) and any(
            a.name.startswith("kale_ext") for a in node.names
        ):
            names.invalid.append(
                (node.lineno, f"write {_IN_JOB_IMPORT}: a job has no kale_ext package")
            )
        elif type(node) in _NOT_IN_A_FUNCTION:
            names.invalid.append((node.lineno, _NOT_IN_A_FUNCTION[type(node)]))
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _runs_now(table) -> bool:
    return table.type == _symtable.TYPE_CLASS or table.name in _COMPREHENSIONS


def _scope(table, now: bool, reads_now: set, reads_later: set, global_binds: set) -> None:
    """The names a nested scope (function, class, lambda, comprehension) reads from the cell's
    top level, and those it assigns there under `global`."""
    reads = reads_now if now else reads_later
    for n, flags in table.symbols.items():
        scope = (flags >> _SCOPE_OFF) & _SCOPE_MASK
        if scope == _GLOBAL_IMPLICIT or scope == _GLOBAL_EXPLICIT:
            if flags & _USE:
                reads.add(n)
            if scope == _GLOBAL_EXPLICIT and flags & _DEF_LOCAL:
                global_binds.add(n)
    for child in table.children:
        _scope(child, now and _runs_now(child), reads_now, reads_later, global_binds)


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
    left_out: Mapping[str, tuple[Cell, str]],
) -> tuple[list[Diagnostic], set[str], set[str]]:
    """Check every name the body reads.

    Returns diagnostics, the shims the body needs, and the names a star import must provide.

    ``left_out`` maps a name to a cell that defines it but is not part of the body, with the
    reason (e.g. "tagged skip").
    """
    diags: list[Diagnostic] = []
    shims: set[str] = set()
    star_names: set[str] = set()
    defined = set(parameters)
    everywhere = set(parameters)
    first_def: dict[str, Cell] = {}
    for bc in body:
        for n in bc.names.binds:
            first_def.setdefault(n, bc.cell)
        for n in bc.names.global_binds:
            first_def.setdefault(n, bc.cell)
        everywhere |= bc.names.binds
        everywhere |= bc.names.global_binds
    stars = [bc.cell for bc in body if bc.names.star_import]
    star = stars[0] if stars else None
    if len(stars) > 1:
        diags.append(
            Diagnostic(
                "error",
                f"star imports in cells {stars[0].index + 1} and {stars[1].index + 1}: a function "
                "can hold at most one; import the names you use explicitly",
                stars[1].index,
                stars[1].id,
                None,
                "star-import",
            )
        )
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
            star_names.add(n)
            msg = (
                f"{used} is taken from the star import in cell {star.index + 1}; the function "
                f"imports it by name"
            )
        else:
            msg = f"{used} is never defined"
            close = difflib.get_close_matches(n, everywhere | BUILTINS, n=1)
            if close:
                msg += f" (did you mean `{close[0]}`?)"
        diags.append(Diagnostic(severity, msg, bc.cell.index, bc.cell.id, line, code))

    for bc in body:  # set differences first: check() sees only the names not known
        for n in sorted(bc.names.reads_now - bc.names.binds - defined - BUILTINS):
            check(bc, n, defined)
        defined |= bc.names.binds
        defined |= bc.names.global_binds
    for bc in body:
        for n in sorted(bc.names.reads_later - everywhere - BUILTINS):
            check(bc, n, everywhere)
    return diags, shims, star_names


def _find_line(source: str, name: str) -> int | None:
    """The first line where ``name`` is read (only called to report an error)."""
    try:
        return first_line_of(ast.parse(source), name)
    except SyntaxError:
        return None


def first_line_of(tree: ast.AST, name: str) -> int | None:
    """The first line of ``tree`` that mentions the name ``name``."""
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names)
    ]
    return min(lines) if lines else None


def rewrite_for_function(
    source: str, wrapper_names: set[str], keep_global: set[str], star_names: set[str]
) -> str:
    """Adapt a cell's code to run inside the function.

    - `global x` inside the cell's functions refers to the function body's `x`: in a notebook
      it reaches the notebook's top level, which is now the function's scope (`nonlocal`).
      A top-level `global` statement is kept: every such name stays a module global.
    - `from m import *` is not allowed in a function: it becomes `from m import <the names the
      notebook uses from it>` (or `import m`).
    - `from __future__ import ...` moves to the module's top (the caller puts it there).
    """
    if not (
        _GLOBAL.search(source)
        or _STAR_IMPORT.search(source)
        or "__future__" in source
        or _KALE_EXT.search(source)
    ):
        return source
    tree = ast.parse(source)
    edits: dict[tuple[int, int], tuple[int, str]] = {}  # (line, col) -> (end col, new text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__", "kale_ext"):
            edits[(node.lineno, node.col_offset)] = (node.end_col_offset, "pass")
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            names = sorted(star_names)
            edits[(node.lineno, node.col_offset)] = (
                node.end_col_offset,
                f"from {node.module} import {', '.join(names)}"
                if names
                else f"import {node.module}",
            )
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Global) and inner.lineno == inner.end_lineno:
                local = [n for n in inner.names if n in wrapper_names - keep_global]
                rest = [n for n in inner.names if n not in local]
                if local:
                    stmt = f"nonlocal {', '.join(local)}" + (
                        f"; global {', '.join(rest)}" if rest else ""
                    )
                    edits[(inner.lineno, inner.col_offset)] = (inner.end_col_offset, stmt)
    if not edits:
        return source
    lines = source.splitlines(keepends=True)
    for (line, col), (end, text) in sorted(edits.items(), reverse=True):
        old = lines[line - 1]
        lines[line - 1] = old[:col] + text + old[end:]
    return "".join(lines)
