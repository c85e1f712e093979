"""benchmarks/smoke.py, the runner of every benchmark's --smoke (`make benchmarks`): what it finds,
reports and refuses, on fake benchmarks of a line or two (no real benchmark runs here)."""

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("benchmarks_smoke", BENCHMARKS / "smoke.py")
smoke = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(smoke)

GOOD = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--smoke", action="store_true")
print("figure 1.0 s, smoke:", parser.parse_args().smoke)
"""
#: A benchmark without --smoke: its full run is never started.
NO_SMOKE = "raise SystemExit('the full run started')\n"
BROKEN = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--smoke", action="store_true")
parser.parse_args()
print("started")
from kale_ext.backends.local.processes import reserve_port
"""


def fake(folder: Path, **scripts: str) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in scripts.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def test_a_script_without_smoke_fails_the_run_and_is_named(tmp_path, capsys):
    folder = fake(tmp_path / "b", good=GOOD, new_benchmark=NO_SMOKE, timing="X = 1\n")
    assert [p.name for p in smoke.benchmarks(folder)] == ["good.py", "new_benchmark.py"]
    assert smoke.main([], folder=folder) == 1
    out = capsys.readouterr().out
    assert "smoke new_benchmark.py: FAILED: it has no --smoke flag" in out
    assert "the full run started" not in out  # not run at all
    assert "smoke good.py: ok in " in out
    assert "timing.py" not in out  # a helper, listed in HELPERS
    assert out.splitlines()[-1].startswith("smoke: 1 FAILED (new_benchmark.py) in ")


def test_every_benchmark_has_a_smoke_flag():
    found = smoke.benchmarks()
    assert {p.name for p in found} >= {"compile.py", "server.py", "local_run.py"}
    assert [p.name for p in found if not smoke.has_smoke(p)] == []
    assert set(smoke.HELPERS) <= {p.name for p in BENCHMARKS.glob("*.py")}


def test_a_failed_script_is_reported_with_the_tail_of_its_output(tmp_path, capsys):
    folder = fake(tmp_path / "b", good=GOOD, broken=BROKEN)
    assert smoke.main([], folder=folder) == 1
    out = capsys.readouterr().out
    line = out[out.index("smoke broken.py: FAILED in ") :]
    assert "exit status 1" in line and "    started" in line
    assert "ImportError: cannot import name 'reserve_port'" in line
    assert "smoke good.py: ok" in out


def test_a_script_past_its_timeout_is_ended_and_reported(tmp_path, capsys):
    slow = GOOD + "import time\nprint('waiting', flush=True)\ntime.sleep(60)\n"
    folder = fake(tmp_path / "b", slow=slow)
    assert smoke.main(["--timeout", "1"], folder=folder) == 1
    out = capsys.readouterr().out
    assert "smoke slow.py: FAILED in " in out and "no end after 1 s" in out
    assert "    waiting" in out  # what it printed before it was ended


def test_the_scripts_run_with_this_checkout_first_on_their_path(tmp_path, capsys):
    shows = GOOD + "import kale_ext, sys\nprint('from', kale_ext.__file__)\nsys.exit(3)\n"
    assert smoke.main([], folder=fake(tmp_path / "b", shows=shows)) == 1
    assert f"from {BENCHMARKS.parent / 'kale_ext' / '__init__.py'}" in capsys.readouterr().out


def test_the_panel_benchmarks_imports_are_checked_without_a_browser(tmp_path):
    count, missing = smoke.panel_imports(BENCHMARKS / "panel")
    assert count >= 5 and missing == []

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.ts").write_text(
        "export * from './fixtures';\nexport function kept(): void {}\n"
    )
    (tmp_path / "lib" / "fixtures.ts").write_text(
        "export const test = 1;\nexport { expect as check, galata };\n"
    )
    (tmp_path / "lib" / "server.js").write_text("module.exports = { jupyterConfig };\n")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "a.bench.ts").write_text(
        "import {\n  kept,\n  test,\n  check,\n  openPanel\n} from '../lib/helpers';\n"
        "import { gone } from '../lib/moved';\n"
    )
    (bench / "config.js").write_text("const { jupyterConfig } = require('../lib/server');\n")
    count, missing = smoke.panel_imports(bench)
    assert count == 6
    assert missing == [
        "a.bench.ts: openPanel no longer exported by ../lib/helpers",
        "a.bench.ts: ../lib/moved is gone",
    ]
