"""What POST compile reads before its preview, in one of the server's threads: the runtime
from the backend (named by the options, the notebook's metadata or its train() call), the
packages its image is known to have, and the defaults.

Measured for a 105-cell notebook sent as JSON (benchmarks/server.py): each hop from the event
loop to a thread and back costs the loop a wake-up and a wait for the GIL, so the reads are one
hop, not three; and the notebook is not parsed to look for a train() call that no cell's source
can hold (it was parsed here and again in the compile process).
"""

from __future__ import annotations

import json

from ..errors import BackendError, ConfigError, KaleExtError


def preview_inputs(app, data: bytes | dict, options, options_error=None) -> tuple:
    """POST compile's reads, in one thread (each hop to a thread and back costs the event loop):
    the runtime (or the ConfigError that says why there is none: ``options_error`` when the
    options are invalid) and its known packages from the backend, and the defaults."""
    try:
        defaults = app.defaults()  # read once: the backend's choice reads them too
    except ConfigError:
        app.get_backend()  # made (or its error said) as without the defaults' error
        raise
    from ..backends.choose import UNREACHABLE

    try:
        backend = app.get_backend(defaults)[0]
    except BackendError as e:  # a preview needs no cluster: the published runtimes instead
        if e.status not in UNREACHABLE:
            raise
        backend = None
    if options_error is not None:  # the preview reports it where it reports a missing runtime
        return options_error, None, defaults
    return (*runtime_for(backend, data, options, defaults), defaults)


def notebook_metadata(data: bytes | dict) -> dict:
    """The notebook's metadata, read without compiling (empty when it cannot be read: the
    compiler then reports why)."""
    if not isinstance(data, dict):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            return {}
    meta = data.get("metadata") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else {}


def runtime_for(backend, data: bytes | dict, options, defaults=None) -> tuple:
    """What `preview` needs from the backend: the runtime (or the ConfigError that says why
    there is none) and the packages its image is known to have. Asks the cluster nothing more
    than the runtime."""
    from ..backends.submit import installed_packages, lookup_runtime

    if not isinstance(data, dict):  # file bytes: parsed once here, not once per use
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            pass  # the compile says why
    meta = notebook_metadata(data).get("kale_ext")
    named = call_runtime(data, options, meta)
    runtime = lookup_runtime(backend, options, meta, defaults, named, published=True)
    installed = None if isinstance(runtime, ConfigError) else installed_packages(backend, runtime)
    return runtime, installed


def call_runtime(data: bytes | dict, options, meta) -> str | None:
    """The runtime= of the notebook's train() call (None: none, or it cannot be read: the
    compile says why)."""
    from ..compile.notebook import parse_notebook
    from ..compile.sdkcall import may_have_train_call, notebook_train_call
    from ..job.spec import train_call_choice

    try:
        which = train_call_choice(options, meta)
        sources = cell_sources(data)
        if which is None and sources is not None and not any(map(may_have_train_call, sources)):
            return None  # what notebook_train_call finds, without parsing the notebook first
        call = notebook_train_call(parse_notebook(data, "notebook.ipynb"), which, [])
    except (KaleExtError, ValueError):
        return None
    return call.settings.get("runtime") if call is not None else None


def cell_sources(data: bytes | dict) -> list[str] | None:
    """The sources of an nbformat 4 notebook's cells, read from its JSON as parse_notebook reads
    them (None: not such JSON; parsing it decides)."""
    cells = data.get("cells") if isinstance(data, dict) and data.get("nbformat") == 4 else None
    if not isinstance(cells, list):
        return None
    sources = []
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            return None
        sources.append(source)
    return sources
