"""The server's compile processes: how many CPUs there are for them, and the warm-up each runs
first (the imports and one preview, so a user's first compile does not pay for them)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

#: Previewed once by the warm-up (as POST compile does), to load everything a preview loads on
#: first use: IPython's input transformer for the magic, the TrainJob models, YAML, the job's
#: spec and the backends' checks. Without it, a compile process's first preview of a 105-cell
#: notebook took 46 ms instead of 9 (benchmarks/server.py's), 37 of them imports.
_WARM_UP_NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [{"cell_type": "code", "metadata": {}, "source": "%time x = 1", "outputs": []}],
}


def warm_up(
    freeze: bool, limits: dict | None = None, package_urls: bool = False, server: int = 0
) -> None:
    if limits is not None:  # a compile process: it ends with the server; its limits hold here
        from ..job.limits import configure
        from .lifeline import die_with

        die_with(server)
        configure(limits, by_server=True, package_urls=package_urls)
    # The imports leave ~250,000 new long-lived objects; the collections they would trigger,
    # and every full one later, stop every thread for 100-500 ms. So: no collection while they
    # load, then frozen (gc_freeze), no collection ever scans them again (the few cycles of
    # garbage the imports leave are kept: cheaper than that stall). Without gc_freeze, pay the
    # full collection now, once, while the panel opens.
    enabled = gc.isenabled()
    gc.disable()
    try:
        import kubeflow_trainer_api.models  # noqa: F401

        from ..job.runtimes import TORCH_DISTRIBUTED
        from .service import preview

        preview(_WARM_UP_NOTEBOOK, "warm-up.ipynb", None, None, TORCH_DISTRIBUTED)
    except Exception:  # a warm-up only: the first real use reports any problem
        pass
    finally:
        if freeze:
            gc.freeze()
        else:
            gc.collect()
        if enabled:
            gc.enable()


def usable_cpus() -> float:
    """CPUs this process may use: its affinity, capped by a cgroup v2 CPU quota (a container's
    limit, which os.cpu_count() does not see)."""
    try:
        count: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            count = min(count, int(quota) / int(period))
    except (OSError, ValueError):
        pass
    return count
