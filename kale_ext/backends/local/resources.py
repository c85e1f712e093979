"""A local job's CPU and memory per node, applied (the plan: kale_ext/job/node_resources.py).

Each node starts pinned to its cores (``sched_setaffinity`` in the child before exec; torchrun
and its workers inherit it) with the thread counts of the plan; while the job runs, a watchdog
sums the resident memory of each node's processes and stops a node over its limit.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from ...job.node_resources import MEMORY_PERIOD, LocalResources, over_limit_text, thread_env
from ...job.procs import counted
from ...job.spec import JobSpec
from .processes import descendants, kill, kill_group

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resources_record(spec: JobSpec) -> tuple[dict, list[str]]:
    """What the supervisor applies (job.json's ``resources``), and the warnings to show."""
    asked = LocalResources.of(spec.config)
    plan = asked.plan(spec.nodes, spec.procs_per_node)
    record = {"cpu": asked.cpu, "memory": asked.memory, "memory_bytes": asked.memory_bytes}
    warnings = []
    if plan is not None:
        record.update(cores=plan.sets, threads=plan.threads)
        if plan.warning:
            warnings.append(plan.warning)
        if str(asked.cores) != asked.cpu:
            cores = counted(asked.cores, "whole core")
            warnings.append(f"cpu: {asked.cpu} is rounded up to {cores} per node locally")
    return record, warnings


def node_settings(record: dict, node: int) -> tuple[dict[str, str], Callable[[], None] | None]:
    """The thread-count env of ``node`` and a preexec that pins it to its cores."""
    resources = record.get("resources") or {}
    cores = resources.get("cores")
    if not cores:
        return {}, None
    return thread_env(resources["threads"], record.get("env", {})), pinned(set(cores[node]))


def pinned(cores: set[int]) -> Callable[[], None]:
    """A preexec that pins the process (so all it starts) to ``cores``."""

    def pin() -> None:
        os.sched_setaffinity(0, cores)

    return pin


def chain(*steps: Callable[[], None] | None) -> Callable[[], None] | None:
    """One preexec_fn that runs each given step."""
    given = [s for s in steps if s is not None]
    if not given:
        return None

    def run() -> None:
        for step in given:
            step()

    return run


def resident(pids: set[int]) -> int:
    """The resident memory of ``pids`` in bytes (processes gone meanwhile count 0)."""
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


class MemoryWatch:
    """Stops a node whose processes hold more resident memory than the job's limit."""

    def __init__(self, record: dict):
        resources = record.get("resources") or {}
        self.limit = resources.get("memory_bytes")
        if self.limit and record.get("mpirun"):  # one mpirun holds every node's ranks
            self.limit *= record["num_nodes"]
        self.text = over_limit_text(resources.get("memory") or "")
        self.killed: int | None = None  # the node stopped for its memory
        self._last = 0.0

    def check(self, pids: list[int | None]) -> int | None:
        """Every MEMORY_PERIOD: the first node (by index) over the limit, stopped; else None.
        ``pids``: each node's, None for a node that ended (its pid may be another's now)."""
        if not self.limit or self.killed is not None:
            return None
        if time.monotonic() - self._last < MEMORY_PERIOD:
            return None
        self._last = time.monotonic()
        for k, pid in enumerate(pids):
            if pid is None:
                continue
            tree = {pid, *descendants({pid})}
            if resident(tree) > self.limit:
                kill_group(pid, signal.SIGKILL)  # as the kernel's OOM killer: no grace
                for child in tree:
                    kill(child, signal.SIGKILL)
                self.killed = k
                return k
        return None
