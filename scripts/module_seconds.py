"""Write tests/seconds.json, the seconds each test module took, from a JUnit XML report:

    python -m pytest -n auto --dist worksteal --junitxml=report.xml
    python scripts/module_seconds.py report.xml

tests/order.py starts the modules that took longest first, so that no long module is left
running alone at the end of a parallel run. Only the order of the numbers matters; measure
the whole suite in one run (a machine's load scales every module alike).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "seconds.json"


def module_seconds(report: Path) -> dict[str, float]:
    """`backends/local/test_queue.py` → the seconds its tests took (set-up included)."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")
        while module and not module[-1].startswith("test_"):
            module.pop()  # the test's class, if any
        if module[:1] == ["tests"] and len(module) > 1:
            seconds["/".join(module[1:]) + ".py"] += float(case.get("time") or 0)
    return dict(sorted(seconds.items()))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    seconds = module_seconds(Path(argv[0]))
    if not seconds:
        print(f"{argv[0]}: no test of tests/ in this report", file=sys.stderr)
        return 1
    OUT.write_text(json.dumps({k: round(v, 1) for k, v in seconds.items()}, indent=1) + "\n")
    print(f"{OUT.name}: {len(seconds)} modules, {sum(seconds.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
