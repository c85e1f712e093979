"""Which tests start first: the modules that took longest (tests/seconds.json, measured with
scripts/module_seconds.py), so that a parallel run (pytest -n) ends on short tests, never on a
long module left running alone while the other workers wait.

pytest-xdist's `worksteal` hands each worker a contiguous share of the collected tests and lets
an idle worker take queued tests from the end of a busy one's share: with the longest modules
first, what is left at the end is short. A module's tests stay together and in their order (its
module-scoped fixtures are made once); a module not measured yet counts as a slow one (it may
start a job) or a unit test's, by its `slow` marker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SECONDS = TESTS / "seconds.json"

#: The guess for a module not in seconds.json: one with a slow test, one without.
UNMEASURED_SLOW, UNMEASURED_UNIT = 30.0, 1.0


def measured() -> dict[str, float]:
    try:
        return json.loads(SECONDS.read_text())
    except (OSError, ValueError):
        return {}


def module_of(item: pytest.Item) -> str:
    return Path(str(item.path)).resolve().relative_to(TESTS).as_posix()


def longest_first(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Reorder ``items`` in place: modules by their seconds, longest first (stable)."""
    modules = {id(item): module_of(item) for item in items}
    guess: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        module = modules[id(item)]
        slow = UNMEASURED_SLOW if item.get_closest_marker("slow") else UNMEASURED_UNIT
        guess[module] = max(guess.get(module, 0.0), slow)
        first.setdefault(module, index)
    weight = {m: seconds.get(m, g) for m, g in guess.items()}
    items.sort(key=lambda item: (-weight[modules[id(item)]], first[modules[id(item)]]))
