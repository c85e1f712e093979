"""The workspace: the files a job gets as its working directory (the notebook's folder, by
default), filtered and capped.

Left out: what `.gitignore` and `.kaleignore` files exclude (git's own matching rules, through
``pathspec``; an ignore file applies to its folder and below, a deeper one wins), hidden files
and folders, virtualenvs, ``__pycache__``, the notebook's ``outputs/`` folder and the local
backend's jobs folder (marked by ``files.JOBS_MARK``, wherever KALE_EXT_JOBS_DIR puts it). Symbolic
links that lead out of the workspace, and files that cannot be read, are skipped and reported;
links inside it travel as links. A workspace over the size cap is refused with its largest
files named. Packing (deterministic tar.gz) is in ``packing.py``.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..files import JOBS_MARK, MAX_IGNORE_BYTES, read_text

MAX_SIZE = 10 * 2**20  # bytes of files, before compression
MAX_ENTRIES = 20_000  # files and folders looked at: a home directory is not a workspace
IGNORE_FILES = (".gitignore", ".kaleignore")
OUTPUTS = "outputs"  # beside the notebook: a job's outputs (never shipped)
LARGEST = 5


@dataclass(frozen=True)
class WorkspaceFile:
    path: str  # relative, with "/"
    size: int
    mode: int  # 0o644, or 0o755 for an executable file
    link: str | None = None  # a symbolic link's (relative) target inside the workspace
    stamp: tuple = ()  # (mtime_ns, inode, ctime_ns): what the hash cache compares

    @property
    def is_dir(self) -> bool:
        return self.path.endswith("/")


@dataclass
class Workspace:
    """A folder's files that travel with a job (``files``: sorted, folders end with "/")."""

    root: Path
    files: list[WorkspaceFile]
    excluded: int = 0  # files and folders left out by the rules above
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    max_size: int = MAX_SIZE
    _packed: object = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def count(self) -> int:
        return sum(1 for f in self.files if not f.is_dir)

    def largest(self, n: int = LARGEST) -> list[WorkspaceFile]:
        regular = [f for f in self.files if not f.is_dir and f.link is None]
        return sorted(regular, key=lambda f: (-f.size, f.path))[:n]

    @property
    def modules(self) -> list[str]:
        """Top-level modules and packages a job can import from here (`helpers.py`,
        `mylib/__init__.py`)."""
        found = set()
        for f in self.files:
            top, sep, rest = f.path.partition("/")
            if not sep and top.endswith(".py"):
                found.add(top[:-3])
            elif rest == "__init__.py":
                found.add(top)
        return sorted(m for m in found if m.isidentifier())

    def packed(self):
        """The workspace packed (packing.Packed), once."""
        if self._packed is None:
            from .packing import pack

            self._packed = pack(self)
        return self._packed

    def warnings(self) -> list[str]:
        return [f"workspace: {path} is not shipped: {why}" for path, why in self.skipped]

    def summary(self, root_label: str | None = None, listed: int = 1000) -> dict:
        """What the preview shows: counts, size, the largest files, what was skipped, and the
        list of files (the first ``listed``)."""
        files = [f for f in self.files if not f.is_dir]
        return {
            "root": root_label if root_label is not None else str(self.root),
            "files": len(files),
            "size": self.size,
            "max_size": self.max_size,
            "excluded": self.excluded,
            "largest": [{"path": f.path, "size": f.size} for f in self.largest()],
            "skipped": [{"path": p, "reason": why} for p, why in self.skipped],
            "modules": self.modules,
            "list": [{"path": f.path, "size": f.size} for f in files[:listed]],
            "list_truncated": len(files) > listed,
        }


def size_text(n: float) -> str:
    """Bytes for people: 512 B, 3.4 KiB, 12.0 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# ----- the rules -------------------------------------------------------------------------------


def _left_out_whole(entries: list[os.DirEntry]) -> bool:
    """A folder with these entries is a virtualenv (pyvenv.cfg), a conda environment or the
    local backend's jobs folder."""
    for e in entries:
        if e.name in ("pyvenv.cfg", JOBS_MARK) or (e.name == "conda-meta" and e.is_dir()):
            return True
    return False


def _default_excluded(name: str, is_dir: bool) -> bool:
    if name.startswith("."):
        return True  # hidden files and folders: .git, .ipynb_checkpoints, .kale_ext, .env
    return is_dir and name == "__pycache__"


class _Spec:
    """An ignore file's rules, with the answers they gave: an unchanged folder asks the same
    questions on every collect (the hash cache's look-up walks it again). Bounded: at most a
    workspace's worth of answers each, for at most SPECS_KEPT rule sets."""

    MAX_KNOWN = MAX_ENTRIES

    def __init__(self, lines: tuple[str, ...]):
        from pathspec import GitIgnoreSpec

        self.spec = GitIgnoreSpec.from_lines(lines)
        self.known: dict[str, bool | None] = {}

    def check(self, path: str) -> bool | None:
        """True: excluded, False: included again (a `!` rule), None: no rule says."""
        try:
            return self.known[path]
        except KeyError:
            pass
        if len(self.known) >= self.MAX_KNOWN:
            self.known.clear()
        answer = self.known[path] = self.spec.check_file(path).include
        return answer


SPECS_KEPT = 16


@functools.lru_cache(maxsize=SPECS_KEPT)
def _spec(lines: tuple[str, ...]) -> _Spec:
    return _Spec(lines)


class _Rules:
    """The ignore files seen on the way down: (folder prefix, spec), deepest last."""

    def __init__(self, root: Path | None = None):
        self.specs: list[tuple[str, _Spec]] = []
        self.root = root  # an ignore file is read only from under it (a link out is refused)

    def read(self, folder: str, prefix: str, names: set[str], skipped: list) -> int:
        """Add the ignore files among ``names`` in ``folder`` (``prefix``: its relative path
        + "/" or "")."""
        lines: list[str] = []
        for name in IGNORE_FILES:
            if name not in names:
                continue
            try:
                path = os.path.join(folder, name)
                lines += read_text(
                    path, MAX_IGNORE_BYTES, inside=self.root, errors="replace"
                ).splitlines()
            except FileNotFoundError:
                continue
            except OSError as e:
                skipped.append((prefix + name, f"cannot be read ({e.strerror}): its rules apply "
                                "nowhere"))  # fmt: skip
        if lines:
            self.specs.append((prefix, _spec(tuple(lines))))
        return 1 if lines else 0

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for prefix, spec in reversed(self.specs):
            if not rel.startswith(prefix):
                continue
            result = spec.check(rel[len(prefix) :] + ("/" if is_dir else ""))
            if result is not None:
                return result
        return False


# ----- which folder ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a notebook lives, as far as its files go. ``folder``: the notebook's folder (the
    default workspace; outputs go beside it; None for a notebook without a file). ``base``:
    where a relative folder named in the options is read from (the caller's working directory;
    default ``folder``). ``confine``: a folder every chosen folder must lie under (the server
    root), or None."""

    folder: Path | None = None
    base: Path | None = None
    confine: Path | None = None

    @classmethod
    def of(cls, notebook_path, base=None, confine=None) -> Place:
        folder = Path(notebook_path).resolve().parent if notebook_path is not None else None
        return cls(folder, Path(base) if base else None, Path(confine) if confine else None)


def choose(options, kale_metadata, place: Place) -> Workspace | None:
    """The workspace a job asks for, collected (its size is checked later, by build_job_spec).

    ``options``: the submit's (a dict or JobOptions), over the notebook's metadata
    (``metadata.kale_ext.options``). `no_workspace`: none. `workspace`: that folder, relative
    to ``place.base`` (for the notebook's metadata: to its folder, and never absolute), under
    ``place.confine``. Else the notebook's folder (none without one).
    """
    folder, base, confine = place.folder, place.base, place.confine
    from .k8s_values import quantity, quantity_value
    from .options import JobOptions

    explicit = JobOptions.from_dict(options)
    meta = kale_metadata if isinstance(kale_metadata, dict) else {}
    stored = JobOptions.from_dict(meta.get("options"), "metadata.kale_ext.options")
    o = explicit.over(stored)
    if o.no_workspace:
        return None
    if explicit.workspace is not None:
        root = Path(base or folder or ".") / explicit.workspace
    elif stored.workspace is not None:
        if Path(stored.workspace).is_absolute() or folder is None:
            raise ConfigError(
                "metadata.kale_ext.options.workspace",
                "must be a folder relative to the notebook's, not an absolute path",
            )
        root = Path(folder) / stored.workspace
    elif folder is not None and Path(folder).is_dir():
        root = Path(folder)
    else:  # no file (or an unsaved one, in a folder not made yet): nothing to ship
        return None
    root = root.resolve()
    if confine is not None and not _under(root, Path(confine).resolve()):
        raise ConfigError("workspace", f"{o.workspace} leads outside the server root")
    limit = MAX_SIZE
    if o.workspace_max_size is not None:
        limit = int(quantity_value(quantity(o.workspace_max_size, "workspace_max_size")))
    outputs = Path(folder).resolve() / OUTPUTS if folder is not None else None
    exclude = (str(outputs.relative_to(root)),) if outputs and _under(outputs, root) else ()
    return collect(root, limit, exclude, check_size=False)


def modules_beside(folder: str | os.PathLike | None) -> list[str]:
    """The modules and packages at the top of ``folder`` (what `import` would find there)."""
    if folder is None:
        return []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = {e.name[:-3] for e in entries if e.name.endswith(".py") and e.is_file()}
    found |= {e.name for e in entries if os.path.isfile(os.path.join(e.path, "__init__.py"))}
    return sorted(m for m in found if m.isidentifier())


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# ----- collecting ------------------------------------------------------------------------------


def collect(
    root: str | os.PathLike,
    max_size: int = MAX_SIZE,
    exclude: tuple[str, ...] = (),
    check_size: bool = True,
) -> Workspace:
    """The workspace of folder ``root``. ``exclude``: relative folders left out too (the
    outputs folder). Raises ConfigError (on `workspace`) when the folder cannot be read, holds
    too many entries, or its files exceed ``max_size`` bytes (unless ``check_size`` is off)."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise ConfigError("workspace", f"{root} is not a folder")
    ws = Workspace(root=base, files=[], max_size=max_size)
    rules = _Rules(base)
    seen = [0]
    _walk(str(base), "", ws, rules, {e.strip("/") for e in exclude}, seen)
    ws.files.sort(key=lambda f: f.path)
    if check_size and ws.size > max_size:
        raise ConfigError("workspace", too_big(ws))
    return ws


def _walk(folder: str, prefix: str, ws: Workspace, rules: _Rules, exclude: set, seen: list) -> bool:
    """Add the files of ``folder`` (relative ``prefix``); False when it is left out whole (a
    virtualenv or the jobs folder, below the workspace's top)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        ws.skipped.append((prefix or ".", f"cannot be read ({e.strerror})"))
        return True
    if prefix and _left_out_whole(entries):
        return False
    added = rules.read(folder, prefix, {e.name for e in entries}, ws.skipped)
    for entry in entries:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES:
            raise ConfigError(
                "workspace",
                f"{ws.root} holds more than {MAX_ENTRIES:,} files and folders: pick a smaller "
                "folder with --workspace DIR, exclude folders in .kaleignore, or ship nothing "
                "with --no-workspace",
            )
        rel = prefix + entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = not is_link and entry.is_dir(follow_symlinks=False)
        except OSError as e:
            ws.skipped.append((rel, f"cannot be read ({e.strerror})"))
            continue
        if rel in exclude or _default_excluded(entry.name, is_dir) or rules.ignored(rel, is_dir):
            ws.excluded += 1
        elif is_link:
            _link(entry, rel, ws)
        elif not is_dir:
            _file(entry, rel, ws)
        elif _walk(entry.path, rel + "/", ws, rules, exclude, seen):
            ws.files.append(WorkspaceFile(rel + "/", 0, 0o755))
        else:
            ws.excluded += 1
    if added:
        rules.specs.pop()
    return True


def _file(entry: os.DirEntry, rel: str, ws: Workspace) -> None:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as e:
        ws.skipped.append((rel, f"cannot be read ({e.strerror})"))
        return
    if not stat.S_ISREG(st.st_mode):
        ws.skipped.append((rel, "not a regular file (a pipe, socket or device)"))
        return
    if not os.access(entry.path, os.R_OK):
        ws.skipped.append((rel, "cannot be read (permission denied)"))
        return
    mode = 0o755 if st.st_mode & stat.S_IXUSR else 0o644
    ws.files.append(WorkspaceFile(rel, st.st_size, mode, None, (st.st_mtime_ns, st.st_ino,
                                                                st.st_ctime_ns)))  # fmt: skip


def _link(entry: os.DirEntry, rel: str, ws: Workspace) -> None:
    """A link inside the workspace travels as a link; one leading out is never followed."""
    try:
        target = os.readlink(entry.path)
    except OSError as e:
        ws.skipped.append((rel, f"cannot be read ({e.strerror})"))
        return
    resolved = Path(os.path.realpath(entry.path))
    if not _under(resolved, ws.root):
        ws.skipped.append((rel, f"a symbolic link to {target}, outside the workspace"))
        return
    if not resolved.exists():
        ws.skipped.append((rel, f"a broken symbolic link (to {target})"))
        return
    relative = os.path.relpath(resolved, Path(entry.path).parent.resolve())
    ws.files.append(WorkspaceFile(rel, 0, 0o777, relative.replace(os.sep, "/")))


def too_big(ws: Workspace) -> str:
    largest = ", ".join(f"{f.path} ({size_text(f.size)})" for f in ws.largest())
    return (
        f"{ws.root} holds {size_text(ws.size)} of files, more than the "
        f"{size_text(ws.max_size)} a job ships; the largest: {largest}. Exclude them in "
        ".kaleignore (git's .gitignore syntax), mount big data as a volume instead (--volume "
        "pvc:NAME:/mount), raise the cap (--workspace-max-size), or ship nothing "
        "(--no-workspace)"
    )
