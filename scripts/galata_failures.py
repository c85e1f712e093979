"""Say, last, why each browser test failed: CI keeps only the end of the output, and
Playwright's list reporter puts each error far above it. Reads the JSON report
(ui-tests/playwright.config.js writes it) and prints each failed test's title and the first
lines of its error, without colour codes:

    python3 scripts/galata_failures.py ui-tests/test-results/report.json
"""

import json
import re
import sys
from pathlib import Path

LINES = 14  # of each error: the expectation and what was received
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failures(report: dict):
    """(title, error text) of each test whose last try did not pass."""

    def walk(suite: dict, path: list[str]):
        for child in suite.get("suites", []):
            yield from walk(child, [*path, child.get("title", "")])
        for spec in suite.get("specs", []):
            for test in spec.get("tests", []):
                results = test.get("results") or [{}]
                last = results[-1]
                if last.get("status") in ("failed", "timedOut", "interrupted"):
                    title = " › ".join(t for t in [*path, spec.get("title", "")] if t)
                    # `error` is the first error's message; `errors` add code snippets
                    errors = [last["error"]] if last.get("error") else last.get("errors", [])
                    text = "\n".join(e.get("message", "") for e in errors)
                    yield title, text or last.get("status", "")

    for suite in report.get("suites", []):
        yield from walk(suite, [suite.get("title", "")])


def summary(report: dict) -> str:
    out = []
    for title, text in failures(report):
        lines = [line for line in ANSI.sub("", text).splitlines() if line.strip()]
        more = len(lines) - LINES
        out.append(f"FAILED {title}")
        out.extend(f"    {line}" for line in lines[:LINES])
        if more > 0:
            out.append(f"    ... ({more} more lines above, in the list reporter's output)")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    path = Path(argv[1])
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        print(f"no browser test report to summarise ({path}: {e})")
        return 0
    text = summary(report)
    if text:
        print("--- why the browser tests failed")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
