"""Small file helpers every stage uses: the one way to read a file the user controls, atomic
writes, and where kale_ext keeps its data."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path

from .errors import StorageError, UnsafeFile

#: The deepest JSON any reader accepts (lists and objects within each other).
MAX_JSON_DEPTH = 200
#: The largest notebook read from a file (the server's own bound is KaleExtApp.max_notebook_bytes).
MAX_NOTEBOOK_BYTES = 100 * 2**20
#: The largest ignore file (.gitignore, .kaleignore) a workspace scan reads.
MAX_IGNORE_BYTES = 2**20
#: The largest record kale_ext reads back (a job's, a snapshot's, a sweep's, panel state).
MAX_RECORD_BYTES = 16 * 2**20


def _inside(path: Path, inside: Path | str) -> Path:
    """``path`` with its links resolved, refused unless it lies under ``inside`` (resolved)."""
    base = Path(os.path.realpath(inside))
    real = Path(os.path.realpath(path))
    if real != base and base not in real.parents:
        raise UnsafeFile(path, f"leads outside {base} (to {real})", 403)
    return real


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a directory" if stat.S_ISDIR(mode) else "a socket"


def open_regular(path: Path | str, *, inside: Path | str | None = None, limit: int | None = None):
    """``path`` opened for reading in binary, once it is known to be a regular file (checked on
    the opened descriptor; opened with O_NONBLOCK, so a FIFO cannot block the open), its links
    resolved and kept under ``inside`` when given, at most ``limit`` bytes when given (checked
    here; read_bytes also enforces it while reading). UnsafeFile (an OSError) says what is
    wrong; a missing file is FileNotFoundError."""
    real = _inside(Path(path), inside) if inside is not None else path
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(path, f"is not a regular file ({_kind(info.st_mode)})")
        if limit is not None and info.st_size > limit:
            raise UnsafeFile(path, f"is {info.st_size:,} bytes; the limit is {limit:,} bytes", 413)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path | str, limit: int, *, inside: Path | str | None = None) -> bytes:
    """The bytes of ``path``, read the one way every file the user controls is read (the
    server, the CLI and the job side): a regular file only (open_regular), at most ``limit``
    bytes, checked before reading and enforced while reading (a file that grows is refused
    too). UnsafeFile (an OSError) says what is wrong; a missing file is FileNotFoundError."""
    limit = max(limit, 0)
    with open_regular(path, inside=inside, limit=limit) as f:
        # as much as the file holds, not the bound: a buffer is never the bound's size
        size = os.fstat(f.fileno()).st_size
        data = f.read(size + 1)
        while size < len(data) <= limit and (more := f.read(min(1 << 20, limit + 1 - len(data)))):
            data += more  # it grew since: read on, to the bound
    if len(data) > limit:
        raise UnsafeFile(path, f"is over {limit:,} bytes, the limit (it grew)", 413)
    return data


def read_text(path: Path | str, limit: int, *, inside: Path | str | None = None,
              errors: str = "strict") -> str:  # fmt: skip
    """read_bytes as UTF-8 text (UnsafeFile when it is not UTF-8 and ``errors`` is strict)."""
    data = read_bytes(path, limit, inside=inside)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise UnsafeFile(path, f"is not UTF-8 text (byte {e.start})") from None


def json_depth_ok(value, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` nests lists and dicts at most ``limit`` deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        if depth > limit:
            return False
        stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


def loads_json(text: str | bytes, name: Path | str, depth: int = MAX_JSON_DEPTH):
    """``text`` parsed as JSON, nested at most ``depth`` deep; UnsafeFile naming ``name``
    otherwise (not JSON, or too deep)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise UnsafeFile(name, f"is JSON nested deeper than {depth} levels") from None
    except ValueError as e:
        why = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
        raise UnsafeFile(name, f"is not valid JSON: {why}") from None
    if not json_depth_ok(value, depth):
        raise UnsafeFile(name, f"is JSON nested deeper than {depth} levels")
    return value


def read_json(path: Path | str, limit: int, *, inside: Path | str | None = None,
              depth: int = MAX_JSON_DEPTH):  # fmt: skip
    """read_bytes parsed as JSON, nested at most ``depth`` deep (UnsafeFile otherwise)."""
    return loads_json(read_bytes(path, limit, inside=inside), path, depth)


def umask() -> int:
    """The process's umask (read where the system shows it; else set and put back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: What a write that failed for its folder's sake says: errno -> what the folder is.
_STORAGE = {errno.ENOSPC: "full (no space left on the device)", errno.EDQUOT: "over its quota",
            errno.EROFS: "on a read-only file system", errno.EACCES: "not writable",
            errno.EPERM: "not writable"}  # fmt: skip


def storage_error(e: BaseException, folder: Path | str | None = None) -> StorageError | None:
    """The StorageError (507, naming the folder) for a write that failed because its folder is
    full, over quota or read-only; None for another error."""
    if not isinstance(e, OSError) or isinstance(e, UnsafeFile) or e.errno not in _STORAGE:
        return None
    where = folder if folder is not None else (Path(e.filename).parent if e.filename else "?")
    return StorageError(f"cannot write to {where}: the folder is {_STORAGE[e.errno]}", 507,
                        "InsufficientStorage")  # fmt: skip


def private_folder(folder: Path) -> Path:
    """``folder`` made (with its parents) and kept 0700: it holds values the user typed."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if stat.S_IMODE(folder.stat().st_mode) != 0o700:
        os.chmod(folder, 0o700)
    return folder


def write_atomic(path: Path, text: str, private: bool = False) -> None:
    """Write ``text`` to ``path`` all at once: readers never see a half-written file. The file
    gets the mode any new file gets (0666 less the umask), not the temporary file's 0600; a
    ``private`` one (values the user typed: panel state, env, parameters) 0600 in a 0700
    folder. A full or read-only folder is a StorageError naming it."""
    try:
        if private:
            private_folder(path.parent)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise (storage_error(e, path.parent) or e) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            os.fchmod(f.fileno(), 0o600 if private else 0o666 & ~umask())
            f.flush()
            os.fsync(f.fileno())  # on disk before it takes the name: a crash leaves old or new
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        found = storage_error(e, path.parent)
        if found is not None:
            raise found from None
        raise


#: The file that marks a folder as the local backend's jobs folder: a workspace that holds it
#: leaves it out (its records, logs and snapshots are no job's files).
JOBS_MARK = ".kale_ext-jobs"


def mark_jobs_dir(folder: Path) -> None:
    """Mark ``folder`` (that exists) as a jobs folder, once; a folder that cannot be written is
    left as it is."""
    mark = folder / JOBS_MARK
    if not mark.exists():
        try:
            mark.write_text("kale_ext's local jobs: never shipped in a workspace\n")
        except OSError:
            pass


def jobs_dir() -> Path:
    """The local backend's jobs: KALE_EXT_JOBS_DIR, else <jupyter data dir>/kale_ext/jobs."""
    if os.environ.get("KALE_EXT_JOBS_DIR"):
        return Path(os.environ["KALE_EXT_JOBS_DIR"])
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "kale_ext" / "jobs"
