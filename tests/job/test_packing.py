"""Packing a workspace: deterministic bytes, a content hash, parts that fit ConfigMaps, a cache."""

from __future__ import annotations

import gzip
import io
import os
import random
import subprocess
import tarfile
import threading

import pytest

from kale_ext.errors import ConfigError
from kale_ext.job import packing
from kale_ext.job.packing import MTIME, PART_SIZE, pack
from kale_ext.job.workspace import collect
from tests.job.test_workspace import tree


def members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getmembers()


def test_the_same_files_pack_to_the_same_bytes_anywhere(tmp_path):
    files = {"b.py": "print(1)\n", "a/data.csv": "x,y\n1,2\n", "a/z.txt": "z"}
    one, two = tree(tmp_path / "one", files), tree(tmp_path / "two", files)
    os.utime(two / "b.py", (1, 1))  # times and places differ; contents do not
    assert packing.archive_bytes(collect(one)) == packing.archive_bytes(collect(two))
    assert pack(collect(one)).sha256 == pack(collect(two)).sha256


def test_entries_are_sorted_with_fixed_times_and_no_owners(tmp_path):
    tree(tmp_path, {"b.py": "1", "a/x": "2", "run.sh": "3"})
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "link.py").symlink_to("b.py")
    found = members(pack(collect(tmp_path)).data())
    assert [m.name for m in found] == ["a", "a/x", "b.py", "link.py", "run.sh"]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in found} == {(MTIME, 0, 0, "", "")}
    assert [oct(m.mode) for m in found if m.isfile()] == ["0o644", "0o644", "0o755"]
    assert [m.linkname for m in found if m.issym()] == ["b.py"]


def test_a_big_archive_travels_in_parts_that_join_back(tmp_path):
    rng = random.Random(7)  # incompressible, so the archive needs three parts
    tree(tmp_path, {"weights.bin": rng.randbytes(int(2.5 * PART_SIZE))})
    packed = pack(collect(tmp_path, max_size=10 * PART_SIZE))
    parts = packed.split()
    assert list(parts) == ["part-000", "part-001", "part-002"] and packed.parts == 3
    assert [len(p) for p in parts.values()] == packed.part_sizes()
    assert max(packed.part_sizes()) == PART_SIZE
    assert b"".join(parts.values()) == packed.data()


def test_an_unchanged_workspace_comes_from_the_cache_and_a_change_repacks(tmp_path):
    root = tree(tmp_path / "ws", {"a.py": "x = 1\n"})
    first = pack(collect(root))
    again = pack(collect(root))
    assert again == first  # the same archive file, not packed again
    assert len(list(packing.cache_dir().glob("*.tar.gz"))) == 1
    (root / "a.py").write_text("x = 2\n")
    changed = pack(collect(root))
    assert changed.sha256 != first.sha256
    assert len(list(packing.cache_dir().glob("*.tar.gz"))) == 2


def test_without_a_writable_cache_it_still_packs(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("KALE_EXT_CACHE_DIR", str(blocker))
    packed = pack(collect(tree(tmp_path / "ws", {"a.py": "1"})))
    assert [m.name for m in members(packed.data())] == ["a.py"]
    packed.path.unlink()


def test_the_cache_keeps_the_newest_archives(tmp_path, monkeypatch):
    monkeypatch.setattr(packing, "CACHE_KEEP", 2)
    root = tmp_path / "ws"
    for i in range(4):
        tree(root, {"a.py": f"x = {i}\n"})
        pack(collect(root))
    assert len(list(packing.cache_dir().glob("*.tar.gz"))) == 2
    assert len(list(packing.cache_dir().glob("*.json"))) == 2


def test_an_archive_of_many_chunks_is_one_gzip_that_tar_reads_back_byte_identical(tmp_path):
    rng = random.Random(3)  # text and random bytes over several of the compressor's chunks
    files = {f"d{i % 3}/f{i}.py": "".join(rng.choice("abc \n") for _ in range(40_000))
             for i in range(60)}  # fmt: skip
    files["w.bin"] = rng.randbytes(3 * packing._Gzip.CHUNK)
    root = tree(tmp_path / "ws", files)
    data = packing.archive_bytes(collect(root, max_size=20 * 2**20))
    assert data == packing.archive_bytes(collect(root, max_size=20 * 2**20))
    assert gzip.decompress(data)  # its CRC and length check out
    (tmp_path / "ws.tar.gz").write_bytes(data)
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["tar", "xzf", str(tmp_path / "ws.tar.gz"), "-C", str(out)], check=True)
    for name in files:
        assert (out / name).read_bytes() == (root / name).read_bytes(), name


def test_a_file_that_cannot_be_read_is_named_and_leaves_no_thread_behind(tmp_path, monkeypatch):
    big = random.Random(1).randbytes(packing._Gzip.CHUNK + 1)  # its worker is at work
    root = tree(tmp_path / "ws", {"a.bin": big, "b.py": "2"})
    ws = collect(root)
    real = packing._read

    def failing(base, rel, limit):
        if rel == "b.py":
            raise ConfigError("workspace", "cannot read b.py: Permission denied")
        return real(base, rel, limit)

    monkeypatch.setattr(packing, "_read", failing)
    with pytest.raises(ConfigError, match="cannot read b.py"):
        packing.archive_bytes(ws)
    assert not [t for t in threading.enumerate() if t.name.startswith("kale-ext-gzip")]
