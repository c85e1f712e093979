"""Notebooks written for the Kubeflow SDK: `def train_fn(): ...` plus `TrainerClient().train(...)`.

The function that is the job is the one the notebook's train() call names (sdkcall.py), or the
one of the cell tagged `entrypoint` (an explicit override), or the one ``compile_notebook(...,
entrypoint=NAME)`` names: its body becomes the job's body (under the same self-containment
check), its literal default arguments its parameters (one without a default: the job gives it).
The other untagged cells are left out with a note.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from dataclasses import dataclass

from ..errors import Diagnostic
from .notebook import Cell, Role
from .transform import CellCode

SDK_NAMES = ("TrainerClient", "CustomTrainer")


@dataclass
class Entrypoint:
    name: str
    parameters: dict[str, object]  # a parameter without a default has None here
    imports: CellCode | None  # top-level imports of the entrypoint cell
    body: CellCode  # the function's body, dedented, without its docstring
    required: tuple[str, ...] = ()  # the parameters without a default: the job must give them
    arguments: ast.arguments | None = None  # the signature as written (kinds, annotations)
    docstring: str | None = None  # the function's own docstring


def defines(cell: Cell, name: str) -> bool:
    """Whether the cell defines function ``name`` at its top level."""
    if f"def {name}" not in cell.source:
        return False
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return True  # the entrypoint check reports the syntax error at the cell
    return any(isinstance(s, ast.FunctionDef) and s.name == name for s in tree.body)


def split_entrypoint(
    cell: Cell, code: CellCode, diags: list[Diagnostic], name: str | None = None
) -> Entrypoint | None:
    """The function an `entrypoint` cell defines (the one named ``name`` when given), or None
    after reporting why not."""

    def error(message: str, line: int | None) -> None:
        diags.append(
            Diagnostic("error", message, cell.index, cell.id, code.cell_line(line), "entrypoint")
        )

    try:
        tree = ast.parse(code.source)
    except SyntaxError as e:
        error(f"syntax error: {e.msg}", e.lineno)
        return None
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if name is not None:  # the named one first: another definition beside it is reported
        defs.sort(key=lambda d: d.name != name)
    others = [
        s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.Import, ast.ImportFrom))
    ]
    others = [
        s for s in others if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(defs) != 1 or others:
        line = (others or defs[1:] or [None])[0]
        error(
            "an `entrypoint` cell defines exactly one function (and may import); "
            "move other code to its own cell",
            getattr(line, "lineno", None),
        )
        return None
    fn = defs[0]
    if fn.decorator_list:
        error("the entrypoint function cannot be decorated: decorators are not shipped", fn.lineno)
        return None
    args = fn.args
    if args.vararg or args.kwarg:
        error("the entrypoint function cannot take *args or **kwargs", fn.lineno)
        return None
    if args.posonlyargs:
        error(
            "the entrypoint function's parameters cannot be positional-only (before `/`): the "
            "job passes them by name, as the Kubeflow SDK's func_args are",
            fn.lineno,
        )
        return None
    params: dict[str, object] = {}
    required: list[str] = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in [
        *zip(positional, defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]:
        if default is None:  # given by the job: func_args of the train() call or --param
            params[arg.arg] = None
            required.append(arg.arg)
            continue
        try:
            params[arg.arg] = ast.literal_eval(default)
        except ValueError:
            error(
                f"the default of `{arg.arg}` must be a literal, not `{ast.unparse(default)}`",
                fn.lineno,
            )
            return None
    lines = code.source.splitlines(keepends=True)
    docstring = ast.get_docstring(fn, clean=False)
    statements = fn.body[1:] if docstring is not None else fn.body  # the docstring stays its own
    body = CellCode("", [])
    if statements:
        first, last = statements[0].lineno, statements[-1].end_lineno or statements[-1].lineno
        body_source = textwrap.dedent("".join(lines[first - 1 : last]))
        body = CellCode(body_source, [code.cell_line(n) for n in range(first, last + 1)])
    imports = None
    import_nodes = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    if import_nodes:
        text = "".join(
            "".join(lines[s.lineno - 1 : (s.end_lineno or s.lineno)]) for s in import_nodes
        )
        imports = CellCode(
            text,
            [
                code.cell_line(n)
                for s in import_nodes
                for n in range(s.lineno, (s.end_lineno or s.lineno) + 1)
            ],
        )
    return Entrypoint(fn.name, params, imports, body, tuple(required), fn.args, docstring)


def named_entrypoint(plans: list, name: str, diags: list[Diagnostic]) -> list:
    """``plans`` with the cell that defines function ``name`` as the entrypoint (and no other)."""
    if not name.isidentifier():
        diags.append(Diagnostic("error", f"`{name}` is not a function name", code="entrypoint"))
        return plans
    found = None
    for cell, plan in plans:
        if plan.role in (Role.TRAINING, Role.ENTRYPOINT, Role.FUNCTIONS) and defines(cell, name):
            found = cell
    if found is None:
        diags.append(
            Diagnostic("error", f"no cell defines the function `{name}`", code="entrypoint")
        )
        return plans
    out = []
    for cell, plan in plans:
        role = Role.ENTRYPOINT if cell is found else plan.role
        if plan.role is Role.ENTRYPOINT and cell is not found:
            role = Role.TRAINING  # the named function wins over the tag
        out.append((cell, plan if role is plan.role else dataclasses.replace(plan, role=role)))
    return out


def drop_unread_parameters(params, param_cells, entry_cells, analysed, diags) -> None:
    """A `parameters` cell's names that the job's function never reads are settings of the
    train() call, not arguments: left out, so `--param num_nodes=4` is refused, not ignored."""
    reads = set().union(*(bc.names.reads_now | bc.names.reads_later for bc in analysed))
    for name in list(params):
        cell, line = param_cells[name]
        if name in reads or cell in entry_cells:  # read, or an argument of the function
            continue
        del params[name]
        diags.append(
            Diagnostic(
                "warning",
                f"`{name}` is not read by the job's function: it is not a job parameter",
                cell.index,
                cell.id,
                line,
                "unread-parameter",
            )
        )


def drives_trainer_client(source: str) -> bool:
    client, trainer = SDK_NAMES  # two `in` tests: any() over a generator costs 5x as much
    return client in source or trainer in source


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def untagged_trainer_client(body: list) -> list[Diagnostic]:
    """An error for the first job cell that calls TrainerClient or CustomTrainer when no cell is
    tagged `entrypoint`: compiled as it is, the job would submit jobs itself."""
    for role, cell, code in body:
        if role is not Role.TRAINING or not drives_trainer_client(code.source):
            continue
        try:
            tree = ast.parse(code.source)
            calls = [_called(n) for n in ast.walk(tree) if isinstance(n, ast.Call)]
        except SyntaxError:
            continue
        if any(name in SDK_NAMES for name in calls):
            message = (
                "this notebook drives TrainerClient: tag the cell that defines the training "
                "function `entrypoint` (the job is that function; kale_ext submits it)"
            )
            return [Diagnostic("error", message, cell.index, cell.id, None, "trainer-client")]
    return []
