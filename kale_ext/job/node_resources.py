"""What a node's CPU and memory mean on the Local backend, where no kubelet enforces them.

CPU: each node is pinned to its own set of whole cores (a request of 500m or 1.5 is rounded up
to 1 or 2), taken from the cores this process may use, disjoint while they last; the thread
pools of the node's processes (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``) get the cores per
process unless the job's env sets them. Memory: a watchdog on the resident memory of each node's
processes stops the node ("killed: over its 2Gi memory limit (local)"), as a cluster's OOM
killer would; it samples twice a second, so a very fast spike can pass unseen.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .distributed import DistributedConfig
from .k8s_values import quantity_value
from .procs import counted

THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: How often the watchdog reads the nodes' memory (seconds).
MEMORY_PERIOD = 0.5


def available_cores() -> list[int]:
    """The cores this process may run on (all of them where affinity is unknown)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class CorePlan:
    """The cores of each node and the thread count of each of its processes."""

    sets: list[list[int]]
    threads: int
    warning: str | None = None


@dataclass(frozen=True)
class LocalResources:
    """A job's CPU and memory per node, as the Local backend applies them."""

    cpu: str | None = None  # the quantity asked (the limit, else the request)
    memory: str | None = None

    @classmethod
    def of(cls, config: DistributedConfig) -> LocalResources:
        def asked(key: str) -> str | None:
            value = config.limits.get(key) or config.requests.get(key)
            return str(value) if value is not None else None

        return cls(asked("cpu"), asked("memory"))

    @property
    def cores(self) -> int | None:
        """Whole cores per node (rounded up, at least 1); None when no CPU is asked."""
        if self.cpu is None:
            return None
        return max(1, math.ceil(quantity_value(self.cpu)))

    @property
    def memory_bytes(self) -> int | None:
        return int(quantity_value(self.memory)) if self.memory is not None else None

    def plan(self, nodes: int, procs: int, cores: list[int] | None = None) -> CorePlan | None:
        """Each node's cores (from ``cores``, default: this process's); None without a CPU."""
        want = self.cores
        if want is None:
            return None
        have = cores if cores is not None else available_cores()
        shape = f"{counted(nodes, 'node')} × {self.cpu} CPU"
        if want >= len(have):
            sets = [list(have) for _ in range(nodes)]
            warning = None
            if want > len(have) or nodes > 1:
                warning = (f"cpu: the job asks for {shape} and this machine gives jobs "
                           f"{counted(len(have), 'core')}: every node shares all "
                           f"{len(have)}")  # fmt: skip
        elif want * nodes <= len(have):
            sets = [have[k * want : (k + 1) * want] for k in range(nodes)]
            warning = None
        else:
            sets = [[have[(k * want + i) % len(have)] for i in range(want)] for k in range(nodes)]
            warning = (f"cpu: the job asks for {shape} and this machine gives jobs "
                       f"{counted(len(have), 'core')}: nodes share cores")  # fmt: skip
        threads = max(1, len(sets[0]) // max(1, procs))
        return CorePlan(sets, threads, warning)

    def cpu_text(self, nodes: int, procs: int) -> str:
        plan = self.plan(nodes, procs)
        if plan is None:
            return "not limited (no CPU asked): nodes share every core"
        rounded = "" if str(self.cores) == self.cpu else f" ({self.cpu} rounded up)"
        shared = "shared" if plan.warning else "its own"
        return (f"{counted(len(plan.sets[0]), 'core')} per node{rounded}, {shared}; "
                f"{'/'.join(THREAD_ENV)}={plan.threads}")  # fmt: skip

    def memory_text(self) -> str:
        if self.memory is None:
            return "not limited (no memory asked)"
        return (f"{self.memory} per node: a node over it is stopped "
                "(resident memory of its processes, checked every 0.5 s)")  # fmt: skip

    def to_dict(self, nodes: int, procs: int) -> dict[str, str]:
        """``{cpu, memory}``: one line each on what a Local run does with them."""
        return {"cpu": self.cpu_text(nodes, procs), "memory": self.memory_text()}


def thread_env(threads: int, env: dict[str, str]) -> dict[str, str]:
    """The thread-count variables the job's env does not set itself."""
    return {k: str(threads) for k in THREAD_ENV if k not in env}


def over_limit_text(memory: str) -> str:
    return f"killed: over its {memory} memory limit (local)"
