"""`pytest --cpu-durations=N`: the N tests that took the most CPU time, set-up included.

pytest's own `--durations` are wall-clock seconds, which on a shared machine say more about the
machine's load than about the test. CPU seconds are the test process's own plus those of the
processes it started and waited for (subprocess.run, a kernel it shut down); a job's detached
processes (a local job's supervisor and nodes) are not counted: for those, the wall clock is
the measure.
"""

from __future__ import annotations

import resource
import time

import pytest

KEY = pytest.StashKey[float]()


def cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N tests that took the most CPU time (0: all)")  # fmt: skip


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    item.stash[KEY] = cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """The CPU time travels with the test's teardown report (from a -n worker too)."""
    outcome = yield
    if call.when == "teardown" and KEY in item.stash:
        report = outcome.get_result()
        spent = round(cpu_seconds() - item.stash[KEY], 3)
        report.user_properties = [*report.user_properties, ("cpu_seconds", spent)]


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    wanted = config.getoption("cpu_durations")
    if wanted is None:
        return
    spent = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "cpu_seconds":
                    spent[report.nodeid] = value
    slowest = sorted(spent.items(), key=lambda kv: -kv[1])
    total = sum(spent.values())
    terminalreporter.write_sep("=", f"CPU time: {len(spent)} tests, {total:.1f} s in all")
    for nodeid, seconds in slowest[: wanted or None]:
        terminalreporter.write_line(f"{seconds:8.2f}s cpu  {nodeid}")
