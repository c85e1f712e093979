"""A request's notebook: a path under the server root (checked: no escape, no hidden file
unless allowed, a real .ipynb), or its JSON with a path that names it."""

from __future__ import annotations

import re
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
    if not full.is_file():
        raise ApiError(400, f"{path} is not a regular file (a pipe, socket or device is not a "
                       "notebook)", field="path")  # fmt: skip
    if full.suffix != ".ipynb":
        raise ApiError(400, f"{path} is not a notebook (.ipynb file)", field="path")
    return full


def read_notebook_bytes(root: str, path, allow_hidden: bool, limit: int | None = None) -> bytes:
    """The notebook's bytes, once it is known to be a regular file of at most ``limit`` bytes
    (a FIFO, a device or a larger file is refused before anything is read)."""
    from ..errors import UnsafeFile
    from ..files import MAX_NOTEBOOK_BYTES, read_bytes

    full = resolve_notebook(root, path, allow_hidden)
    try:
        return read_bytes(full, limit if limit is not None else MAX_NOTEBOOK_BYTES, inside=root)
    except UnsafeFile as e:
        said = f"{path}: {e.why}" + (" (KaleExtApp.max_notebook_bytes)" if e.status == 413 else "")
        raise ApiError(e.status, said, field="path") from None
    except OSError as e:
        raise ApiError(403, f"cannot read {path}: {e.strerror}", field="path") from None


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


def under_root(location: str, root: str, allow_hidden: bool) -> str | None:
    """``location`` (a folder on this machine) as a path relative to the server root, where
    Jupyter serves its files (`files/<path>`), or None: empty, outside the root (a symbolic link
    leading out counts as outside), or hidden when hidden files are not served (blocking: it
    resolves links)."""
    if not location:
        return None
    try:
        base = Path(root).resolve()
        relative = Path(location).resolve().relative_to(base)
    except (OSError, ValueError, RuntimeError):  # outside the root; a loop of links
        return None
    parts = relative.parts
    if not allow_hidden and any(p.startswith(".") for p in parts):
        return None
    return PurePosixPath(*parts).as_posix() if parts else ""
