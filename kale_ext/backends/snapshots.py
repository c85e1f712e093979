"""What a rerun needs, kept at each submit: the notebook as submitted (a snapshot: a rerun runs
the same code whatever the notebook on disk says now) and the explicit options, beside the local
jobs in ``<jobs>/.submitted/NAME/`` (files only this user reads: the options hold env values).

A job submitted from elsewhere (another machine, a client that keeps no snapshot) has none, and
a rerun says so. A snapshot left by a deleted job of the same name is told apart by the
notebook's sha256, which the job records too."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import BackendError
from ..files import jobs_dir, write_atomic

FOLDER = ".submitted"
NOTEBOOK = "notebook.ipynb"
RECORD = "submit.json"


@dataclass
class Snapshot:
    notebook: bytes  # nbformat JSON
    options: dict  # the explicit submit options (no name)
    notebook_path: str | None
    folder: str | None  # where the notebook lived: its workspace is read from there again
    notebook_sha256: str  # the job's (its provenance says the same)
    defaults: dict | None = None  # the job-shaping defaults it ran with (Defaults.shaping)


def root(backend) -> Path:
    """Where ``backend``'s snapshots are kept: beside its local jobs, else the default jobs
    folder's (a cluster's jobs are rerun from the machine that submitted them)."""
    return Path(getattr(backend, "jobs_dir", None) or jobs_dir()) / FOLDER


def nbformat_of(nb) -> dict:
    """A compiled Notebook as nbformat JSON (what a `%%trainjob` cell or %kale_submit ran)."""
    cells = [{"cell_type": c.cell_type, "id": c.id, "metadata": {"tags": list(c.tags)},
              "source": c.source, "outputs": [], "execution_count": None}
             for c in nb.cells]  # fmt: skip
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": nb.metadata, "cells": cells}


def snapshot_of(notebook) -> bytes | None:
    """The notebook as submitted, as bytes; None for a compiled job (nothing to keep)."""
    from ..compile import CompiledJob
    from ..compile.notebook import Notebook

    if isinstance(notebook, (str, os.PathLike)):
        from ..files import MAX_NOTEBOOK_BYTES, read_bytes

        return read_bytes(notebook, MAX_NOTEBOOK_BYTES)
    if isinstance(notebook, bytes):
        return notebook
    if isinstance(notebook, dict):
        return json.dumps(notebook).encode()
    if isinstance(notebook, Notebook):
        return json.dumps(nbformat_of(notebook)).encode()
    if isinstance(notebook, CompiledJob):
        return None
    return None


def save(backend, name: str, notebook: bytes, spec, notebook_path: str | None,
         defaults=None) -> None:  # fmt: skip
    """Keep job ``name``'s snapshot (replacing one of an earlier job of that name), with the
    job-shaping ``defaults`` it was resolved with (None: the built-in ones)."""
    from ..job.defaults import Defaults

    folder = root(backend) / name
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(folder / NOTEBOOK, notebook.decode("utf-8"), private=True)
    record = {"options": spec.options, "notebook_path": notebook_path,
              "folder": str(spec.folder) if spec.folder else None,
              "notebook_sha256": spec.job.notebook_sha256,
              # the kept bytes' own (a notebook sent as JSON or from a kernel is hashed as
              # the job's another way): what a rerun checks before it runs them
              "snapshot_sha256": hashlib.sha256(notebook).hexdigest(),
              "defaults": (defaults or Defaults()).shaping()}  # fmt: skip
    write_atomic(folder / RECORD, json.dumps(record, indent=2), private=True)


#: What a kept submit record holds, and the types each may have (None: absent).
FIELDS = {"options": (dict, type(None)), "notebook_path": (str, type(None)),
          "folder": (str, type(None)), "notebook_sha256": (str,),
          "snapshot_sha256": (str, type(None)), "defaults": (dict, type(None))}  # fmt: skip


def load(backend, name: str, notebook_sha256: str | None, confine: Path | None = None) -> Snapshot:
    """Job ``name``'s snapshot, verified before it is trusted: a 409 naming why when there is
    none that matches the job, or when what is kept does not match what was recorded (a
    notebook changed since, a field of the wrong type, options the schema refuses, a folder
    outside ``confine``: the server's root)."""
    folder = root(backend) / name
    from ..errors import UnsafeFile
    from ..files import MAX_NOTEBOOK_BYTES, MAX_RECORD_BYTES, loads_json, read_bytes

    try:
        text = read_bytes(folder / RECORD, MAX_RECORD_BYTES, inside=folder)
        notebook = read_bytes(folder / NOTEBOOK, MAX_NOTEBOOK_BYTES, inside=folder)
    except UnsafeFile as e:  # a FIFO, a device, too large: said as such
        _refuse(name, f"its snapshot cannot be read: {e}")
    except OSError:
        text = b""
    try:
        record = loads_json(text, folder / RECORD)
    except UnsafeFile:  # no JSON, or too deep: no snapshot of this job
        record = None
    if not isinstance(record, dict) or record.get("notebook_sha256") != notebook_sha256:
        raise BackendError(
            f"job {name} cannot be rerun from here: no snapshot of the notebook it ran was kept "
            "(it was submitted from another machine or client); submit its notebook again",
            409, "Conflict",
        )  # fmt: skip
    for field, kinds in FIELDS.items():
        if not isinstance(record.get(field), kinds):
            kind = " or ".join(k.__name__ for k in kinds if k is not type(None))
            _refuse(name, f"its kept {field} is not a {kind} ({folder / RECORD})")
    digest = hashlib.sha256(notebook).hexdigest()
    if not _unchanged(record, notebook, digest):
        _refuse(name, f"its kept notebook ({folder / NOTEBOOK}) has changed since it was "
                f"submitted: its sha256 is {digest}, {notebook_sha256} was recorded")  # fmt: skip
    from ..errors import ConfigError
    from ..job.options import JobOptions

    try:
        JobOptions.from_dict(record.get("options"), "options")
    except ConfigError as e:
        _refuse(name, f"its kept options do not match the schema: {e}")
    kept_in = record.get("folder")
    if confine is not None and kept_in is not None:
        inside = Path(kept_in).resolve().is_relative_to(Path(confine).resolve())
        if not inside:
            _refuse(name, f"its recorded folder {kept_in} is outside the server's root")
    return Snapshot(notebook, record.get("options") or {}, record.get("notebook_path"),
                    record.get("folder"), record["notebook_sha256"],
                    record.get("defaults"))  # fmt: skip


def _unchanged(record: dict, notebook: bytes, digest: str) -> bool:
    """Whether the kept notebook is what was kept: its sha256 is its own, recorded at save;
    else (a snapshot kept before that) the job's: of the bytes sent, or of a notebook sent as
    JSON (hashed sorted, as compile/notebook.py does)."""
    if record.get("snapshot_sha256"):
        return digest == record["snapshot_sha256"]
    if digest == record["notebook_sha256"]:
        return True
    try:
        canonical = json.dumps(json.loads(notebook), sort_keys=True, check_circular=False)
    except (ValueError, RecursionError):
        return False
    return hashlib.sha256(canonical.encode()).hexdigest() == record["notebook_sha256"]


def _refuse(name: str, why: str):
    raise BackendError(f"job {name} is not rerun: {why}; submit its notebook again",
                       409, "SnapshotMismatch")  # fmt: skip


def forget(backend, name: str) -> None:
    """Remove job ``name``'s snapshot (the job is deleted), and the snapshots' folder when it
    was the last (a save under way has made its own folder in it: then it stays)."""
    shutil.rmtree(root(backend) / name, ignore_errors=True)
    try:
        root(backend).rmdir()
    except OSError:  # not empty, or gone
        pass
