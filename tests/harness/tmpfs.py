"""A small tmpfs for tests of a full disk: mounted where the machine allows it (root, or a user
namespace that may mount), else the test (or that part of it) is skipped with the reason.
Unmounted at the end."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount_small(folder: Path, size: str = "1m") -> str | None:
    """Mount a tmpfs of ``size`` on ``folder`` (made): None when it is mounted, else why not."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           str(folder)], capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        return f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}"
    return None


def unmount(folder: Path) -> None:
    subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)


@contextmanager
def small_disk(folder: Path, size: str = "1m") -> Iterator[Path]:
    """``folder`` (made) as a tmpfs of ``size``; skipped when mounting is not allowed here."""
    why = mount_small(folder, size)
    if why is not None:
        pytest.skip(why)
    try:
        yield folder
    finally:
        unmount(folder)


def fill(folder: Path) -> Path:
    """Fill the disk of ``folder`` with one file (returned): the next write there fails."""
    filler = folder / ".filler"
    with open(filler, "wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while f.write(bytes(chunk)):
                    pass
            except OSError:
                continue
    return filler
