"""A request's notebook: a path under the server root (checked: no escape, no hidden file
unless allowed, a real .ipynb), or its JSON with a path that names it."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from .base import ApiError

_ENCODED = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)


def _not_encoded(path: str) -> None:
    """A path is plain text: an encoded dot or separator (`..%2f..%2fetc`) is refused as such."""
    found = _ENCODED.search(path)
    if found:
        what = "dot" if found.group(1).lower() == "2e" else "separator"
        said = f"path {path!r} holds {found.group(0)}, an URL-encoded {what}"
        raise ApiError(400, f"{said}: give it as plain text, relative to the server root",
                       field="path")  # fmt: skip


def resolve_notebook(root: str, path, allow_hidden: bool) -> Path:
    """The notebook file ``path`` names under ``root`` (blocking: it touches the file system).

    Absolute paths are a 400; `..`, and symbolic links that lead outside the root, a 403; hidden
    files a 403 unless the contents manager allows them; a missing file a 404."""
    if not isinstance(path, str) or not path.strip():
        raise ApiError(400, "path must be a non-empty string", field="path")
    if "\x00" in path or len(path) > 4096:
        raise ApiError(400, "path is not a valid file path", field="path")
    _not_encoded(path)
    if path.startswith(("/", "\\", "~")) or PureWindowsPath(path).is_absolute():
        raise ApiError(400, f"path must be relative to the server root, not {path!r}", field="path")
    parts = PurePosixPath(path).parts
    if ".." in parts:
        raise ApiError(403, f"path {path!r} leads outside the server root", field="path")
    if not allow_hidden and any(p.startswith(".") for p in parts):
        raise ApiError(
            403,
            f"path {path!r} is hidden: hidden files are not served "
            "(ContentsManager.allow_hidden is off)",
            field="path",
        )
    base = Path(root).resolve()
    full = (base / path).resolve()
    if full != base and base not in full.parents:
        raise ApiError(
            403, f"path {path!r} leads outside the server root (a symbolic link)", field="path"
        )
    if not full.exists():
        raise ApiError(404, f"notebook not found: {path}", "NotFound", field="path")
    if full.is_dir():
        raise ApiError(400, f"{path} is a directory, not a notebook", field="path")
    if full.suffix != ".ipynb":
        raise ApiError(400, f"{path} is not a notebook (.ipynb file)", field="path")
    return full


def read_notebook_bytes(root: str, path, allow_hidden: bool, limit: int | None = None) -> bytes:
    """The notebook's bytes, once it is known to be a regular file of at most ``limit`` bytes
    (a FIFO, a device or a larger file is refused before anything is read)."""
    full = resolve_notebook(root, path, allow_hidden)
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then says what it is
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ApiError(403, f"cannot read {path}: {e.strerror}", field="path") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ApiError(400, f"{path} is not a regular file (a pipe, socket or device is "
                           "not a notebook)", field="path")  # fmt: skip
        if limit is not None and info.st_size > limit:
            raise ApiError(413, f"{path} is {info.st_size:,} bytes; the limit is {limit:,} bytes "
                           "(KaleExtApp.max_notebook_bytes)", field="path")  # fmt: skip
        os.set_blocking(fd, True)
        try:
            data = f.read(limit + 1 if limit is not None else -1)
        except OSError as e:
            raise ApiError(403, f"cannot read {path}: {e.strerror}", field="path") from None
    if limit is not None and len(data) > limit:  # it grew since
        raise ApiError(413, f"{path} is over {limit:,} bytes, the limit "
                       "(KaleExtApp.max_notebook_bytes)", field="path")  # fmt: skip
    return data


def relative_path(path) -> str:
    """A path under the server root, checked as text (the notebook's content came as JSON)."""
    if not isinstance(path, str) or not path.strip():
        raise ApiError(400, "path must be a non-empty string", field="path")
    _not_encoded(path)
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("\\"):
        raise ApiError(400, f"path must be relative to the server root, not {path!r}", field="path")
    if ".." in pure.parts:
        raise ApiError(403, f"path {path!r} leads outside the server root", field="path")
    return path
