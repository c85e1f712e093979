"""scripts/galata_failures.py: the reason each browser test failed, printed last (CI keeps only
the end of the output). The report's shape is Playwright's JSON reporter's, as it wrote it for
a test that logged an error in the browser's console."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "galata_failures", ROOT / "scripts/galata_failures.py"
)
galata_failures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(galata_failures)

CONSOLE = (
    "Error: errors in the browser console\n\n"
    "\x1b[2mexpect(\x1b[22m\x1b[31mreceived\x1b[39m\x1b[2m).\x1b[22mtoEqual\x1b[2m(\x1b[22m"
    "\x1b[32mexpected\x1b[39m\x1b[2m) // deep equality\x1b[22m\n\n"
    "\x1b[32m- Array []\x1b[39m\n\x1b[31m+ Array [\x1b[39m\n"
    '\x1b[31m+   "Failed to load resource: the server responded with a status of 404 (Not Found)'
    ' (http://localhost:8888/kale-ext/jobs/nb-abcde)",\x1b[39m\n\x1b[31m+ ]\x1b[39m'
)


def result(status: str, message: str = "") -> dict:
    out = {"status": status, "errors": []}
    if message:
        out["error"] = {"message": message, "snippet": "   at tests/fixtures.ts:66"}
        out["errors"] = [{"message": message + "\n\n   at tests/fixtures.ts:66"}]
    return out


def report(*results_by_title: tuple[str, list[dict]]) -> dict:
    specs = [
        {"title": title, "tests": [{"results": results}]} for title, results in results_by_title
    ]
    return {
        "suites": [
            {
                "title": "tests/panel.spec.ts",
                "specs": [],
                "suites": [{"title": "the kale_ext panel", "specs": specs}],
            }
        ]
    }


def test_a_failure_is_named_with_its_reason_without_colour_codes():
    text = galata_failures.summary(
        report(("submits a job", [result("failed", CONSOLE)]), ("compiles", [result("passed")]))
    )
    lines = text.splitlines()
    assert lines[0] == "FAILED tests/panel.spec.ts › the kale_ext panel › submits a job"
    assert "    Error: errors in the browser console" in lines
    assert any("/kale-ext/jobs/nb-abcde" in line for line in lines)  # which request
    assert "\x1b" not in text
    assert "compiles" not in text  # passed: not named
    assert "fixtures.ts:66" not in text  # the message, not the code around it


def test_a_long_error_is_cut_and_says_so():
    message = "\n".join(f"line {i}" for i in range(40))
    lines = galata_failures.summary(
        report(("times out", [result("timedOut", message)]))
    ).splitlines()
    assert lines[1:3] == ["    line 0", "    line 1"]
    assert len(lines) == 1 + galata_failures.LINES + 1
    assert lines[-1].startswith(f"    ... ({40 - galata_failures.LINES} more lines")


def test_only_the_last_try_counts():
    retried = [result("failed", "Error: first try"), result("passed")]
    assert galata_failures.summary(report(("flaky once", retried))) == ""


def test_main_prints_the_summary_last_and_never_fails_the_run(tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report(("submits a job", [result("failed", CONSOLE)]))))
    assert galata_failures.main(["galata_failures.py", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- why the browser tests failed\nFAILED ")

    # no report (Playwright did not start): said, and the run's own status stands
    assert galata_failures.main(["galata_failures.py", str(tmp_path / "none.json")]) == 0
    assert "no browser test report" in capsys.readouterr().out
