"""What a job gives back, read where it lasts: rank 0's return value (saved by the compiled
module, compile/resultsave.py) and the files it wrote to ``KALE_EXT_OUTPUT_DIR``.

Where they are, on this machine:

- a local job: its outputs folder (``outputs/<job>/`` beside the notebook), also after
  ``kale-ext delete`` kept them;
- a cluster job: its outputs volume (``--outputs pvc:NAME``), which this machine reads where
  the claim is mounted: at the job's own mount path (a notebook server that mounts the claim
  where the job does), or where ``KALE_EXT_CLAIM_MOUNTS`` says (``NAME=/folder,OTHER=/x``). A
  job without an outputs volume kept nothing: its files went with its pods, which is said.

Loading never unpickles arbitrary objects: JSON, ``torch.load(weights_only=True)``, NumPy with
``allow_pickle=False``, CSV and text.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable
from pathlib import Path

from ..compile.resultsave import FOLDER, INFO, VALUE_JSON, VALUE_TORCH
from ..errors import JobFailed, KaleExtError, NoResult, UnsafeFile
from ..files import loads_json, read_bytes
from .base import Backend, JobInfo, OutputFile, Status

CLAIMS_ENV = "KALE_EXT_CLAIM_MOUNTS"
#: The most bytes of a result's info file read (the job wrote it: it is read as untrusted).
MAX_INFO = 64 * 1024
#: The largest output file ``outputs.load`` reads (a larger one: open it yourself).
MAX_LOAD = 4 * 2**30
#: Why a finished job has no value: its function returned None, which saves nothing.
NOTHING = "the job's function returned nothing (None)"
_LOCATION = re.compile(r"^pvc:(?P<claim>[^:]+):(?P<path>/.+)$")


def claim_mounts() -> dict[str, Path]:
    """Where this machine sees each PersistentVolumeClaim (KALE_EXT_CLAIM_MOUNTS)."""
    found = {}
    for part in os.environ.get(CLAIMS_ENV, "").split(","):
        claim, sep, folder = part.strip().partition("=")
        if sep and claim and folder:
            found[claim] = Path(folder)
    return found


def outputs_folder(backend: Backend, name: str) -> Path:
    """The folder on this machine that holds job ``name``'s outputs (NoResult says why there is
    none; NotFound for an unknown job)."""
    found = backend.outputs_place(name)
    if not found.location:
        why = f": {found.note}" if found.note else ""
        raise NoResult(f"job {name} kept no outputs to read back{why}")
    if found.listed:  # the backend lists them: a folder here
        return Path(found.location)
    m = _LOCATION.match(found.location)
    if m is None:
        raise NoResult(f"job {name}'s outputs are in {found.location}, which is not read here")
    claim, path = m["claim"], m["path"]
    root = claim_mounts().get(claim) or Path(path).parent  # where the claim is, here
    if root.is_dir():
        return root / Path(path).name
    where = f"{root} (from {CLAIMS_ENV})" if claim in claim_mounts() else root
    raise NoResult(
        f"job {name}'s outputs are on PersistentVolumeClaim {claim} ({path} in the job), which "
        f"is not mounted at {where} here: mount the claim in this notebook server at "
        f"{Path(path).parent}, or say where it is mounted with {CLAIMS_ENV}={claim}=/folder"
    )


def _result_dir(folder: Path) -> Path | None:
    """Where rank 0 saved the value: node 0's folder when the nodes' outputs were kept apart."""
    for base in (folder, folder / "node-0"):
        if os.path.lexists(base / FOLDER / INFO):  # a FIFO or a link too: read_info says why
            return base / FOLDER
    return None


def read_info(folder: Path) -> dict | None:
    """The saved value's record (saved, format, size, reason, type), checked; None: none."""
    where = _result_dir(folder)
    if where is None:
        return None
    try:
        data = loads_json(read_bytes(where / INFO, MAX_INFO, inside=folder), where / INFO)
        fmt, reason = data.get("format"), data.get("reason")
        ok = (
            isinstance(data.get("saved"), bool)
            and fmt in (None, "json", "torch")
            and isinstance(data.get("size"), int)
            and (reason is None or isinstance(reason, str))
        )
        if not ok:
            raise ValueError("a field has a wrong type")
    except (OSError, ValueError, AttributeError) as e:
        why = f"its record is unreadable: {e}"
        return {"saved": False, "format": None, "size": 0, "reason": why}
    return {
        "saved": data["saved"],
        "format": fmt,
        "size": data["size"],
        "reason": reason,
        "type": str(data.get("type", "")),
    }


def _ended(info: JobInfo) -> str:
    """`failed`, `stopped`, `cancelled`, `stopped early`, `unreadable`: as every view says."""
    return info.status_text.lower()


def summary(backend: Backend, info: JobInfo) -> dict | None:
    """The REST API's ``result`` of a job: None until it ends, then whether its value was
    saved, in which format, its size, and why not."""
    if not info.status.finished:
        return None
    none = {"saved": False, "format": None, "size": 0}
    if info.status is Status.UNREADABLE:  # nothing is known of how it ended
        return {
            **none,
            "reason": f"its record cannot be read ({info.reason}), so neither can its value",
        }
    if info.status is not Status.COMPLETE:
        return {**none, "reason": f"the job {_ended(info)}: it returned no value"}
    try:
        found = read_info(outputs_folder(backend, info.name))
    except NoResult as e:
        return {**none, "reason": str(e)}
    except KaleExtError as e:
        return {**none, "reason": f"its outputs cannot be read: {e}"}
    if found is None:
        return {**none, "reason": NOTHING}
    return {k: found[k] for k in ("saved", "format", "size", "reason")}


def failed(info: JobInfo) -> JobFailed:
    """The job's failure as the CLI heads it: who failed, the cell and line, the error."""
    if info.failure is not None:
        return JobFailed(f"job {info.name} failed: {info.failure.summary}", info.failure)
    reason = f": {info.reason}" if info.reason else ""
    if info.status is Status.UNREADABLE:
        return JobFailed(f"job {info.name}: its record cannot be read{reason}")
    return JobFailed(f"job {info.name} {_ended(info)}{reason}")


def result_of(backend: Backend, info: JobInfo):
    """The value job ``info`` returned (it has ended): JobFailed, or NoResult saying why not."""
    if info.status is not Status.COMPLETE:
        raise failed(info)
    return saved_value(backend, info.name)


def saved_value(backend: Backend, name: str):
    """The value a finished job saved, loaded (NoResult says why there is none)."""
    folder = outputs_folder(backend, name)
    found = read_info(folder)
    if found is None:
        raise NoResult(f"job {name}: {NOTHING} (none is in {folder}){_saved_files(name, folder)}")
    if not found["saved"]:
        why = found["reason"] or "its return value was not saved"
        raise NoResult(f"job {name}: {why}{_saved_files(name, folder)}")
    where = _result_dir(folder)
    path = where / (VALUE_JSON if found["format"] == "json" else VALUE_TORCH)
    try:  # its record says its size: a larger file is not the value rank 0 saved
        return load_file(path, found["size"], inside=folder)
    except UnsafeFile as e:
        raise NoResult(f"job {name}'s return value cannot be read: {e}") from None
    except OSError as e:
        raise NoResult(f"job {name}'s return value cannot be read from {path}: {e}") from None


def _saved_files(name: str, folder: Path) -> str:
    """What a job without a value saved instead, and how to load it: `; it saved
    digits_model.pt: load it with get_job("NAME").outputs.load("digits_model.pt")`."""
    files = [f.path for f in listed(folder)] if folder.is_dir() else []
    if not files:
        return ""
    shown = ", ".join(files[:5]) + (f", ... ({len(files)} files)" if len(files) > 5 else "")
    one = "it" if len(files) == 1 else "one"
    return (f"; it saved {shown}: load {one} with "
            f'get_job("{name}").outputs.load("{files[0]}")')  # fmt: skip


# -- output files ------------------------------------------------------------------------------


def _torch(path: Path, data: bytes):
    import torch

    try:
        return torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as e:  # the unpickler names what it refused, below torch's advice
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(e).splitlines()]
        said = [line for line in lines if "WeightsUnpickler error" in line] or lines[:1]
        why = said[0].removeprefix("WeightsUnpickler error: ") if said else type(e).__name__
        raise KaleExtError(
            f"{path.name} holds objects torch does not load safely (weights_only=True): {why} "
            "If you trust it: torch.load(path, weights_only=False)"
        ) from None


def _utf8(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnsafeFile(path, f"is not UTF-8 text (byte {e.start})") from None


def _json(path: Path, data: bytes):
    return loads_json(data, path)


def _jsonl(path: Path, data: bytes):
    return [loads_json(line, path) for line in _utf8(path, data).splitlines() if line.strip()]


def _csv(path: Path, data: bytes):
    text = _utf8(path, data)
    try:
        import pandas
    except ImportError:
        return list(csv.DictReader(io.StringIO(text, newline="")))
    return pandas.read_csv(io.StringIO(text))


def _npy(path: Path, data: bytes):
    import numpy

    return numpy.load(io.BytesIO(data), allow_pickle=False)


def _npz(path: Path, data: bytes):
    import numpy

    with numpy.load(io.BytesIO(data), allow_pickle=False) as found:
        return {k: found[k] for k in found.files}


def _text(path: Path, data: bytes):
    return _utf8(path, data)


#: How each kind of file loads: its ending → (what it gives, the loader).
LOADERS: dict[str, tuple[str, Callable[[Path, bytes], object]]] = {
    ".pt": ("torch.load(weights_only=True)", _torch),
    ".pth": ("torch.load(weights_only=True)", _torch),
    ".json": ("JSON data", _json),
    ".jsonl": ("a list of JSON values, one a line", _jsonl),
    ".csv": ("a pandas DataFrame (a list of dicts without pandas)", _csv),
    ".npy": ("a NumPy array", _npy),
    ".npz": ("a dict of NumPy arrays", _npz),
    ".txt": ("text", _text),
    ".log": ("text", _text),
    ".md": ("text", _text),
}


def load_file(path: Path, limit: int = MAX_LOAD, inside: Path | None = None):
    """A file loaded by its ending (LOADERS); KaleExtError for other endings. Read the one way
    (files.read_bytes: a regular file of at most ``limit`` bytes, under ``inside`` when given);
    UnsafeFile says what is wrong."""
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted(LOADERS))
        raise KaleExtError(
            f"{path.name}: kale_ext does not load {path.suffix or 'files without an ending'} "
            f"files ({known} it does): open it at {path}"
        )
    return loader[1](path, read_bytes(path, limit, inside=inside))


def hidden(path: str) -> bool:
    """Whether a listed output (a path with "/") is the saved result's, not the job's own."""
    return FOLDER in path.split("/")


def listed(folder: Path) -> list[OutputFile]:
    """The files under ``folder`` (links listed, never followed), but the saved result's."""
    files = []
    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = [d for d in sorted(dirs) if d != FOLDER]
        for entry in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, entry)
            try:
                link = os.readlink(full) if os.path.islink(full) else None
                size = 0 if link is not None else os.lstat(full).st_size
            except OSError:
                continue
            files.append(OutputFile(os.path.relpath(full, folder).replace(os.sep, "/"), size, link))
    return sorted(files, key=lambda f: f.path)
