"""A Kubeflow SDK notebook's own ``client.train(...)`` call is the job definition.

The job is the function passed as ``CustomTrainer(func=...)``; the call's other arguments become
the job's settings as the SDK maps them into the TrainJob: ``num_nodes``, ``resources_per_node``,
``env``, ``image``, ``packages_to_install``, ``pip_index_urls``, ``func_args`` and ``runtime=``
directly; ``initializer=`` and ``options=[RuntimePatch(...), Labels(...), ...]`` through the
SDK's own conversion functions (the SDK is imported only for those). Names are resolved as the
notebook would resolve them (resolve.py); what cannot be is one error naming the cell, line and
name, or, for a value from the environment, a setting the job must be given (``--env``).

When a notebook has several train() calls, the job is the last one unless ``train_call`` (1 =
the first) chooses another.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..errors import Diagnostic
from .fromenv import needed_by_the_job
from .notebook import Cell, Notebook
from .resolve import (
    Client,
    Function,
    RuntimeRef,
    Scope,
    SdkObject,
    Unresolvable,
)
from .transform import transform_cell

#: CustomTrainer's fields in the SDK's order (its positional arguments), and the setting each is.
CUSTOM_TRAINER = ("func", "func_args", "image", "packages_to_install", "pip_index_urls",
                  "num_nodes", "resources_per_node", "env")  # fmt: skip
SETTING_OF = {"num_nodes": "nodes", "resources_per_node": "resources", "env": "env",
              "image": "image", "packages_to_install": "packages",
              "pip_index_urls": "pip_index_urls", "func_args": "func_args"}  # fmt: skip
TRAIN_ARGS = ("runtime", "initializer", "trainer", "options")
#: The train() options kale_ext applies as the SDK does (others are refused, saying why).
OPTIONS = ("RuntimePatch", "Labels", "Annotations", "Name", "ActiveDeadlineSeconds")
REFUSED_OPTIONS = {
    "TrainerCommand": "replaces the command that runs your function; kale_ext runs it",
    "TrainerArgs": "replaces the arguments of the command that runs your function",
}
SDK_EXTRA = "pip install 'kale-ext[sdk]'"


@dataclass
class TrainCall:
    """One ``train(...)`` call of the notebook, resolved."""

    cell: Cell
    line: int
    function: str | None = None
    settings: dict = field(default_factory=dict)
    sources: dict[str, tuple[int, int]] = field(default_factory=dict)  # setting → (cell, line)
    needs: dict[str, str] = field(default_factory=dict)  # env.NAME → why the job must give it
    problems: list[Diagnostic] = field(default_factory=list)
    #: every train() call of the notebook, this one among them: {cell (0-based), line}
    sites: list[dict] = field(default_factory=list)

    def problem(self, message: str, line: int | None, code: str = "train-call") -> None:
        self.problems.append(
            Diagnostic("error", message, self.cell.index, self.cell.id, line, code)
        )

    def provenance(self) -> list[dict]:
        values = {**self.settings, "function": self.function}
        return [
            {"setting": k, "value": values[k], "cell": c, "line": line}
            for k, (c, line) in self.sources.items()
            if values.get(k) is not None
        ]


def find_train_calls(cells: list[tuple[Cell, str, Any]]) -> list[TrainCall]:
    """Every top-level ``<client>.train(...)`` call of ``cells`` ((cell, Python source, its
    line map)), resolved with the names bound by the cells before it."""
    scope = Scope()
    calls: list[TrainCall] = []
    for cell, source, line_of in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        scope.cell, scope.line_of = cell.index, line_of

        def visit(stmt: ast.stmt, cell: Cell = cell) -> None:
            call = _train_call_of(stmt, scope)
            if call is not None:
                calls.append(_resolve(call, cell, scope))

        scope.run(tree.body, visit)
    return calls


def may_have_train_call(source: str) -> bool:
    return ".train(" in source


def _train_call_of(stmt: ast.stmt, scope: Scope) -> ast.Call | None:
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) or not isinstance(
        value, ast.Call
    ):
        return None
    func = value.func
    if not (isinstance(func, ast.Attribute) and func.attr == "train"):
        return None
    if any(k.arg == "trainer" for k in value.keywords):
        return value
    try:
        return value if isinstance(scope.eval(func.value), Client) else None
    except Unresolvable:
        return None


def _resolve(node: ast.Call, cell: Cell, scope: Scope) -> TrainCall:
    line_of = scope.line_of
    call = TrainCall(cell, line_of(node.lineno) or node.lineno)
    given: dict[str, ast.expr] = dict(zip(TRAIN_ARGS, node.args, strict=False))
    given.update({k.arg: k.value for k in node.keywords if k.arg in TRAIN_ARGS})
    for k in node.keywords:
        if k.arg not in TRAIN_ARGS:
            call.problem(f"train() has no argument `{k.arg}`", line_of(k.value.lineno))
    values: dict[str, Any] = {}
    for name, expr in given.items():
        try:
            values[name] = scope.eval(expr)
        except Unresolvable as e:
            if name == "trainer" and isinstance(expr, ast.Call):
                values[name] = _trainer_parts(expr, scope, call)
                continue
            call.problem(f"train({name}=...): {e.message}", e.line)
    trainer = values.get("trainer")
    if trainer is None and "trainer" not in given:
        call.problem(
            "this train() call has no trainer=: kale_ext runs a function you write; pass it "
            "as trainer=CustomTrainer(func=...)",
            call.line,
        )
    elif trainer is not None:
        _read_trainer(trainer, call)
    runtime = values.get("runtime")
    if runtime is not None:
        _read_runtime(runtime, call, line_of(given["runtime"].lineno))
    if values.get("initializer") is not None or values.get("options"):
        _read_sdk_objects(values, call, {n: line_of(e.lineno) for n, e in given.items()})
    return call


def _trainer_parts(expr: ast.Call, scope: Scope, call: TrainCall) -> SdkObject | None:
    """``CustomTrainer(...)`` whose arguments do not all resolve: the ones that do, and one
    error (or a setting the job must be given) for each that does not."""
    kind = expr.func.attr if isinstance(expr.func, ast.Attribute) else getattr(expr.func, "id", "")
    obj = SdkObject(kind, [], {}, call.cell.index, call.line)
    pairs = list(zip(CUSTOM_TRAINER, expr.args, strict=False))
    pairs += [(k.arg, k.value) for k in expr.keywords if k.arg]
    for name, value in pairs:
        line = scope.line_of(value.lineno)
        if name == "env" and isinstance(value, ast.Dict):
            env = {}
            for k, v in zip(value.keys, value.values, strict=True):
                try:
                    key = scope.eval(k) if k is not None else None
                    env[key] = scope.eval(v)
                except Unresolvable as e:
                    if e.env is None or key is None:
                        call.problem(f"CustomTrainer(env=...): {e.message}", e.line)
                    else:
                        call.needs[f"env.{key}"] = needed_by_the_job(e.message, key)
            obj.kwargs[name], obj.arg_lines[name] = env, line
            continue
        try:
            obj.kwargs[name], obj.arg_lines[name] = scope.eval(value), line
        except Unresolvable as e:
            if e.env is not None and name == "env":
                call.needs[f"env.{e.env}"] = needed_by_the_job(e.message, e.env)
            else:
                call.problem(f"{kind}({name}=...): {e.message}", e.line)
    return obj


def _read_trainer(trainer: Any, call: TrainCall) -> None:
    if not isinstance(trainer, SdkObject):
        call.problem("train(trainer=...) must be CustomTrainer(func=...)", call.line)
        return
    if trainer.kind == "BuiltinTrainer":
        call.problem(
            "BuiltinTrainer (the runtime's own TorchTune post-training) is not something "
            "kale_ext runs: kale_ext runs a training function you write, passed as "
            "trainer=CustomTrainer(func=your_function)",
            trainer.line,
            "builtin-trainer",
        )
        return
    if trainer.kind != "CustomTrainer":
        call.problem(
            f"{trainer.kind} is not read by kale_ext: it runs a function passed as "
            "trainer=CustomTrainer(func=...)",
            trainer.line,
        )
        return
    kwargs = dict(zip(CUSTOM_TRAINER, trainer.args, strict=False)) | trainer.kwargs
    for name in kwargs:
        if name not in CUSTOM_TRAINER:
            call.problem(f"CustomTrainer has no argument `{name}`", trainer.line)
    func = kwargs.get("func")
    if isinstance(func, Function):
        call.function = func.name
        call.sources["function"] = (func.cell, func.line)
    elif "func" in kwargs or not call.problems:
        call.problem(
            "CustomTrainer(func=...) must name a function defined at the top level of a cell",
            trainer.arg_lines.get("func", trainer.line),
        )
    for name, setting in SETTING_OF.items():
        if kwargs.get(name) is not None:
            call.settings[setting] = kwargs[name]
            call.sources[setting] = (trainer.cell, trainer.arg_lines.get(name, trainer.line))


def _read_runtime(runtime: Any, call: TrainCall, line: int | None) -> None:
    name = runtime.name if isinstance(runtime, RuntimeRef) else runtime
    if not isinstance(name, str):
        call.problem(
            "train(runtime=...) must be a runtime's name or client.get_runtime(name)", line
        )
        return
    call.settings["runtime"] = name
    call.sources["runtime"] = (call.cell.index, line or call.line)


def _read_sdk_objects(values: dict, call: TrainCall, lines: dict) -> None:
    """initializer= and options=: built into the SDK's own objects, converted by its functions."""
    try:
        from kubeflow.trainer.backends.kubernetes import utils
        from kubeflow.trainer.backends.kubernetes.backend import KubernetesBackend
    except ImportError:
        call.problem(
            f"this train() call's initializer= or options= needs the Kubeflow SDK: {SDK_EXTRA}",
            call.line,
            "sdk-missing",
        )
        return
    from kubeflow_trainer_api import models

    init = values.get("initializer")
    if init is not None:
        try:
            real = _built(init)
            spec = models.TrainerV1alpha1Initializer(
                dataset=utils.get_dataset_initializer(real.dataset) if real.dataset else None,
                model=utils.get_model_initializer(real.model) if real.model else None,
            )
        except (TypeError, ValueError, AttributeError) as e:
            call.problem(f"train(initializer=...): {e}", lines.get("initializer"))
        else:
            if real.dataset or real.model:
                call.settings["initializer"] = spec.to_dict()
                call.sources["initializer"] = (call.cell.index, lines.get("initializer"))
    options = values.get("options") or []
    if not isinstance(options, list):
        call.problem("train(options=...) must be a list of options", lines.get("options"))
        return
    job_spec: dict = {}
    backend = KubernetesBackend.__new__(KubernetesBackend)  # the options check the type only
    for option in options:
        kind = getattr(option, "kind", type(option).__name__)
        line = getattr(option, "line", lines.get("options"))
        if kind in REFUSED_OPTIONS:
            call.problem(f"{kind} {REFUSED_OPTIONS[kind]}", line)
            continue
        if kind not in OPTIONS:
            call.problem(f"train() option {kind} is not one kale_ext reads", line)
            continue
        try:
            _built(option)(job_spec, None, backend)
        except (TypeError, ValueError, AttributeError) as e:
            call.problem(f"{kind}: {e}", line)
    meta, spec_part = job_spec.get("metadata", {}), job_spec.get("spec", {})
    for setting, value in (
        ("runtime_patches", spec_part.get("runtimePatches")),
        ("labels", meta.get("labels")),
        ("annotations", meta.get("annotations")),
        ("name", meta.get("name")),
        ("active_deadline_seconds", spec_part.get("activeDeadlineSeconds")),
    ):
        if value:
            call.settings[setting] = value
            call.sources[setting] = (call.cell.index, lines.get("options"))


def _built(value: Any) -> Any:
    """``value`` with every SdkObject made into the SDK's own object."""
    if isinstance(value, list):
        return [_built(v) for v in value]
    if isinstance(value, dict):
        return {k: _built(v) for k, v in value.items()}
    if not isinstance(value, SdkObject):
        return value
    import kubeflow.trainer as trainer
    import kubeflow.trainer.options as options

    cls = getattr(trainer, value.kind, None) or getattr(options, value.kind, None)
    if cls is None:
        raise ValueError(f"{value.kind} is not a class of the Kubeflow SDK")
    return cls(*_built(value.args), **_built(value.kwargs))


def notebook_train_call(
    nb: Notebook, which: int | None, diags: list[Diagnostic]
) -> TrainCall | None:
    """The notebook's train() call that is the job (None: it has none)."""
    if which is None and not any(may_have_train_call(c.source) for c in nb.cells):
        return None
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.strip():
            code = transform_cell(cell, [])
            if code is not None:
                cells.append((cell, code.source, code.cell_line))
    chosen, notes = choose(find_train_calls(cells), which)
    diags += notes
    return chosen


#: A train() call's setting → the job setting it is (resources: requests and limits).
_CALL_SETTINGS = {"nodes": "nodes", "env": "env", "image": "image", "packages": "packages",
                  "pip_index_urls": "pip_index_urls", "func_args": "func_args",
                  "runtime": "runtime", "initializer": "initializer",
                  "runtime_patches": "runtime_patches", "name": "name",
                  "active_deadline_seconds": "active_deadline_seconds"}  # fmt: skip


def job_settings(settings: dict, call: TrainCall, diags: list[Diagnostic]) -> None:
    """The train() call's settings as job settings (under the tags' labels and annotations)."""
    for key, value in call.settings.items():
        if key == "resources":
            settings["requests"] = settings["limits"] = value
        elif key in ("labels", "annotations"):
            settings.setdefault(key, {}).update(value)
        elif key in _CALL_SETTINGS:
            settings[_CALL_SETTINGS[key]] = value
    if call.needs:
        settings["needs"] = dict(call.needs)
        for why in call.needs.values():
            diags.append(
                Diagnostic("warning", why, call.cell.index, call.cell.id, call.line, "needs")
            )


def choose(calls: list[TrainCall], which: int | None) -> tuple[TrainCall | None, list[Diagnostic]]:
    """The call that is the job (the last, or the ``which``-th, 1-based) and what to say."""
    if not calls:
        if which is not None:
            return None, [Diagnostic("error", "train_call: the notebook has no train() call")]
        return None, []
    if which is not None and not 1 <= which <= len(calls):
        where = ", ".join(f"{i} (cell {c.cell.index + 1})" for i, c in enumerate(calls, 1))
        message = f"train_call {which}: the notebook's train() calls are {where}"
        return None, [Diagnostic("error", message, code="train-call")]
    chosen = calls[(which or len(calls)) - 1]
    chosen.sites = [{"cell": c.cell.index, "line": c.line} for c in calls]
    notes = []
    if len(calls) > 1:
        where = ", ".join(f"{i} (cell {c.cell.index + 1})" for i, c in enumerate(calls, 1))
        how = "chosen" if which else "the last; choose another with --train-call N"
        notes.append(
            Diagnostic(
                "warning",
                f"the notebook has {len(calls)} train() calls ({where}): the job is call "
                f"{calls.index(chosen) + 1} ({how})",
                chosen.cell.index,
                chosen.cell.id,
                chosen.line,
                "train-calls",
            )
        )
    return chosen, notes
