"""A workspace packed for travel: a deterministic tar.gz (entries sorted, fixed mtimes and
modes, no owner names, gzip without a timestamp), so the same files give the same bytes and the
same content hash everywhere; split into parts that fit a ConfigMap each.

Packing is cached on disk by the files' listing and stamps (size, mtime, inode, ctime): an
unchanged workspace costs a walk of its folder and one look-up, not a re-read.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import tarfile
import tempfile
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..files import read_bytes

if TYPE_CHECKING:  # a workspace packs itself (Workspace.packed): packing only names its type
    from .workspace import Workspace

FORMAT = 2  # bump when the archive's layout changes (the cache keys on it)
MTIME = 1_577_836_800  # 2020-01-01T00:00:00Z: every entry's time
PART_SIZE = 1_000_000  # bytes of archive per ConfigMap (its limit is 1 MiB of data)
PART = "part-{:03d}"  # the key (and file name) of each part
CACHE_KEEP = 32  # packed workspaces kept in the cache


@dataclass(frozen=True)
class Packed:
    sha256: str  # of the archive's bytes: the workspace's content hash
    size: int  # bytes of archive
    path: Path  # the archive in the cache

    @property
    def parts(self) -> int:
        return max(1, -(-self.size // PART_SIZE))

    def part_sizes(self) -> list[int]:
        return [min(PART_SIZE, self.size - i * PART_SIZE) for i in range(self.parts)]

    def data(self) -> bytes:
        return self.path.read_bytes()

    def split(self) -> dict[str, bytes]:
        """The archive's parts by key (`part-000`, ...); joined in key order they are the
        archive."""
        data, n = self.data(), PART_SIZE
        return {PART.format(i): data[i * n : (i + 1) * n] for i in range(self.parts)}


def cache_dir() -> Path:
    """KALE_EXT_CACHE_DIR/workspaces, else the user's cache folder (XDG_CACHE_HOME)."""
    base = os.environ.get("KALE_EXT_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "kale_ext")
    return Path(base) / "workspaces"


def signature(ws: Workspace) -> str:
    """What the cache keys on: the listing with each file's stamp."""
    listing = [(f.path, f.size, f.mode, f.link, f.stamp) for f in ws.files]
    text = json.dumps([FORMAT, str(ws.root), listing], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def pack(ws: Workspace) -> Packed:
    """The workspace's archive: from the cache when its files are unchanged, else built."""
    folder = cache_dir()
    key = signature(ws)
    archive, meta = folder / f"{key}.tar.gz", folder / f"{key}.json"
    try:
        known = json.loads(meta.read_text())
        if archive.stat().st_size == known["size"]:
            return Packed(known["sha256"], known["size"], archive)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    data = archive_bytes(ws)
    packed = Packed(hashlib.sha256(data).hexdigest(), len(data), archive)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(archive, data)
        _write(meta, json.dumps({"sha256": packed.sha256, "size": packed.size}).encode())
        _trim(folder)
    except OSError:  # no cache (read-only home): keep the archive in a temporary file
        fd, tmp = tempfile.mkstemp(prefix="kale_ext-workspace-", suffix=".tar.gz")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        packed = Packed(packed.sha256, packed.size, Path(tmp))
    return packed


def archive_bytes(ws: Workspace) -> bytes:
    """The deterministic tar.gz of the workspace's files. The tar is built here while another
    thread compresses what is built so far (zlib lets go of the GIL): the two overlap as
    `tar czf`'s two processes do."""
    with _Gzip() as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for f in ws.files:
            info = tarfile.TarInfo(f.path.rstrip("/"))
            info.mtime, info.mode, info.uid, info.gid = MTIME, f.mode, 0, 0
            info.uname = info.gname = ""
            if f.is_dir:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif f.link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, f.link
                tar.addfile(info)
            else:
                content = _read(ws.root, f.path, ws.max_size)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return gz.data


class _Gzip:
    """A file object that gzips what is written to it (level 6, no name, no timestamp: the
    same bytes each time), a chunk at a time in one worker thread, in order."""

    CHUNK = 1 << 20

    def __init__(self):
        self._deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        self._crc = self._size = 0
        self._buf = bytearray()
        self._written = 0
        self._parts: list[Future] = []
        self.data = b""  # the gzip, once closed
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kale-ext-gzip")

    def tell(self) -> int:
        return self._written

    def write(self, data) -> int:
        self._buf += data
        self._written += len(data)
        if len(self._buf) >= self.CHUNK:
            self._send()
        return len(data)

    def _send(self) -> None:
        chunk, self._buf = bytes(self._buf), bytearray()
        self._parts.append(self._worker.submit(self._compress, chunk))

    def _compress(self, chunk: bytes) -> bytes:
        self._crc = zlib.crc32(chunk, self._crc)
        self._size += len(chunk)
        return self._deflate.compress(chunk)

    def __enter__(self) -> _Gzip:
        return self

    def __exit__(self, kind, *_) -> None:
        """Closed after the tar (which writes its end on closing): the whole gzip in
        :attr:`data`. Its worker ends either way (also when a file cannot be read)."""
        try:
            if kind is None:
                self._send()
                body = b"".join(part.result() for part in self._parts)
                header = struct.pack("<BBBBLBB", 0x1F, 0x8B, 8, 0, 0, 0, 255)  # mtime 0, OS unknown
                trailer = struct.pack("<LL", self._crc, self._size & 0xFFFFFFFF)
                self.data = header + body + self._deflate.flush() + trailer
        finally:
            self._worker.shutdown(cancel_futures=True)


def _read(root: Path, rel: str, limit: int) -> bytes:
    try:
        return read_bytes(root / rel, limit)
    except OSError as e:
        raise ConfigError("workspace", f"cannot read {rel}: {e.strerror}") from None


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _trim(folder: Path) -> None:
    """Keep the newest CACHE_KEEP archives."""

    def age(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # another process trimmed it meanwhile
            return 0.0

    archives = sorted(folder.glob("*.tar.gz"), key=age, reverse=True)
    for old in archives[CACHE_KEEP:]:
        old.unlink(missing_ok=True)
        old.with_name(old.name.replace(".tar.gz", ".json")).unlink(missing_ok=True)
