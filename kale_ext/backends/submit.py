"""The one submit (and preview) every front end calls: compile, resolve the options against the
backend's runtime, then render or submit. Returns the job and its warnings together."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..compile import CompiledJob, compile_notebook
from ..errors import BackendError, ConfigError, NotFound
from ..job.preview import Preview, render
from ..job.runtimes import Runtime
from ..job.spec import JobSpec, build_job_spec, runtime_name, train_call_choice
from ..job.workspace import Place, Workspace, choose, modules_beside
from .base import Backend
from .choose import UNREACHABLE
from .prune import auto_prune
from .snapshots import save, snapshot_of
from .tracking import start_run

if TYPE_CHECKING:
    from ..job.defaults import Defaults

AUTO = "auto"  # the workspace: chosen from the options and where the notebook lives


@dataclass
class Submission:
    """A submitted job: its name, where it runs, its spec, and every warning (the compile's,
    the spec's, missing packages, the backend's)."""

    name: str
    backend: str
    spec: JobSpec
    warnings: list[str] = field(default_factory=list)


def lookup_runtime(
    backend: Backend | None,
    options,
    metadata,
    defaults=None,
    notebook: str | None = None,
    published: bool = False,
) -> Runtime | ConfigError:
    """The backend's runtime for these options and notebook metadata (``metadata.kale_ext``)
    and ``notebook`` (the runtime= of its train() call), or the ConfigError (on `runtime`) that
    says why there is none. Other failures raise.

    ``published`` (a preview: writing a TrainJob is not running one): when no cluster can be
    asked (``backend`` None: none is configured; the local backend, for a runtime only a
    cluster runs; a cluster that does not answer), the Trainer's published runtime of that name
    (its ``published`` says so)."""
    name = runtime_name(options, metadata, defaults, notebook)
    if not isinstance(name, str):
        return ConfigError("runtime", f"must be a runtime name, not {name!r}")
    if backend is None:
        return _published(name, "no cluster is configured", None)
    try:
        return backend.get_runtime(name)
    except NotFound as e:
        if published and backend.name == "local":
            return _published(name, "the local backend has no cluster to ask", e)
        return ConfigError("runtime", str(e))
    except BackendError as e:
        if published and e.status in UNREACHABLE:
            return _published(name, f"the cluster could not be asked: {e}", e)
        raise


def _published(name: str, why: str, error: BackendError | None) -> Runtime | ConfigError:
    """The Trainer's published runtime ``name``, else the ConfigError saying why there is none
    (the backend's ``error``, or that no runtime of that name is published)."""
    from ..job.published_runtimes import RUNTIMES, SOURCE, published_runtime

    found = published_runtime(name, why)
    if found is not None:
        return found
    if isinstance(error, NotFound):
        return ConfigError("runtime", str(error))
    return ConfigError(
        "runtime",
        f"runtime {name!r} is not one of {SOURCE} ({', '.join(sorted(RUNTIMES))}) and {why}",
    )


def missing_packages(installed: dict[str, str] | None, spec: JobSpec) -> list[str]:
    """Warnings for modules the job imports that neither the runtime's image has (``installed``:
    its distributions, None when unknown) nor the job installs."""
    from packaging.utils import canonicalize_name

    from ..compile.packages import NOT_PACKAGES, distribution_of, requirement_name

    if installed is None:
        return []
    to_install = {canonicalize_name(requirement_name(p)) for p in spec.requirements}
    warnings = []
    local = set(spec.job.local_modules)
    for module in sorted(set(spec.job.imported_modules) - NOT_PACKAGES - local):
        found = distribution_of(module)
        dist = canonicalize_name(found[0]) if found else canonicalize_name(module)
        if dist not in installed and dist not in to_install:
            warnings.append(
                f"`{module}` is imported, but runtime {spec.runtime.name} does not have {dist} and "
                "the job does not install it: add it to the packages"
            )
    return warnings


def installed_packages(backend: Backend | None, runtime: Runtime) -> dict[str, str] | None:
    """What the runtime's image is known to have, asking the cluster nothing more: the local
    backend's environment is checked by the compile itself; else an earlier probe's list (none
    for a runtime whose facts are the published ones: no cluster was asked)."""
    if backend is None or backend.name == "local" or runtime.published:
        return None
    from .runtime_packages import cached

    return cached(backend, runtime)


def resolve_spec(
    backend: Backend | None,
    job: CompiledJob,
    options=None,
    defaults=None,
    workspace=None,
    place: Place | None = None,
    published: bool = False,
) -> JobSpec:
    """A compiled notebook and submit options, resolved against the backend's runtime, over
    ``defaults`` (kale_ext.job.defaults.Defaults; None: the built-in ones); ``published``: a
    preview, which takes the Trainer's published runtime when no cluster can be asked
    (lookup_runtime)."""
    runtime = lookup_runtime(
        backend, options, job.notebook_metadata, defaults, job.settings.get("runtime"), published
    )
    if isinstance(runtime, ConfigError):
        raise runtime
    spec = build_job_spec(job, options, runtime, defaults, workspace)
    # outputs go beside the notebook; a notebook without a file's: under the confining root
    spec.folder = (place.folder or place.confine) if place is not None else None
    spec.warnings += missing_packages(installed_packages(backend, runtime), spec)
    return spec


def prepare(
    notebook, options=None, place: Place | None = None, **compile_args
) -> tuple[CompiledJob, Workspace | None]:
    """Compile the notebook knowing its files: (the job, the workspace it ships). ``notebook``:
    a path (its folder is the default place), a Notebook, nbformat JSON or a CompiledJob
    (compiled already: only the workspace is chosen)."""
    from ..compile.compiler import load_notebook

    place = place or place_of(notebook)
    if isinstance(notebook, CompiledJob):
        return notebook, choose(options, notebook.notebook_metadata, place)
    nb = load_notebook(notebook)
    workspace = choose(options, nb.metadata.get("kale_ext"), place)
    local = workspace.modules if workspace is not None else modules_beside(place.folder)
    which = train_call_choice(options, nb.metadata.get("kale_ext"))
    return compile_notebook(nb, local_modules=local, train_call=which, **compile_args), workspace


def place_of(notebook) -> Place:
    """Where a notebook given as a path lives (its folder; a relative --workspace is read from
    the current folder); nowhere for other forms."""
    if isinstance(notebook, (str, os.PathLike)):
        return Place.of(notebook, base=os.getcwd())
    return Place()


def _prepared(notebook, options, place, workspace) -> tuple[CompiledJob, Workspace | None]:
    if isinstance(workspace, str):  # AUTO
        return prepare(notebook, options, place)
    if isinstance(notebook, CompiledJob):
        return notebook, workspace
    from ..compile.compiler import load_notebook

    nb = load_notebook(notebook)
    which = train_call_choice(options, nb.metadata.get("kale_ext"))
    local = workspace.modules if workspace is not None else ()
    return compile_notebook(nb, local_modules=local, train_call=which), workspace


@dataclass
class Resolved:
    """A job as submitting would create it: compiled, resolved; nothing submitted yet."""

    compiled: CompiledJob
    spec: JobSpec
    notebook_path: str | None  # the notebook's path (a path given as ``notebook`` by default)
    defaults: Defaults | None = None  # as given (None: the built-in ones)


def resolve(
    backend: Backend | None,
    notebook,
    options=None,
    defaults=None,
    notebook_path: str | None = None,
    place: Place | None = None,
    workspace: Workspace | None | str = AUTO,
    published: bool = False,
) -> Resolved:
    """Compile (unless given a CompiledJob) and resolve against the backend's runtime: what
    preview shows and submit runs. ``notebook``: a path, a Notebook, nbformat JSON or a
    CompiledJob. ``place``: where the notebook lives (default: a path's folder);
    ``workspace``: the files it ships (default: chosen by the options and the place; see
    prepare); ``published``: see resolve_spec."""
    place = place or place_of(notebook)
    job, workspace = _prepared(notebook, options, place, workspace)
    spec = resolve_spec(backend, job, options, defaults, workspace, place, published)
    if notebook_path is None and isinstance(notebook, (str, os.PathLike)):
        notebook_path = str(notebook)
    return Resolved(job, spec, notebook_path, defaults)


def preview(backend: Backend | None, notebook, *args, **kwargs) -> Preview:
    """What submitting would create, with the runtime looked up; submits nothing, and needs no
    cluster: without one to ask (``backend`` None: none is configured), the runtime's facts are
    the Trainer's published ones, and its warnings say so. The arguments are resolve's."""
    resolved = resolve(backend, notebook, *args, published=True, **kwargs)
    return render(resolved.spec, resolved.notebook_path)


def submit(
    backend: Backend,
    notebook,
    *args,
    parent_run: str | None = None,
    snapshot: bytes | None = None,
    **kwargs,
) -> Submission:
    """Compile, resolve (the arguments are resolve's), submit. With tracking on, the job is an
    MLflow run (a child of ``parent_run``). The notebook as submitted (``snapshot``, else
    ``notebook`` unless compiled already) and the options are kept for a rerun
    (snapshots.py)."""
    job = resolve(backend, notebook, *args, **kwargs)
    spec, path = job.spec, job.notebook_path
    tracked = start_run(spec, backend.name, path, job.defaults, parent_run)
    try:
        submitted = backend.submit(spec, path)
    except BaseException:
        tracked.abandon()
        raise
    warnings = [str(w) for w in job.compiled.warnings] + spec.warnings + list(submitted.warnings)
    warnings += tracked.warnings
    if job.defaults is not None:  # at most once an hour (prune.py)
        warnings += auto_prune(backend, job.defaults.keep_finished_days)
    kept = snapshot if snapshot is not None else snapshot_of(notebook)
    if kept is not None:
        try:
            save(backend, submitted.name, kept, spec, path, job.defaults)
        except OSError as e:
            warnings.append(f"it cannot be rerun: its notebook could not be kept ({e})")
    return Submission(submitted.name, backend.name, spec, warnings)
