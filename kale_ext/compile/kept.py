"""Work done on one cell, kept by the cell's exact source.

The panel compiles a notebook again after each edit, most of its cells unchanged: what the
compiler derives from a cell's source alone (its plain Python, its names, its imports, its
indented lines) is kept, so a recompile redoes only the changed cells and the work across cells.
What is kept is never changed by its users (frozen, or treated so).

Bounds, as data: the most recent ``ENTRIES`` sources of each kind of work, each of at most
``MAX_SOURCE`` characters (a bigger cell is worked on each time; its own work dwarfs the
lookup's saving anyway).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

ENTRIES = 4096
MAX_SOURCE = 16 * 1024

_R = TypeVar("_R")
_KEPT: list = []


def by_source(fn: Callable[..., _R]) -> Callable[..., _R]:
    """``fn(source, *args)``, kept for sources up to MAX_SOURCE characters (its args must be
    hashable; exceptions are not kept)."""
    kept = functools.lru_cache(maxsize=ENTRIES)(fn)
    _KEPT.append(kept)

    @functools.wraps(fn)
    def work(source: str, *args):
        return kept(source, *args) if len(source) <= MAX_SOURCE else fn(source, *args)

    return work


def forget_cells() -> None:
    """Drop all kept work (benchmarks/compile.py times a first compile; tests start afresh)."""
    for kept in _KEPT:
        kept.cache_clear()
