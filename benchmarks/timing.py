"""Shared by the benchmarks: the best of N timed runs; what ``--smoke`` means; exceptions
raised in threads made to count."""

from __future__ import annotations

import threading
import time

#: The help of every benchmark's ``--smoke`` flag. A smoke run goes through the same code as
#: the full run, with tiny sizes, counts and repeats, and still prints its figures (they mean
#: nothing then and nothing checks them): an import error, a renamed function or a changed
#: signature fails it at once. benchmarks/smoke.py runs each script so.
SMOKE = "a tiny run through the same code, in seconds (what benchmarks/smoke.py runs)"
#: A smoke run's local jobs run at its own priority (``local_nice`` 0, not 10 below it): on a
#: busy machine a job 10 below everyone else's waits for the cores, a tiny one 10-30 s instead
#: of 3-5.
SMOKE_NICE = 0


def best(fn, repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


class ThreadErrors:
    """Exceptions raised in threads from now on, which Python prints and forgets: ``check()``
    raises when there was one, so a benchmark whose threads failed does not end as if its
    figures held."""

    def __init__(self) -> None:
        self.errors: list[BaseException | None] = []
        self._previous = threading.excepthook
        threading.excepthook = self._hook

    def _hook(self, args) -> None:
        self.errors.append(args.exc_value)
        self._previous(args)  # printed as before

    def check(self) -> None:
        if self.errors:
            raise RuntimeError(
                f"{len(self.errors)} exception(s) in the benchmark's threads (printed above); "
                f"the first: {self.errors[0]!r}"
            )
