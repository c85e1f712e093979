"""Shared by the benchmarks: the best of N timed runs."""

from __future__ import annotations

import time


def best(fn, repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
