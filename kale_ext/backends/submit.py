"""Choose a backend and submit a notebook: the one path every surface takes."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError, NotFound
from .base import Backend

BACKENDS = ("local", "kubernetes")


def kubernetes_configured() -> tuple[bool, str]:
    """Whether a cluster is configured here, and why (shown to the user)."""
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True, "running inside a Kubernetes cluster"
    paths = os.environ.get("KUBECONFIG")
    if paths:
        found = [p for p in paths.split(os.pathsep) if p and Path(p).is_file()]
        if found:
            return True, f"KUBECONFIG points at {found[0]}"
        return False, "KUBECONFIG is set but names no existing file"
    default = Path.home() / ".kube" / "config"
    if default.is_file():
        return True, f"found {default}"
    return False, "no kubeconfig found"


def choose_backend(name: str | None = None, defaults=None, **settings) -> tuple[Backend, str]:
    """The backend to use and the reason: explicit name > KALE_EXT_BACKEND > the ``defaults``'
    backend (a kale_ext.defaults.Defaults, unless `auto`) > a configured cluster > the embedded
    local backend. The defaults' namespace applies unless ``settings`` name one."""
    why = "asked for explicitly"
    if name is None and os.environ.get("KALE_EXT_BACKEND"):
        name, why = os.environ["KALE_EXT_BACKEND"], "KALE_EXT_BACKEND is set"
    if name is None and defaults is not None and defaults.backend != "auto":
        name, why = defaults.backend, f"set in the {defaults.sources.get('backend', 'defaults')}"
    if name is None:
        configured, reason = kubernetes_configured()
        name, why = ("kubernetes", reason) if configured else ("local", f"{reason}: runs here")
    if name not in BACKENDS:
        raise ConfigError("backend", f"must be one of {', '.join(BACKENDS)}, not {name!r}")
    if name == "local":
        from .local.backend import LocalBackend

        settings.pop("namespace", None)
        return LocalBackend(**settings), why
    from .kubernetes.backend import KubernetesBackend

    if defaults is not None and defaults.namespace and not settings.get("namespace"):
        settings["namespace"] = defaults.namespace
    return KubernetesBackend(**settings), why


def missing_packages(installed: dict[str, str] | None, spec) -> list[str]:
    """Warnings for modules the job imports that neither the runtime's image has (``installed``:
    its distributions, None when unknown) nor the job installs (for example a module that is not
    installed here either, so it has no pin)."""
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


def resolve_spec(backend: Backend, job, options=None, defaults=None):
    """A compiled notebook and submit options, resolved against the backend's runtime, over
    ``defaults`` (kale_ext.defaults.Defaults; None: the built-in ones)."""
    from ..job.spec import JobOptions, build_job_spec, runtime_name

    opts = JobOptions.from_dict(options)
    try:
        runtime = backend.get_runtime(runtime_name(opts, job.notebook_metadata, defaults))
    except NotFound as e:
        raise ConfigError("runtime", str(e)) from None
    spec = build_job_spec(job, opts, runtime, defaults)
    spec.warnings += missing_packages(backend.runtime_packages(spec.runtime.name), spec)
    return spec


def submit_job(backend: Backend, spec, notebook_path: str | None = None) -> str:
    """Submit a resolved spec; the backend's own warnings join the spec's."""
    submitted = backend.submit(spec, notebook_path)
    spec.warnings += list(submitted.warnings)  # e.g. nodes not listable
    return submitted.name


def submit_notebook(
    backend: Backend, notebook, options=None, notebook_path: str | None = None, defaults=None
):
    """Compile, resolve the options against the backend's runtime, submit. Returns (name, spec)."""
    from ..compile.compiler import compile_notebook

    spec = resolve_spec(backend, compile_notebook(notebook), options, defaults)
    if notebook_path is None and isinstance(notebook, (str, os.PathLike)):
        notebook_path = str(notebook)
    return submit_job(backend, spec, notebook_path), spec
