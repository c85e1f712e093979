"""Shipping a workspace, in one run, as ratios against a baseline measured beside it.

    python benchmarks/workspace.py [--repeat 5] [--files 2000] [--mib 5] [--smoke]

1. Packing a 5 MiB, 2,000-file workspace (collecting it with its ignore rules, then the
   deterministic tar.gz) against `tar czf` of the same files. Target ≤ 1.5×.
2. An unchanged workspace: collecting it again and finding its archive in the hash cache.
   Target ≤ 50 ms.
3. The same workspace changed by one file: packed again (what a real edit costs).

``--smoke``: 40 files, 0.25 MiB, once (benchmarks/smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import SMOKE, best  # noqa: E402

from kale_ext.job.packing import archive_bytes, pack  # noqa: E402
from kale_ext.job.workspace import collect  # noqa: E402

WORDS = ("epoch loss accuracy model data batch tensor rank node train test value "
         "import def return class self torch numpy").split()  # fmt: skip


def make_workspace(root: Path, files: int, total: int) -> None:
    """``files`` files over a few folders, ``total`` bytes in all: source-like text (it
    compresses as code and CSVs do), one file in ten random bytes (as weights do)."""
    rng = random.Random(5)
    size = total // files
    for i in range(files):
        path = root / f"pkg{i % 20}" / f"sub{i % 7}" / f"file{i}.{'bin' if i % 10 == 0 else 'py'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i % 10 == 0:
            path.write_bytes(rng.randbytes(size))
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(size // 5))
            path.write_text(text[:size])
    (root / ".gitignore").write_text("*.log\n__pycache__/\n")


def tar_czf(root: Path, out: Path) -> None:
    subprocess.run(["tar", "czf", str(out), "-C", str(root), "."], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--mib", type=float, default=5)
    parser.add_argument("--smoke", action="store_true", help=SMOKE)
    args = parser.parse_args()
    if args.smoke:
        args.repeat, args.files, args.mib = 1, 40, 0.25
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KALE_EXT_CACHE_DIR"] = str(Path(tmp) / "cache")
        root = Path(tmp) / "ws"
        make_workspace(root, args.files, int(args.mib * 2**20))
        tar = best(lambda: tar_czf(root, Path(tmp) / "tar.tar.gz"), args.repeat)
        ours = best(lambda: archive_bytes(collect(root)), args.repeat)
        pack(collect(root))  # fill the cache
        cached = best(lambda: pack(collect(root)), args.repeat)
        edited = root / "pkg1" / "sub1" / "file1.py"

        def repack() -> None:
            edited.write_text(f"changed {time.perf_counter_ns()}")
            pack(collect(root))

        changed = best(repack, args.repeat)
        size = collect(root).size
        tar_size = (Path(tmp) / "tar.tar.gz").stat().st_size
        print(f"workspace: {args.files} files, {size / 2**20:.1f} MiB")
        print(
            f"tar czf                          {tar * 1000:7.1f} ms  ({tar_size / 2**20:.2f} MiB)"
        )
        print(f"kale_ext collect + pack          {ours * 1000:7.1f} ms  "
              f"{ours / tar:.2f}x tar czf (target ≤ 1.5x)")  # fmt: skip
        print(f"unchanged (hash cache)           {cached * 1000:7.1f} ms  (target ≤ 50 ms)")
        print(f"one file changed (packed again)  {changed * 1000:7.1f} ms")
        print(json.dumps({"tar_s": tar, "pack_s": ours, "ratio": ours / tar, "cached_ms":
                          cached * 1000, "changed_ms": changed * 1000}))  # fmt: skip


if __name__ == "__main__":
    main()
