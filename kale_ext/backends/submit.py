"""The one submit (and preview) every front end calls: compile, resolve the options against the
backend's runtime, then render or submit. Returns the job and its warnings together."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..compile import CompiledJob, compile_notebook
from ..errors import ConfigError, NotFound
from ..job.preview import Preview, render
from ..job.runtimes import Runtime
from ..job.spec import JobSpec, build_job_spec, runtime_name
from .base import Backend


@dataclass
class Submission:
    """A submitted job: its name, where it runs, its spec, and every warning (the compile's,
    the spec's, missing packages, the backend's)."""

    name: str
    backend: str
    spec: JobSpec
    warnings: list[str] = field(default_factory=list)


def lookup_runtime(backend: Backend, options, metadata, defaults=None) -> Runtime | ConfigError:
    """The backend's runtime for these options and notebook metadata (``metadata.kale_ext``),
    or the ConfigError (on `runtime`) that says why there is none. Other failures raise."""
    name = runtime_name(options, metadata, defaults)
    if not isinstance(name, str):
        return ConfigError("runtime", f"must be a runtime name, not {name!r}")
    try:
        return backend.get_runtime(name)
    except NotFound as e:
        return ConfigError("runtime", str(e))


def missing_packages(installed: dict[str, str] | None, spec: JobSpec) -> list[str]:
    """Warnings for modules the job imports that neither the runtime's image has (``installed``:
    its distributions, None when unknown) nor the job installs."""
    from packaging.utils import canonicalize_name

    from ..compile.packages import NOT_PACKAGES, distribution_of, requirement_name

    if installed is None:
        return []
    to_install = {canonicalize_name(requirement_name(p)) for p in spec.packages}
    warnings = []
    for module in sorted(set(spec.job.imported_modules) - NOT_PACKAGES):
        found = distribution_of(module)
        dist = canonicalize_name(found[0]) if found else canonicalize_name(module)
        if dist not in installed and dist not in to_install:
            warnings.append(
                f"`{module}` is imported, but runtime {spec.runtime.name} does not have {dist} and "
                "the job does not install it: add it to the packages"
            )
    return warnings


def installed_packages(backend: Backend, runtime: Runtime) -> dict[str, str] | None:
    """What the runtime's image is known to have, asking the cluster nothing more: the local
    backend's environment is checked by the compile itself; else an earlier probe's list."""
    if backend.name == "local":
        return None
    from .runtime_packages import cached

    return cached(backend, runtime)


def resolve_spec(backend: Backend, job: CompiledJob, options=None, defaults=None) -> JobSpec:
    """A compiled notebook and submit options, resolved against the backend's runtime, over
    ``defaults`` (kale_ext.job.defaults.Defaults; None: the built-in ones)."""
    runtime = lookup_runtime(backend, options, job.notebook_metadata, defaults)
    if isinstance(runtime, ConfigError):
        raise runtime
    spec = build_job_spec(job, options, runtime, defaults)
    spec.warnings += missing_packages(installed_packages(backend, runtime), spec)
    return spec


def _compiled(notebook) -> CompiledJob:
    return notebook if isinstance(notebook, CompiledJob) else compile_notebook(notebook)


def _path(notebook, notebook_path: str | None) -> str | None:
    if notebook_path is None and isinstance(notebook, (str, os.PathLike)):
        return str(notebook)
    return notebook_path


def preview(
    backend: Backend, notebook, options=None, defaults=None, notebook_path: str | None = None
) -> Preview:
    """What submitting would create, with the runtime looked up; submits nothing."""
    return render(resolve_spec(backend, _compiled(notebook), options, defaults), notebook_path)


def submit(
    backend: Backend, notebook, options=None, defaults=None, notebook_path: str | None = None
) -> Submission:
    """Compile (unless given a CompiledJob), resolve, submit. ``notebook``: a path, a Notebook,
    nbformat JSON or a CompiledJob."""
    job = _compiled(notebook)
    spec = resolve_spec(backend, job, options, defaults)
    submitted = backend.submit(spec, _path(notebook, notebook_path))
    warnings = [str(w) for w in job.warnings] + spec.warnings + list(submitted.warnings)
    return Submission(submitted.name, backend.name, spec, warnings)
