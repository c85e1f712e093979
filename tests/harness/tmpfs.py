"""A small tmpfs for tests of a full disk: mounted where the machine allows it (root, or a user
namespace that may mount), else the test is skipped with the reason. Unmounted at the end."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(folder: Path, size: str = "1m") -> Iterator[Path]:
    """``folder`` (made) as a tmpfs of ``size``; skipped when mounting is not allowed here."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           str(folder)], capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)
