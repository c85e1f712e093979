"""Read the `distributed` cell's DistributedConfig without executing arbitrary code.

The compile stage keeps the cell (CompiledJob.distributed_cell and .distributed_source);
:func:`config_of` reads it here, where DistributedConfig lives, with errors naming the cell and
line as compile errors do.

Only literals, names the cell itself bound, and calls to DistributedConfig and the Kubernetes
models imported from ``kale_ext.distributed``, ``kale.distributed`` (Kale notebooks) or
``kubernetes.client`` are evaluated. Anything else is a compile error naming the cell and line.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from ..compile.notebook import Cell
from ..errors import CompileError, ConfigError, Diagnostic

ALLOWED_MODULES = ("kale_ext.distributed", "kale.distributed", "kubernetes.client")
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class _Rejected(Exception):
    def __init__(self, message: str, node: ast.AST):
        self.message, self.line = message, getattr(node, "lineno", None)


class _Module:
    """A module alias the cell imported (`from kubernetes import client`)."""

    def __init__(self, path: str):
        self.path = path


def _constructor(module: str, name: str, node: ast.AST):
    from . import distributed

    if name in ("DistributedConfig", "V1RunPolicy", "V1SchedulingPolicy"):
        return getattr(distributed, name)
    if name.startswith("V1"):
        import kubernetes.client

        cls = getattr(kubernetes.client, name, None)
        if cls is not None:
            return cls
    raise _Rejected(f"`{module}` has no `{name}` that a distributed cell may use", node)


def _resolve(path: str, node: ast.AST):
    """A module alias or a constructor for a dotted import path."""
    if path in ALLOWED_MODULES or any(m.startswith(path + ".") for m in ALLOWED_MODULES):
        return _Module(path)
    module, _, name = path.rpartition(".")
    if module in ALLOWED_MODULES:
        return _constructor(module, name, node)
    raise _Rejected(
        f"a distributed cell may import only from {', '.join(ALLOWED_MODULES)}, not `{path}`",
        node,
    )


class _Evaluator:
    def __init__(self) -> None:
        self.names: dict[str, Any] = {}

    def run(self, tree: ast.Module):
        from .distributed import DistributedConfig

        found = None
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    target = _resolve(a.name, stmt)
                    if a.asname:
                        self.names[a.asname] = target
                    else:
                        self.names[a.name.split(".")[0]] = _Module(a.name.split(".")[0])
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for a in stmt.names:
                    if a.name == "*":
                        raise _Rejected("import the names you use, not `*`", stmt)
                    self.names[a.asname or a.name] = _resolve(f"{stmt.module}.{a.name}", stmt)
            elif isinstance(stmt, ast.Assign) and all(
                isinstance(t, ast.Name) for t in stmt.targets
            ):
                value = self.eval(stmt.value)
                for t in stmt.targets:
                    self.names[t.id] = value
                if isinstance(value, DistributedConfig):
                    found = value
            elif isinstance(stmt, ast.Expr):
                value = self.eval(stmt.value)
                if isinstance(value, DistributedConfig):
                    found = value
            else:
                raise _Rejected(
                    "a distributed cell holds only imports and assignments like "
                    "`config = DistributedConfig(...)`",
                    stmt,
                )
        return found

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise _Rejected("`**` is not allowed in a distributed cell", node)
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            value = self.eval(node.operand)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return _UNARY[type(node.op)](value)
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            raise _Rejected(f"name `{node.id}` is not defined in the distributed cell", node)
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value)
            if isinstance(base, _Module):
                return _resolve(f"{base.path}.{node.attr}", node)
        if isinstance(node, ast.Call):
            func = self.eval(node.func)
            if isinstance(func, (_Module,)) or not isinstance(func, type):
                raise _Rejected(
                    "only DistributedConfig and Kubernetes model calls are allowed", node
                )
            if any(k.arg is None for k in node.keywords):
                raise _Rejected("`**kwargs` is not allowed in a distributed cell", node)
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
            try:
                return func(*args, **kwargs)
            except ConfigError:
                raise
            except (TypeError, ValueError) as e:
                raise _Rejected(f"{func.__name__}(...): {e}".replace("`", "'"), node) from None
        segment = ast.unparse(node)
        raise _Rejected(
            f"`{segment}` cannot be evaluated safely: a distributed cell holds only literals and "
            "DistributedConfig / Kubernetes model calls",
            node,
        )


def read_config_cell(cell: Cell, source: str, diagnostics: list[Diagnostic]):
    """The DistributedConfig a `distributed` cell defines, or None (errors are appended)."""

    def error(message: str, line: int | None, code: str) -> None:
        diagnostics.append(Diagnostic("error", message, cell.index, cell.id, line, code))

    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        error(f"syntax error: {e.msg}", e.lineno, "syntax-error")
        return None
    evaluator = _Evaluator()
    try:
        config = evaluator.run(tree)
    except _Rejected as r:
        error(r.message, r.line, "distributed-cell")
        return None
    except ConfigError as e:
        line = _line_of_call(tree)
        error(f"DistributedConfig {e}", line, "distributed-config")
        return None
    if config is None:
        error("the distributed cell defines no DistributedConfig", None, "distributed-cell")
    return config


def _line_of_call(tree: ast.Module) -> int | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(
            node.func, "id", getattr(node.func, "attr", "")
        ) == ("DistributedConfig"):
            return node.lineno
    return None


def config_of(job):
    """The DistributedConfig of a compiled notebook's `distributed` cell, or None. Raises
    CompileError (cell and line) when the cell does not read as one."""
    if job.distributed_cell is None or job.distributed_source is None:
        return None
    diagnostics: list[Diagnostic] = []
    config = read_config_cell(job.distributed_cell, job.distributed_source, diagnostics)
    if config is None:
        raise CompileError(diagnostics)
    return config
