"""What Python packages a runtime's image has: probed once by running a tiny job on it (as the
Kubeflow SDK's get_runtime_packages does), then cached per runtime and image, so submits can
warn about imports the job would lack without starting a pod each time."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import BackendError
from ..files import jobs_dir
from .base import Backend

MARK = "KALE_PACKAGES "
PROBE = (
    "import json, subprocess, sys\n"
    "out = subprocess.run([sys.executable, '-m', 'pip', 'list', '--format', 'json'],\n"
    "                     capture_output=True, text=True).stdout\n"
    "found = {p['name']: p['version'] for p in json.loads(out or '[]')}\n"
    "print('KALE_PACKAGES ' + json.dumps(found))\n"
)


def cache_file() -> Path:
    return jobs_dir().parent / "runtime-packages.json"


def _key(backend: Backend, runtime) -> str:
    """The cache key of a runtime (a Runtime, or its name: then the backend is asked)."""
    if isinstance(runtime, str):
        runtime = backend.get_runtime(runtime)
    return f"{backend.name}/{getattr(backend, 'namespace', '')}/{runtime.name}@{runtime.image}"


def cached(backend: Backend, runtime) -> dict[str, str] | None:
    """An earlier probe's result for ``runtime`` (a Runtime, or its name), or None."""
    try:
        return json.loads(cache_file().read_text()).get(_key(backend, runtime))
    except (OSError, json.JSONDecodeError):
        return None


def probe(backend: Backend, runtime: str, timeout: float = 900) -> dict[str, str]:
    """Run the probe job on ``runtime``, cache and return {canonical name: version}."""
    from packaging.utils import canonicalize_name

    from ..compile.compiler import compile_notebook
    from ..files import write_atomic
    from ..job.spec import build_job_spec

    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "execution_count": None,
        "source": PROBE,
    }
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}
    job = compile_notebook(nb, function_name="runtime_packages")
    spec = build_job_spec(job, {"nodes": 1, "procs_per_node": 1}, backend.get_runtime(runtime))
    name = backend.submit(spec).name
    try:
        info = backend.wait(name, timeout=timeout, interval=1.0)
        lines = [line.text for line in backend.logs(name) if line.text.startswith(MARK)]
        if info.status.value != "Complete" or not lines:
            raise BackendError(f"the package probe on runtime {runtime} failed: {info.reason}")
        found = {canonicalize_name(k): v for k, v in json.loads(lines[-1][len(MARK) :]).items()}
    finally:
        try:
            backend.delete(name)
        except BackendError:
            pass
    path = cache_file()
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        data = {}
    data[_key(backend, runtime)] = found
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True))
    return found
