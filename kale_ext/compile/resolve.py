"""Static name resolution: the values a notebook's cells bind, as running them in order would,
without running anything.

Literals, dicts and lists built from them, ``str()/int()/float()`` of them, f-strings, a dict
updated under an ``if`` on literals, ``TrainerClient()``, ``client.get_runtime("x")`` and the
``for r in client.list_runtimes(): if r.name == "x": rt = r`` loop resolve. Anything else (a
call into a library, ``os.environ``) binds the name to an :class:`Unresolved` that says where it
came from and what to do; using it raises that :class:`Unresolvable`, never a guess.
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .fromenv import from_environ

#: Builtins a setting may be computed with (pure, on data).
BUILTINS: dict[str, Callable] = {
    "str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list,
    "tuple": tuple, "len": len, "min": min, "max": max, "sorted": sorted, "abs": abs,
    "round": round, "range": range,
}  # fmt: skip
#: Methods of data values a setting may be computed with (no mutation).
METHODS = {
    str: {"upper", "lower", "strip", "replace", "format", "join", "split", "startswith"},
    dict: {"get", "copy", "keys", "values", "items"},
    list: {"copy", "index", "count"},
}
_MUTATORS = {dict: {"update", "setdefault", "pop"}, list: {"append", "extend", "insert", "pop"}}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.BitOr: operator.or_}  # fmt: skip
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_,
            ast.IsNot: operator.is_not}  # fmt: skip
_LARGEST = 1 << 20  # a computed string or list longer than this is not a setting
_LOOP_LIMIT = 1000
_BITS = 4096  # an int longer than this is not a setting
_STEPS = 20_000  # statements followed in all (loops in loops): past them, names are unknown


class Unresolvable(Exception):
    """A value that cannot be known without running the notebook: what, where, what to do."""

    def __init__(
        self, message: str, cell: int | None = None, line: int | None = None, env: str | None = None
    ):
        super().__init__(message)
        self.message, self.cell, self.line, self.env = message, cell, line, env


@dataclass(frozen=True)
class Unresolved:
    """What a name is bound to when its value cannot be known statically."""

    message: str
    env: str | None = None  # the environment variable it comes from


@dataclass(frozen=True)
class Module:  # a module or a name imported from one (`os.environ`)
    name: str


@dataclass(frozen=True)
class SdkName:  # a class of the Kubeflow SDK (`CustomTrainer`, `RuntimePatch`, ...)
    name: str


@dataclass(frozen=True)
class Function:  # a function defined at a cell's top level
    name: str
    cell: int
    line: int


@dataclass(frozen=True)
class Client:  # a TrainerClient
    pass


@dataclass(frozen=True)
class RuntimeRef:  # a runtime found by name (`get_runtime("x")`, the `list_runtimes()` loop)
    name: str


@dataclass(frozen=True)
class RuntimeList:  # client.list_runtimes()
    pass


@dataclass
class SdkObject:
    """A call of an SDK class, its arguments resolved (built into the real object later)."""

    kind: str
    args: list
    kwargs: dict
    cell: int
    line: int
    arg_lines: dict = field(default_factory=dict)  # keyword → its line in the cell


class Scope:
    """The names a notebook's cells bind, run statement by statement, statically."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sdk_star = False  # `from kubeflow... import *` ran: any other name is the SDK's
        self.cell = 0
        self.line_of: Callable[[int | None], int | None] = lambda n: n
        self.steps = _STEPS

    def where(self, node: ast.AST) -> str:
        return f"cell {self.cell + 1}, line {self.line_of(getattr(node, 'lineno', None))}"

    # -- statements -------------------------------------------------------------------------
    def run(self, statements: list[ast.stmt], visit: Callable[[ast.stmt], None] | None = None):
        """Bind what ``statements`` bind; ``visit`` sees each statement that runs once first
        (the top level's, and those of an ``if`` branch taken, a ``try`` or ``with``)."""
        for stmt in statements:
            if visit is not None:
                visit(stmt)
            self._statement(stmt, visit)

    def _statement(self, s: ast.stmt, visit: Callable[[ast.stmt], None] | None = None) -> None:
        self.steps -= 1
        if self.steps < 0:
            self._unknown(s, "the notebook computes too much before it for kale_ext to follow")
            return
        if isinstance(s, ast.Import):
            for a in s.names:
                if a.asname:
                    self.values[a.asname] = Module(a.name)
                else:
                    top = a.name.split(".")[0]
                    self.values[top] = Module(top)
        elif isinstance(s, ast.ImportFrom):
            sdk = (s.module or "").startswith("kubeflow")
            self.sdk_star |= sdk and any(a.name == "*" for a in s.names)
            for a in (a for a in s.names if a.name != "*"):
                full = f"{s.module}.{a.name}"
                self.values[a.asname or a.name] = SdkName(a.name) if sdk else Module(full)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.values[s.name] = Function(s.name, self.cell, self.line_of(s.lineno) or s.lineno)
        elif isinstance(s, ast.Assign):
            self._assign(s.targets, s.value, s)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self._assign([s.target], s.value, s)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            read = ast.copy_location(ast.Name(id=s.target.id, ctx=ast.Load()), s)
            self._assign([s.target], ast.copy_location(ast.BinOp(read, s.op, s.value), s), s)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            self._mutation(s.value)
        elif isinstance(s, ast.If):
            try:
                taken = self.eval(s.test)
            except Unresolvable as e:
                self._unknown(s, f"it is set under `if {ast.unparse(s.test)}` ({e.message})")
                return
            self.run(s.body if taken else s.orelse, visit)
        elif isinstance(s, ast.For):
            self._for(s)
        elif isinstance(s, (ast.Try, ast.With)):
            self.run(s.body, visit)
            if isinstance(s, ast.With):
                for item in s.items:
                    if item.optional_vars is not None:
                        self._unknown_targets(item.optional_vars, s)
        else:
            self._unknown(s, "the cell computes it when it runs")

    def _assign(self, targets: list[ast.expr], value: ast.expr, s: ast.stmt) -> None:
        try:
            result = self.eval(value)
        except Unresolvable as e:
            result = Unresolved(e.message, e.env)
        for target in targets:
            self._bind(target, result, s)

    def _bind(self, target: ast.expr, value: Any, s: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            located = "` (cell " in value.message if isinstance(value, Unresolved) else True
            if isinstance(value, Unresolved) and value.env is None and not located:
                value = Unresolved(f"`{target.id}` ({self.where(s)}): {value.message}", None)
            self.values[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (tuple, list)) and len(value) == len(target.elts):
                for t, v in zip(target.elts, value, strict=True):
                    self._bind(t, v, s)
            else:
                self._unknown_targets(target, s)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            container = self.values.get(target.value.id)
            try:
                key = self.eval(target.slice)
                if isinstance(value, Unresolved):
                    raise Unresolvable(value.message)
                container[key] = value
            except (Unresolvable, TypeError, IndexError, KeyError):
                self._unknown_targets(target.value, s)

    def _mutation(self, call: ast.Call) -> None:
        """`d.update(...)`, `xs.append(...)` on a resolved dict or list."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        target = self.values.get(func.value.id)
        if func.attr not in _MUTATORS.get(type(target), ()):
            return
        try:
            args = [self.eval(a) for a in call.args]
            kwargs = {k.arg: self.eval(k.value) for k in call.keywords if k.arg}
            getattr(target, func.attr)(*args, **kwargs)
        except (Unresolvable, TypeError, ValueError, IndexError, KeyError) as e:
            why = e.message if isinstance(e, Unresolvable) else "it fails"
            self._unknown_targets(func.value, call, f"`{ast.unparse(call)}`: {why}")

    def _for(self, s: ast.For) -> None:
        try:
            items = self.eval(s.iter)
        except Unresolvable as e:
            self._unknown(s, f"it is set in a loop over `{ast.unparse(s.iter)}` ({e.message})")
            return
        if isinstance(items, RuntimeList) and isinstance(s.target, ast.Name):
            self._runtime_loop(s, s.target.id)
            return
        if not isinstance(items, (list, tuple, dict, str, range)) or len(items) > _LOOP_LIMIT:
            self._unknown(s, f"it is set in a loop over `{ast.unparse(s.iter)}`")
            return
        for item in items:
            self._bind(s.target, item, s)
            self.run(s.body)

    def _runtime_loop(self, s: ast.For, var: str) -> None:
        """`for r in client.list_runtimes(): if r.name == "x": rt = r` binds rt to runtime x."""
        for stmt in s.body:
            if not isinstance(stmt, ast.If):
                continue
            name = _runtime_name_test(stmt.test, var)
            for inner in stmt.body if name else []:
                if isinstance(inner, ast.Assign) and _is_name(inner.value, var):
                    for t in inner.targets:
                        self._bind(t, RuntimeRef(name), inner)
        self.values.pop(var, None)

    def _unknown(self, s: ast.stmt, why: str) -> None:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.values[node.id] = Unresolved(f"`{node.id}` ({self.where(s)}): {why}")

    def _unknown_targets(self, target: ast.expr, s: ast.AST, why: str | None = None) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                what = why or "the cell computes it when it runs"
                self.values[node.id] = Unresolved(f"`{node.id}` ({self.where(s)}): {what}")

    # -- expressions ------------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Any:
        """The value of ``node``; Unresolvable (naming the name and where) when unknown."""
        try:
            value = self._eval(node)
        except Unresolvable as e:
            if e.cell is None:
                e.cell, e.line = self.cell, self.line_of(getattr(node, "lineno", None))
            raise
        except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError):
            raise Unresolvable(
                f"`{ast.unparse(node)}` fails when evaluated",
                self.cell,
                self.line_of(node.lineno),
            ) from None
        too_long = isinstance(value, (str, list, tuple, dict)) and len(value) > _LARGEST
        if too_long or (isinstance(value, int) and value.bit_length() > _BITS):
            raise Unresolvable(f"`{ast.unparse(node)}` is too large to be a setting")
        return value

    def _eval(self, n: ast.expr) -> Any:
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return self._name(n)
        if isinstance(n, (ast.List, ast.Tuple, ast.Set)):
            out: list = []
            for e in n.elts:
                if isinstance(e, ast.Starred):
                    out.extend(self.eval(e.value))
                else:
                    out.append(self.eval(e))
            return (
                tuple(out)
                if isinstance(n, ast.Tuple)
                else set(out)
                if isinstance(n, ast.Set)
                else out
            )
        if isinstance(n, ast.Dict):
            d: dict = {}
            for k, v in zip(n.keys, n.values, strict=True):
                if k is None:
                    d.update(self.eval(v))
                else:
                    d[self.eval(k)] = self.eval(v)
            return d
        if isinstance(n, ast.JoinedStr):
            return "".join(self.eval(v) for v in n.values)
        if isinstance(n, ast.FormattedValue):
            value = self.eval(n.value)
            value = {-1: value, 115: str(value), 114: repr(value), 97: ascii(value)}[n.conversion]
            spec = self.eval(n.format_spec) if n.format_spec is not None else ""
            return format(value, spec)
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            left, right = self.eval(n.left), self.eval(n.right)
            big = isinstance(left, int) and left.bit_length() > 64
            if isinstance(n.op, ast.Pow) and (big or isinstance(right, int) and abs(right) > 256):
                raise Unresolvable(f"`{ast.unparse(n)}` is too large to be a setting")
            if isinstance(n.op, ast.Mult) and isinstance(left, (str, list)) and right > _LARGEST:
                raise Unresolvable(f"`{ast.unparse(n)}` is too large to be a setting")
            return _BINOPS[type(n.op)](left, right)
        if isinstance(n, ast.UnaryOp):
            value = self.eval(n.operand)
            ops = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
            if type(n.op) in ops:
                return ops[type(n.op)](value)
        if isinstance(n, ast.BoolOp):
            values = [self.eval(v) for v in n.values]
            return all(values) if isinstance(n.op, ast.And) else any(values)
        if isinstance(n, ast.Compare):
            left = self.eval(n.left)
            for op, right_node in zip(n.ops, n.comparators, strict=True):
                right = self.eval(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            return self.eval(n.body) if self.eval(n.test) else self.eval(n.orelse)
        if isinstance(n, ast.Subscript):
            return self._subscript(n)
        if isinstance(n, ast.Slice):
            parts = (n.lower, n.upper, n.step)
            return slice(*(None if p is None else self.eval(p) for p in parts))
        if isinstance(n, ast.Attribute):
            return self._attribute(n)
        if isinstance(n, ast.Call):
            return self._call(n)
        raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")

    def _name(self, n: ast.Name) -> Any:
        if n.id in self.values:
            value = self.values[n.id]
            if isinstance(value, Unresolved):
                raise Unresolvable(value.message, env=value.env)
            return value
        if n.id in BUILTINS:
            return BUILTINS[n.id]
        if hasattr(builtins, n.id):  # open(), range(), ...: their results are not settings
            return Module(f"builtins.{n.id}")
        if self.sdk_star:  # TrainerClient, CustomTrainer, ... from `from kubeflow.trainer import *`
            return SdkName(n.id)
        raise Unresolvable(
            f"{n.id} is never defined: define it in a cell before this one (a literal, or "
            "built from literals)"
        )

    def _subscript(self, n: ast.Subscript) -> Any:
        value = self.eval(n.value)
        key = self.eval(n.slice)
        if value == Module("os.environ"):
            raise Unresolvable(**from_environ(str(key), self.where(n)))
        if not isinstance(value, (dict, list, tuple, str)):
            raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")
        return value[key]

    def _attribute(self, n: ast.Attribute) -> Any:
        value = self.eval(n.value)
        if isinstance(value, Module):
            if value.name.startswith("kubeflow"):
                return SdkName(n.attr)
            return Module(f"{value.name}.{n.attr}")
        if isinstance(value, RuntimeRef) and n.attr == "name":
            return value.name
        if isinstance(value, (Client, RuntimeList)) or type(value) in METHODS:
            return (value, n.attr)  # a bound method, called by _call
        raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")

    def _call(self, n: ast.Call) -> Any:
        func = self.eval(n.func) if not isinstance(n.func, ast.Attribute) else None
        if isinstance(n.func, ast.Attribute):
            func = self._attribute(n.func)
        if isinstance(func, SdkName):
            return self._sdk_call(func.name, n)
        environ = isinstance(func, Module) and func.name in ("os.getenv", "os.environ.get")
        if not (environ or isinstance(func, tuple) or func in BUILTINS.values()):
            raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")
        args = [self.eval(a) for a in n.args]
        kwargs = {k.arg: self.eval(k.value) for k in n.keywords if k.arg}
        if len(kwargs) != len(n.keywords):
            raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")
        if environ:
            raise Unresolvable(**from_environ(str(args[0]) if args else "?", self.where(n)))
        if isinstance(func, tuple):
            target, method = func
            if isinstance(target, Client) and method == "get_runtime" and args:
                return RuntimeRef(str(args[0]))
            if isinstance(target, Client) and method == "list_runtimes":
                return RuntimeList()
            if method in METHODS.get(type(target), ()):
                return getattr(target, method)(*args, **kwargs)
        elif func in BUILTINS.values():
            return func(*args, **kwargs)
        raise Unresolvable(f"`{ast.unparse(n)}` is computed when the notebook runs")

    def _sdk_call(self, kind: str, n: ast.Call) -> Any:
        if kind == "TrainerClient":
            return Client()
        args = [self.eval(a) for a in n.args]
        kwargs, lines = {}, {}
        for k in n.keywords:
            if k.arg is None:
                kwargs.update(self.eval(k.value))
                continue
            kwargs[k.arg] = self.eval(k.value)
            lines[k.arg] = self.line_of(k.value.lineno)
        return SdkObject(kind, args, kwargs, self.cell, self.line_of(n.lineno) or n.lineno, lines)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _runtime_name_test(test: ast.expr, var: str) -> str | None:
    """ "x" for `var.name == "x"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    sides = [test.left, test.comparators[0]]
    attr = [s for s in sides if isinstance(s, ast.Attribute) and _is_name(s.value, var)]
    const = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
    if attr and const and attr[0].attr == "name":
        return const[0].value
    return None
