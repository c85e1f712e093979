import subprocess
import sys

import pytest

from kale_ext import report
from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.errors import CompileError
from kale_ext.metrics import parse_metric
from tests.conftest import notebook


def test_report_prints_one_parseable_line(capsys, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    report(step=2, loss=0.5, accuracy=0.9)
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert parse_metric(line.strip()) == {"step": 2, "rank": 3, "loss": 0.5, "accuracy": 0.9}
    assert parse_metric("loss 0.5") is None and parse_metric("KALE_METRIC {broken") is None


def test_a_job_reports_without_kale_ext_installed(tmp_path):
    job = compile_notebook(
        notebook(
            ("from kale_ext import report", ["imports"]),
            "for s in range(2):\n    report(step=s, loss=1 / (s + 1))",
        )
    )
    assert job.packages == []  # kale_ext is never a package to install
    module = write_module(job, tmp_path)
    out = subprocess.run([sys.executable, "-S", "-I", str(module)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr  # -S -I: no site-packages, so no kale_ext
    assert [parse_metric(line) for line in out.stdout.splitlines()] == [
        {"step": 0, "rank": 0, "loss": 1.0},
        {"step": 1, "rank": 0, "loss": 0.5},
    ]


@pytest.mark.parametrize(
    "cell", ["import kale_ext\nkale_ext.report(loss=1)", "from kale_ext import compile_notebook"]
)
def test_other_kale_ext_imports_are_errors(cell):
    with pytest.raises(CompileError, match="kale_ext"):
        compile_notebook(notebook(cell))
