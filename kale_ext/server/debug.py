"""Debug only (KaleExtApp.debug_loop_lag): how long the event loop stalls.

A task sleeps 10 ms at a time on the server's own event loop; the time it wakes up late is how
long every request, timer and stream of the server had to wait (`lag`). Part of that is the loop
thread running other work (a handler, a flush, a blocking call): the CPU time the loop thread
used while the timer waited (`busy`). The rest is the thread waiting for the GIL (while the
process's other threads ran: `others`) or for a core (the whole process descheduled). Garbage
collections, which stop every thread, are timed too (`gc_max_ms` per generation).

The process's CPU time in a period (`own`: the loop thread's and every other thread's) bounds
the part of that period's lag the server itself caused; the rest is the machine's other work
keeping the process off the cores (on a 2-core machine at load 18, 210 of a 235 ms stall).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque


class LoopLag:
    def __init__(self, interval: float = 0.01, keep: int = 200_000):
        self.interval = interval
        self.samples: deque[float] = deque(maxlen=keep)
        self.busy: deque[float] = deque(maxlen=keep)
        self.own: deque[float] = deque(maxlen=keep)
        self.worst: tuple[float, float, float] = (0.0, 0.0, 0.0)  # lag, busy, others
        self._task: asyncio.Task | None = None
        self.gc_max = [0.0, 0.0, 0.0]
        self._gc_start = 0.0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            generation = info.get("generation", 2)
            took = time.perf_counter() - self._gc_start
            self.gc_max[generation] = max(self.gc_max[generation], took)

    def reset(self) -> None:
        self.samples.clear()
        self.busy.clear()
        self.own.clear()
        self.worst = (0.0, 0.0, 0.0)
        self.gc_max = [0.0, 0.0, 0.0]

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start, cpu, process = loop.time(), time.thread_time(), time.process_time()
            await asyncio.sleep(self.interval)
            lag = max(0.0, loop.time() - start - self.interval)
            busy, own = time.thread_time() - cpu, time.process_time() - process
            self.samples.append(lag)
            self.busy.append(busy)
            self.own.append(min(lag, own))  # what of the lag the process's own work explains
            if lag > self.worst[0]:
                self.worst = (lag, busy, own - busy)

    def stats(self) -> dict:
        """Lateness of the 10 ms timer and the loop thread's CPU time meanwhile (ms)."""
        values, busy, own = sorted(self.samples), sorted(self.busy), sorted(self.own)
        if not values:
            return {"interval_ms": self.interval * 1e3, "count": 0}

        def pct(data: list, q: float) -> float:
            return round(data[min(len(data) - 1, int(q * len(data)))] * 1e3, 2)

        return {
            "interval_ms": self.interval * 1e3,
            "count": len(values),
            "mean_ms": round(sum(values) / len(values) * 1e3, 2),
            "p50_ms": pct(values, 0.50),
            "p99_ms": pct(values, 0.99),
            "max_ms": round(values[-1] * 1e3, 2),
            "busy_p99_ms": pct(busy, 0.99),
            "busy_max_ms": round(busy[-1] * 1e3, 2),
            "own_p99_ms": pct(own, 0.99) if own else 0.0,
            "own_max_ms": round(own[-1] * 1e3, 2) if own else 0.0,
            # the worst period: its lag, the loop thread's CPU time and the other threads'
            "worst_ms": [round(x * 1e3, 2) for x in self.worst],
            "gc_max_ms": [round(x * 1e3, 2) for x in self.gc_max],
        }
