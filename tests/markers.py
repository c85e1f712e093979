"""Which tests are `slow`: they start real jobs, Jupyter servers, kernels or the emulated cluster.

`make check` runs the others (`-m "not slow"`); `make test` runs all. A test is slow when it
uses one of SLOW_FIXTURES, or lives in one of SLOW_PLACES (a folder or a module whose tests
start real processes): a new test there is marked without anyone remembering to.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Fixtures that start a server, a cluster or a kernel.
SLOW_FIXTURES = frozenset(
    {
        "jp_serverapp",  # pytest-jupyter's in-process Jupyter server (jp_fetch)
        "server",  # tests/robustness: `jupyter server` in its own process
        "emulated_cluster",  # tests/harness/emulated: a Kubernetes API whose pods are processes
        "kube_api",
    }
)

#: Folders and modules (relative to tests/) whose tests run real jobs or processes.
SLOW_PLACES = (
    "e2e/",
    "robustness/",
    "backends/local/",
    "runs/",
)


def is_slow(item: pytest.Item) -> bool:
    if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    where = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    return where.startswith(SLOW_PLACES)


def mark_slow(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
