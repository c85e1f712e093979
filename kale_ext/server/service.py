"""What the handlers do, as plain blocking functions (run in the extension's worker threads,
or for `preview` its worker processes).

No HTTP here: the handlers turn these results and the KaleExtError family into responses.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import OrderedDict
from dataclasses import asdict

from ..errors import ConfigError, Diagnostic, NotebookError
from .compile_inputs import notebook_metadata, runtime_for


def load(data: bytes | dict, name: str):
    """A Notebook from file bytes or nbformat JSON (NotebookError when it is not one)."""
    from ..compile.notebook import parse_notebook

    return parse_notebook(data, name)


#: Recent compile results by notebook content: the panel previews the same notebook again each
#: time an option changes. Bounded; a change to the installed packages (packages.py reads them)
#: empties it.
_COMPILED: OrderedDict = OrderedDict()
_COMPILED_SIZE = 16
_COMPILED_LOCK = threading.Lock()
#: Recent previews' answers (preview_json) by the sha256 of all their inputs.
_PREVIEWS: OrderedDict = OrderedDict()
_PREVIEWS_SIZE = 32


def _environment_stamp() -> tuple:
    """Changes when packages are installed or removed (their directories' mtimes)."""
    stamp = []
    for entry in sys.path:
        try:
            stamp.append(os.stat(entry or ".").st_mtime_ns)
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def compile_cached(data: bytes | dict, name: str, local_modules=(), train_call: int | None = None):
    """compile_notebook(load(data, name)), reusing the result for the same content. Raises as
    compile_notebook does (errors are not kept)."""
    from ..compile.compiler import compile_notebook

    notebook = load(data, name)  # its sha256 is the content's
    local_modules = tuple(local_modules)
    key = (notebook.sha256, name, _environment_stamp(), local_modules, train_call)
    with _COMPILED_LOCK:
        job = _COMPILED.get(key)
        if job is not None:
            _COMPILED.move_to_end(key)
            return job
    job = compile_notebook(notebook, local_modules=local_modules, train_call=train_call)
    with _COMPILED_LOCK:
        _COMPILED[key] = job
        while len(_COMPILED) > _COMPILED_SIZE:
            _COMPILED.popitem(last=False)
    return job


def config_diagnostic(e: ConfigError) -> dict:
    return {**Diagnostic("error", str(e), code="config").to_dict(), "field": e.field}


def compile_preview(
    backend,
    data: bytes | dict,
    name: str,
    path: str | None,
    options,
    defaults=None,
    root: str | None = None,
) -> dict:
    """POST compile in one thread: the runtime from the backend, then `preview`."""
    runtime, installed = runtime_for(backend, data, options, defaults)
    return preview(data, name, path, options, runtime, defaults, installed, root)


def preview_json(
    data: bytes | dict,
    name: str,
    path: str | None,
    options,
    runtime,
    defaults,
    installed,
    root: str | None = None,
) -> bytes:
    """`preview` as the reply's JSON, encoded where it is computed (a compile process), so
    that the server's event loop only writes it. Kept for the same inputs: the request's
    values, what the preview read from disk (the workspace's files with their sizes and
    modification stamps, the modules beside the notebook, read again each time) and the
    installed packages; the same request again costs a look-up (the panel previews the same
    notebook each time it opens or an option changes back). Only a request that names its job
    is kept: an unnamed one is answered with a new made-up name each time."""
    import hashlib
    import pickle

    read = disk_inputs(data, options, root, path)
    inputs = (data, name, path, options, runtime, defaults, installed, root, read[1:])
    blob = None
    # a request that names no job gets a name made up for it, a new one each time (the same
    # name again would be refused at submit: a job has it): only named requests are kept (the
    # panel names its later previews with the name the first one made up)
    if isinstance(options, dict) and options.get("name"):
        try:
            blob = pickle.dumps((inputs, _environment_stamp()), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a value that does not pickle (a thread's caller): not kept
            blob = None
    key = hashlib.sha256(blob).digest() if blob is not None else None
    with _COMPILED_LOCK:
        kept = _PREVIEWS.get(key) if key is not None else None
        if kept is not None:
            _PREVIEWS.move_to_end(key)
            return kept
    result = preview(data, name, path, options, runtime, defaults, installed, root, read)
    answer = json.dumps(result, default=str).encode()
    if key is not None:
        with _COMPILED_LOCK:
            _PREVIEWS[key] = answer
            while len(_PREVIEWS) > _PREVIEWS_SIZE:
                _PREVIEWS.popitem(last=False)
    return answer


def disk_inputs(data: bytes | dict, options, root: str | None, path: str | None) -> tuple:
    """What a preview reads from disk, read now: the notebook's `kale_ext` metadata, its
    workspace (a Workspace, None, or the ConfigError that says why it cannot be had) and the
    modules beside it."""
    from ..job.workspace import choose, modules_beside

    where = place(root, path)
    kale_meta = notebook_metadata(data).get("kale_ext")  # read once (file bytes: parsed once)
    try:
        workspace = choose(options, kale_meta, where)
    except ConfigError as e:
        return kale_meta, e, ()
    local = workspace.modules if workspace is not None else modules_beside(where.folder)
    return kale_meta, workspace, tuple(local)


def place(root: str | None, path: str | None):
    """Where a request's notebook lives: its folder under the server ``root`` (None for a
    notebook sent without a path); folders named in the options are read from the root and
    must stay under it."""
    from pathlib import Path, PurePosixPath

    from ..job.workspace import Place

    if root is None:
        return Place()
    folder = Path(root, *PurePosixPath(path).parent.parts) if path is not None else None
    return Place(folder, Path(root), Path(root))


def workspace_reply(workspace, root: str | None) -> dict | None:
    """The workspace's summary, its root named relative to the server root."""
    import os

    if workspace is None:
        return None
    label = str(workspace.root)
    if root is not None:
        label = os.path.relpath(workspace.root, os.path.realpath(root)).replace(os.sep, "/")
    return workspace.summary(label)


def preview(
    data: bytes | dict,
    name: str,
    path: str | None,
    options,
    runtime,
    defaults=None,
    installed: dict | None = None,
    root: str | None = None,
    read: tuple | None = None,
) -> dict:
    """POST compile without the backend (so it can run in another process): compile and config
    errors are results (`ok: false`), not exceptions. ``runtime``: a Runtime or a ConfigError;
    ``defaults``: kale_ext.defaults.Defaults; ``installed``: the runtime image's packages, when
    known (imports it lacks and the job does not install are warned about); ``root``: the
    server root (the notebook's workspace is its folder there); ``read``: disk_inputs' answer
    when the caller has it."""
    from ..backends.submit import missing_packages
    from ..compile.packages import requirements
    from ..errors import CompileError
    from ..job.volumes import describe

    result: dict = {
        "ok": False,
        "errors": [],
        "warnings": [],
        "function_name": None,
        "source": None,
        "parameters": {},
        "packages": [],
        "package_sources": [],
        "pinning": None,
        "config": None,
        "runtime": None,
        "nodes": None,
        "procs_per_node": None,
        "shape": None,
        "procs_why": None,
        "job_name": None,
        "trainjob_yaml": None,
        "workspace": None,
        "creates": [],
        "volumes": [],
        "outputs": None,
        "local_resources": None,
        "provenance": [],
        "train_calls": [],
    }
    kale_meta, workspace, local = read or disk_inputs(data, options, root, path)
    if isinstance(workspace, ConfigError):
        result["errors"] = [config_diagnostic(workspace)]
        return result
    result["workspace"] = workspace_reply(workspace, root)
    try:
        from ..job.spec import train_call_choice

        which = train_call_choice(options, kale_meta)
        job = compile_cached(data, name, local, which)
    except ConfigError as e:
        result["errors"] = [config_diagnostic(e)]
        return result
    except CompileError as e:
        result["errors"] = [d.to_dict() for d in e.diagnostics if d.severity == "error"]
        result["warnings"] = [d.to_dict() for d in e.diagnostics if d.severity != "error"]
        return result
    except NotebookError as e:
        result["errors"] = [Diagnostic("error", str(e), code="notebook").to_dict()]
        return result
    result.update(
        function_name=job.function_name,
        source=job.source,
        parameters=job.parameters,
        packages=requirements(job.packages),
        warnings=[w.to_dict() for w in job.warnings],
        train_calls=job.train_calls,
    )
    try:
        if isinstance(runtime, ConfigError):
            raise runtime
        from ..job.preview import provenance as notebook_provenance
        from ..job.preview import render
        from ..job.procs import shape_text
        from ..job.spec import build_job_spec, notebook_arguments

        shown = render(build_job_spec(job, options, runtime, defaults, workspace), path)
        spec = shown.spec
        # what the job gets when the panel sets nothing: an SDK notebook's func_args win
        result["parameters"] = {**job.parameters, **notebook_arguments(job)}
    except ConfigError as e:
        result["errors"] = [config_diagnostic(e)]
        return result
    except CompileError as e:  # the `distributed` cell, read with the job's settings
        result["errors"] = [d.to_dict() for d in e.errors]
        return result
    result["warnings"] += [
        Diagnostic("warning", text, code="config").to_dict() for text in spec.warnings
    ]
    result["warnings"] += [
        Diagnostic("warning", text, code="missing-package").to_dict()
        for text in missing_packages(installed, spec)
    ]
    if spec.config.env_from:
        result["warnings"].append(
            Diagnostic(
                "warning",
                "env_from: the keys of the Secrets and ConfigMaps become env entries when the job "
                "is submitted; the TrainJob shown here does not list them",
                code="config",
            ).to_dict()
        )
    result.update(
        ok=True,
        config=spec.config.to_dict(),
        runtime=spec.runtime.name,
        nodes=spec.nodes,
        procs_per_node=spec.procs_per_node,
        shape=shape_text(spec.nodes, spec.procs_per_node),
        procs_why=spec.procs.why,
        job_name=spec.name,
        trainjob_yaml=shown.yaml,
        creates=shown.creates(),
        volumes=describe(spec.config, spec.local_folders),
        outputs=str(spec.outputs) if spec.outputs is not None else None,
        local_resources=shown.local_resources(),
        provenance=notebook_provenance(job, spec.options),
        package_sources=[p.to_dict() for p in spec.packages],
        pinning={"on": spec.pinning.on, "why": spec.pinning.why} if spec.pinning else None,
    )
    return result


def submit(
    backend,
    data: bytes | dict,
    name: str,
    path: str | None,
    options,
    defaults=None,
    root: str | None = None,
) -> dict:
    """POST jobs: backends.submit.submit on the notebook's content. Raises the KaleExtError
    family (a runtime the backend lacks is a ConfigError on `runtime`)."""
    from ..backends.submit import submit as submit_job

    kept = data if isinstance(data, bytes) else json.dumps(data).encode()  # for a rerun
    job = submit_job(backend, load(data, name), options, defaults, path, place(root, path),
                     snapshot=kept)  # fmt: skip
    return {"name": job.name, "backend": job.backend, "warnings": job.warnings}


def job_list(backend) -> list[dict]:
    jobs = backend.list_jobs()
    jobs.sort(key=lambda j: j.created or "", reverse=True)
    return [j.to_dict() for j in jobs]


def events(backend, name: str) -> list[dict]:
    return [asdict(e) for e in backend.events(name)]


# -- a runtime's Python packages --

#: One probe per runtime at a time: a second request waits for the first one's result (cached)
#: instead of starting another pod.
_PROBES: dict[tuple, threading.Lock] = {}
_PROBES_LOCK = threading.Lock()


def known_packages(backend, name: str) -> dict:
    """GET runtimes/{name}/packages: what the backend knows without starting a job (the local
    backend: this Python environment; Kubernetes: an earlier probe's cached result), else
    `packages: null`. NotFound for a runtime the backend does not have."""
    packages = backend.runtime_packages(name)
    if packages is None:
        backend.get_runtime(name)  # a missing runtime is a 404, not an unknown list
        return packages_reply(name, None, None)
    return packages_reply(name, packages, "environment" if backend.name == "local" else "cache")


def probe_runtime_packages(backend, name: str) -> dict:
    """`?probe=1`: the known list, else what a probe job on the runtime finds (it starts a pod;
    runtime_packages.probe caches the result per runtime and image)."""
    from ..backends.runtime_packages import probe

    key = (backend.name, getattr(backend, "namespace", None), name)
    with _PROBES_LOCK:
        lock = _PROBES.setdefault(key, threading.Lock())
    with lock:
        known = known_packages(backend, name)
        if known["packages"] is not None:
            return known
        return packages_reply(name, probe(backend, name), "probe")


def packages_reply(name: str, packages: dict[str, str] | None, source: str | None) -> dict:
    """`{"runtime", "packages": {canonical name: version} (sorted) or null, "source"}`."""
    listed = None if packages is None else dict(sorted(packages.items()))
    return {"runtime": name, "packages": listed, "source": source}


# -- the tag grammar, for the tag editor --

_SETTING_HELP = {
    "limits": "a resource limit per node (Kale), e.g. limit:nvidia.com/gpu:1",
    "annotations": "an annotation on the TrainJob and its pods (Kale)",
    "labels": "a label on the TrainJob and its pods (Kale)",
    "image": "the training container's image (Kale)",
}
_DISPLAY = (
    (re.compile(r"\(\?P<(\w+)>[^)]*\)"), r"<\1>"),
    (re.compile(r"\[_a-z\]\[_a-z0-9\]\*"), "<name>"),
    (re.compile(r"\((\w+(?:\|\w+)+)\)"), r"<\1>"),
    (re.compile(r"\.\*"), "<...>"),
)


def _display(pattern: str) -> str:
    for regex, repl in _DISPLAY:
        pattern = regex.sub(repl, pattern)
    return pattern


def tags() -> list[dict]:
    """Every row of the tag grammar: how it is written, the role it gives and what it does."""
    from ..compile.notebook import TAGS

    return [
        {
            "tag": _display(rule.pattern),
            "role": rule.role.value if rule.role else None,
            "help": rule.help or rule.note or _SETTING_HELP.get(rule.setting or "", ""),
            "pattern": rule.pattern,
            "setting": rule.setting,
            "effect": "ignored" if rule.note else ("setting" if rule.setting else "role"),
        }
        for rule in TAGS
    ]
