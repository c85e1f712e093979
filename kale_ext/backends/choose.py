"""Which backend a command, a magic or the server uses, and why (shown to the user)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from ..errors import BackendError, ConfigError
from ..job.defaults import BACKENDS as CHOICES
from .base import Backend

#: What a command, a magic, KALE_EXT_BACKEND or the defaults may name: a backend, or AUTO
#: (a configured cluster, else this machine).
AUTO = "auto"
BACKENDS = tuple(b for b in CHOICES if b != AUTO)
#: A backend's statuses that mean its cluster cannot be asked (no kubeconfig, no answer).
UNREACHABLE = (503, 504)


def kubernetes_configured() -> tuple[bool, str]:
    """Whether a cluster is configured here, and why."""
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


def backend_class(name: str) -> type[Backend]:
    if name == "local":
        from .local import LocalBackend

        return LocalBackend
    from .kubernetes import KubernetesBackend

    return KubernetesBackend


def choose_backend(name: str | None = None, defaults=None, **settings) -> tuple[Backend, str]:
    """The backend to use and the reason: explicit name > KALE_EXT_BACKEND > the ``defaults``'
    backend (a kale_ext.job.defaults.Defaults) > a configured cluster > the embedded local
    backend; `auto` at any of the first three goes straight to the last two. The backend gets
    those of ``settings`` (not None) it takes; the defaults' namespace applies unless
    ``settings`` name one."""
    why = "asked for explicitly"
    if name is None and os.environ.get("KALE_EXT_BACKEND"):
        name, why = os.environ["KALE_EXT_BACKEND"], "KALE_EXT_BACKEND is set"
    if name is None and defaults is not None and defaults.backend != AUTO:
        name, why = defaults.backend, f"set in the {defaults.sources.get('backend', 'defaults')}"
    if name in (None, AUTO):
        configured, reason = kubernetes_configured()
        name, why = ("kubernetes", reason) if configured else ("local", f"{reason}: runs here")
    if name not in BACKENDS:
        raise ConfigError("backend", f"must be one of {', '.join(CHOICES)}, not {name!r}")
    if defaults is not None and defaults.namespace and not settings.get("namespace"):
        settings["namespace"] = defaults.namespace
    cls = backend_class(name)
    backend = cls(**settings_for(cls, settings))
    if defaults is not None:
        backend.stall_seconds = defaults.stall_seconds
        if hasattr(backend, "capacity"):  # the local queue's, and its priority
            backend.capacity = defaults.local_capacity
            backend.nice = defaults.local_nice
    return backend, why


def settings_for(cls: type, settings: dict) -> dict:
    """Those of ``settings`` (not None) that ``cls`` takes."""
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in settings.items() if v is not None and (takes_any or k in params)}


def preview_backend(name: str | None = None, defaults=None, **settings) -> Backend | None:
    """choose_backend's backend for a preview (`compile --trainjob`, `--dry-run`, the panel's
    preview), which needs no cluster: None when the chosen one has no cluster it can ask (no
    kubeconfig); the preview then takes the Trainer's published runtimes
    (kale_ext.backends.submit.lookup_runtime)."""
    try:
        return choose_backend(name, defaults, **settings)[0]
    except BackendError as e:
        if e.status in UNREACHABLE:
            return None
        raise
