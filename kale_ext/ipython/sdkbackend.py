"""The notebook's own ``TrainerClient`` with kale_ext behind it, for this kernel.

    %load_ext kale_ext
    %kale_sdk                       # or: kale_ext.sdk.use_kale_ext(client)

From then on (``%kale_sdk --off`` undoes it; sdkmagic.py) every ``TrainerClient`` of this
kernel, made before or after, has a ``KaleExtSdkBackend``: an implementation of the SDK's own
backend interface (``kubeflow.trainer.backends.base.RuntimeBackend``) over a kale_ext backend
(local processes, or Kubernetes). So the notebook runs cell by cell, unedited:

- ``client.train(trainer=CustomTrainer(func=f, ...), runtime=...)`` compiles the kernel's
  notebook file with ``f`` as the job (its train() call read as the CLI and the panel read it)
  and submits it; every setting of the live call (num_nodes, resources_per_node, env,
  packages_to_install, pip_index_urls, func_args, image, runtime, Name) reaches the job, or the
  call is refused saying why. The notebook must be saved: ``f`` as the kernel runs it must be
  the ``f`` of the file;
- ``get_job``, ``list_jobs``, ``get_job_logs``, ``get_job_events``, ``wait_for_job_status`` and
  ``delete_job`` see kale_ext's jobs, as the SDK's own types (``TrainJob``, ``Step``, ...), with
  the SDK's step names (``node-0``, ``node-1``, ...) and statuses.

A refusal is a ``KaleExtSdkError``: IPython shows its one-line message, not a traceback.
"""

from __future__ import annotations

import ast
import inspect
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from ..errors import KaleExtError
from ..job.procs import counted

#: resources_per_node keys → kale_ext's per-node option (the SDK's "gpu" is nvidia.com/gpu).
RESOURCES = {"cpu": "cpu", "memory": "memory", "gpu": "gpu", "nvidia.com/gpu": "gpu"}
#: kale_ext's statuses as the SDK's (a queued job has not started: Created).
STATUS = {"Created": "Created", "Queued": "Created", "Running": "Running",
          "Complete": "Complete", "Failed": "Failed"}  # fmt: skip
NODE = "node"
#: train(options=[...]) kinds kale_ext reads from the notebook's call, and the setting each is.
READ_OPTIONS = {"RuntimePatch": "runtime_patches", "Labels": "labels", "Annotations": "annotations",
                "ActiveDeadlineSeconds": "active_deadline_seconds"}  # fmt: skip


class KaleExtSdkError(KaleExtError, RuntimeError):
    """A train() (or job) call kale_ext refuses, or a failed job waited for (a RuntimeError,
    as the SDK raises): shown by IPython as its message alone."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def _sdk_types():
    from kubeflow.trainer.constants import constants
    from kubeflow.trainer.types import types

    return types, constants


class KaleExtSdkBackend:
    """The SDK's RuntimeBackend over a kale_ext backend, for a kernel whose notebook is
    ``notebook`` (None: the kernel's own, found when train() is called)."""

    def __init__(self, backend, shell=None, notebook: str | Path | None = None):
        self.kale_backend = backend
        self.shell = shell
        self.notebook = notebook

    # -- runtimes --

    def _runtime(self, runtime):
        types, constants = _sdk_types()
        return types.Runtime(
            name=runtime.name,
            trainer=types.RuntimeTrainer(
                trainer_type=types.TrainerType.CUSTOM_TRAINER,
                framework=runtime.framework or "torch",
                image=runtime.image,
                num_nodes=runtime.num_nodes,
            ),
            kind=types.RuntimeKind.CLUSTER_TRAINING_RUNTIME
            if runtime.kind == "ClusterTrainingRuntime"
            else types.RuntimeKind.TRAINING_RUNTIME,
        )

    def list_runtimes(self) -> list:
        return [self._runtime(r) for r in self.kale_backend.list_runtimes()]

    def get_runtime(self, name: str):
        return self._runtime(self._call(self.kale_backend.get_runtime, name))

    def get_runtime_packages(self, runtime) -> None:
        """Print the runtime's Python packages, as the SDK does."""
        packages = self._call(self.kale_backend.runtime_packages, runtime.name) or {}
        for name, version in sorted(packages.items()):
            print(f"{name}=={version}")

    # -- train --

    def train(self, runtime=None, initializer=None, trainer=None, options=None) -> str:
        from ..backends.submit import submit
        from ..job.defaults import load
        from ..job.workspace import Place, choose

        path = self._notebook()
        func, wanted = live_settings(trainer, runtime, options)
        job = compile_live(path, func, self._running_cell())
        read = job.settings or {}  # what the compile read from the same call in the file
        given = [type(o).__name__ for o in options or []]
        unread = [f"initializer={type(initializer).__name__}"] if initializer is not None else []
        unread = [w for w in unread if not read.get("initializer")] + [
            kind
            for kind, setting in READ_OPTIONS.items()
            if kind in given and not read.get(setting)
        ]
        if unread:
            raise KaleExtSdkError(
                f"train({', '.join(unread)}) is not in the train() call of {path.name} this "
                "cell runs: save the notebook, then call train() again"
            )
        place = Place.of(path, base=Path.cwd())
        workspace = self._call(choose, wanted, job.notebook_metadata, place)
        submitted = self._call(
            submit, self.kale_backend, job, wanted, load(), str(path), place, workspace
        )

        for warning in submitted.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        spec = submitted.spec
        print(
            f"kale_ext: {submitted.name} submitted to the {submitted.backend} backend "
            f"({counted(spec.nodes, 'node')}, runtime {spec.runtime.name})",
            file=sys.stderr,
        )
        return submitted.name

    def _notebook(self) -> Path:
        from .kernelcontext import find_notebook

        return self._call(find_notebook, self.shell, self.notebook)

    def _running_cell(self) -> str | None:
        """The source of the cell the kernel runs now (where the train() call is)."""
        manager = getattr(self.shell, "history_manager", None)
        history = getattr(manager, "input_hist_raw", None)  # as typed: magics untransformed
        return history[-1] if history else None

    # -- jobs --

    def _trainjob(self, info):
        types, _ = _sdk_types()
        created = info.created or ""
        when = datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None
        steps = [
            types.Step(name=f"{NODE}-{n.index}", status=n.state,
                       pod_name=f"{info.name}-{NODE}-0-{n.index}")
            for n in info.nodes
        ]  # fmt: skip
        runtime = self._runtime_named(info.runtime)
        return types.TrainJob(
            name=info.name,
            runtime=runtime,
            steps=steps,
            num_nodes=info.num_nodes,
            creation_timestamp=when or datetime.now(timezone.utc),
            status=STATUS.get(info.status.value, info.status.value),
        )

    def _runtime_named(self, name: str):
        try:
            return self._runtime(self.kale_backend.get_runtime(name))
        except KaleExtError:  # a runtime since removed: its name is all there is
            from ..job.runtimes import Runtime

            return self._runtime(Runtime(name=name, framework=""))

    def list_jobs(self, runtime=None) -> list:
        jobs = [self._trainjob(i) for i in self._call(self.kale_backend.list_jobs)]
        return [j for j in jobs if runtime is None or j.runtime.name == runtime.name]

    def get_job(self, name: str):
        return self._trainjob(self._call(self.kale_backend.get_job, name))

    def get_job_logs(self, name: str, follow: bool = False, step: str = "node-0") -> Iterator[str]:
        info = self._call(self.kale_backend.get_job, name)
        steps = [f"{NODE}-{k}" for k in range(info.num_nodes)]
        if step not in steps:
            raise KaleExtSdkError(f"job {name} has no step {step!r} (it has {', '.join(steps)})")
        node = steps.index(step)
        for line in self._call(self.kale_backend.logs, name, node, follow):
            yield line.text

    def get_job_events(self, name: str) -> list:
        types, _ = _sdk_types()
        return [
            types.Event(
                involved_object_kind="TrainJob",
                involved_object_name=name,
                message=e.message,
                reason=e.reason,
                event_time=datetime.fromisoformat(e.time.replace("Z", "+00:00")),
            )
            for e in self._call(self.kale_backend.events, name)
        ]

    def wait_for_job_status(
        self,
        name: str,
        status: set[str] | None = None,
        timeout: int = 600,
        polling_interval: int = 2,
        callbacks: list[Callable] | None = None,
    ):
        """As the SDK's Kubernetes backend waits (its checks, its errors); a failed job's error
        says where it failed (the cell and line)."""
        _, constants = _sdk_types()
        status = status or {constants.TRAINJOB_COMPLETE}
        known = set(STATUS.values())
        if not status.issubset(known):
            raise ValueError(f"Expected status {status} must be a subset of {known}")
        if polling_interval <= 0:
            raise ValueError(
                f"Polling interval must be a positive number, got polling_interval="
                f"{polling_interval}"
            )
        if polling_interval >= timeout:
            raise ValueError(
                "Polling interval must be strictly less than timeout. Received "
                f"polling_interval={polling_interval}, timeout={timeout}"
            )
        ends = time.monotonic() + timeout
        while True:
            info = self._call(self.kale_backend.get_job, name)
            trainjob = self._trainjob(info)
            for callback in callbacks or []:
                callback(trainjob)
            if trainjob.status == constants.TRAINJOB_FAILED and trainjob.status not in status:
                raise KaleExtSdkError(f"TrainJob {name} is Failed: {info.reason}")
            if trainjob.status in status:
                return trainjob
            if time.monotonic() + polling_interval > ends:
                raise TimeoutError(f"Timeout waiting for TrainJob {name} to reach status: {status}")
            time.sleep(polling_interval)  # the caller's interval, as the SDK polls

    def delete_job(self, name: str) -> None:
        self._call(self.kale_backend.delete, name)

    @staticmethod
    def _call(fn, *args):
        try:
            return fn(*args)
        except KaleExtSdkError:
            raise
        except KaleExtError as e:
            raise KaleExtSdkError(str(e)) from None


def live_settings(trainer, runtime, options) -> tuple[Callable, dict]:
    """The job's function and kale_ext options from a live train() call's arguments; what
    kale_ext cannot carry is refused naming it."""
    types, _ = _sdk_types()
    if not isinstance(trainer, types.CustomTrainer):
        kind = type(trainer).__name__ if trainer is not None else "no trainer"
        raise KaleExtSdkError(
            f"train(trainer={kind}): kale_ext runs a training function you write, passed as "
            "trainer=CustomTrainer(func=your_function)"
        )
    func = trainer.func
    name = getattr(func, "__name__", "")
    if not inspect.isfunction(func) or not name.isidentifier():
        raise KaleExtSdkError(
            "CustomTrainer(func=...) must be a function defined at the top level of a cell"
        )
    wanted: dict = {}
    if trainer.num_nodes is not None:
        wanted["nodes"] = trainer.num_nodes
    for key, value in (trainer.resources_per_node or {}).items():
        option = RESOURCES.get(key)
        if option is None:
            known = ", ".join(RESOURCES)
            raise KaleExtSdkError(
                f"CustomTrainer(resources_per_node={{{key!r}: ...}}): kale_ext sets {known} "
                "per node"
            )
        wanted[option] = value if option == "gpu" and isinstance(value, int) else str(value)
    pairs = (("env", trainer.env), ("image", trainer.image),
             ("packages", trainer.packages_to_install),
             ("parameters", trainer.func_args))  # fmt: skip
    wanted.update({k: (dict(v) if isinstance(v, dict) else v) for k, v in pairs if v})
    if trainer.packages_to_install and trainer.pip_index_urls:
        wanted["pip_index_urls"] = list(trainer.pip_index_urls)
    if runtime is not None:
        wanted["runtime"] = runtime if isinstance(runtime, str) else runtime.name
    for option in options or []:
        if type(option).__name__ == "Name":
            wanted["name"] = option.name
    return func, wanted


def compile_live(path: Path, func: Callable, running: str | None):
    """The notebook at ``path`` compiled with ``function`` as the job and, of its train()
    calls, the one in the running cell; refused when the file's ``function`` is not the
    kernel's (an unsaved notebook)."""
    from ..compile.compiler import compile_notebook, load_notebook
    from ..errors import CompileError

    try:
        nb = load_notebook(path)
    except KaleExtError as e:
        raise KaleExtSdkError(str(e)) from None
    function = func.__name__
    defined = _definitions(nb, function)
    if not defined:
        raise KaleExtSdkError(
            f"{path.name} has no cell defining `{function}`: save the notebook, then call "
            "train() again"
        )
    if _kernel_definition(func) not in defined:
        raise KaleExtSdkError(
            f"`{function}` in {path.name} is not the one this kernel ran: save the notebook, "
            "then call train() again"
        )
    try:
        return compile_notebook(nb, entrypoint=function, train_call=_call_index(nb, running))
    except CompileError as e:
        raise KaleExtSdkError(f"{path.name} does not compile:\n{e}") from None


def _parsed_cells(nb) -> Iterator[tuple[object, ast.Module]]:
    from ..compile.transform import transform_cell

    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        code = transform_cell(cell, [])
        try:
            yield cell, ast.parse(code.source if code is not None else "")
        except SyntaxError:
            continue


def _definitions(nb, function: str) -> list[str]:
    """Each top-level definition of ``function`` in the notebook, as an AST dump."""
    return [
        ast.dump(s)
        for _, tree in _parsed_cells(nb)
        for s in tree.body
        if isinstance(s, ast.FunctionDef) and s.name == function
    ]


def _kernel_definition(func: Callable) -> str | None:
    try:
        tree = ast.parse(inspect.getsource(func))
    except (TypeError, OSError, SyntaxError):
        return None
    return ast.dump(tree.body[0]) if tree.body else None


def _call_index(nb, running: str | None) -> int | None:
    """Which of the notebook's train() calls (1-based) the running cell holds (None: the
    compiler's choice, the last)."""
    from ..compile.sdkcall import find_train_calls
    from ..compile.transform import transform_cell

    cells = []
    for cell in nb.cells:
        code = transform_cell(cell, []) if cell.cell_type == "code" else None
        if code is not None:
            cells.append((cell, code.source, code.cell_line))
    calls = find_train_calls(cells)
    if running is None or ".train(" not in running:  # called from elsewhere: the last
        return None
    for i, call in enumerate(calls, 1):
        if call.cell.source.strip() == running.strip():
            return i
    raise KaleExtSdkError(
        f"the cell calling train() is not in {nb.name} as the kernel runs it: save the "
        "notebook, then call train() again"
    )
