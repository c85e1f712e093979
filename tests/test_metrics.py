"""Metrics lines: what `report()` prints (in the kernel and in a compiled job), how they are
read back, and the one set of values the notebook monitor and the panel show them with."""

import json
import math
import subprocess
import sys

import pytest

from kale_ext import report
from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.errors import CompileError
from kale_ext.lineage import CHECKPOINT_STEP
from kale_ext.metrics import (
    INTERNAL_KEYS,
    LOWER_IS_BETTER,
    MAX_POINTS,
    PREFIX,
    SERIES_COLORS,
    best_point,
    format_value,
    frontend_constants,
    lower_is_better,
    metric_values,
    parse_metric,
    series_color,
)
from kale_ext.progress import PROGRESS_KEYS, progress_of_lines
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


def test_nan_and_inf_travel_and_read_back(capsys):
    report(step=1, loss=float("nan"), grad=float("inf"), low=-math.inf)
    line = capsys.readouterr().out.strip()
    assert (
        line == PREFIX + '{"step": 1, "rank": 0, "loss": NaN, "grad": Infinity, "low": -Infinity}'
    )
    found = metric_values(parse_metric(line))
    assert math.isnan(found.values["loss"]) and found.values["grad"] == math.inf
    assert [format_value(v) for v in found.values.values()] == ["nan", "inf", "-inf"]


def test_report_takes_what_float_takes(capsys):
    class Scalar:  # a torch or numpy scalar: a number through float()
        def __float__(self):
            return 0.25

    report(step=3, loss=Scalar())
    assert parse_metric(capsys.readouterr().out.strip())["loss"] == 0.25


def test_only_numbers_are_metrics():
    found = metric_values(
        {"step": "one", "rank": -1, "loss": [0.5], "ok": True, "note": "x", "acc": 1}
    )
    assert (found.step, found.rank, found.values) == (None, None, {"acc": 1.0})
    assert metric_values({"step": math.nan, "rank": True}).step is None
    assert metric_values({"step": 2, "rank": 3}) == metric_values({"rank": 3, "step": 2.0})


def test_progress_keys_are_not_metrics(capsys):
    report(step=3, total=10, loss=0.5)
    report(step=4, epoch=1, epochs=5, accuracy=0.7)
    records = [parse_metric(line) for line in capsys.readouterr().out.splitlines()]
    assert [metric_values(r).values for r in records] == [{"loss": 0.5}, {"accuracy": 0.7}]
    assert records[0]["total"] == 10 and records[1]["epochs"] == 5  # still in the line


def test_a_checkpoints_step_is_not_a_metric(capsys):
    report(step=4, checkpoint_step=4)  # as checkpoint.save() reports it
    report(step=4, loss=0.5, checkpoint_step=4)
    records = [parse_metric(line) for line in capsys.readouterr().out.splitlines()]
    assert [metric_values(r).values for r in records] == [{}, {"loss": 0.5}]
    assert records[0]["checkpoint_step"] == 4  # still in the line: lineage.py reads it there


def test_a_compiled_job_reports_progress(tmp_path):
    job = compile_notebook(
        notebook(
            ("from kale_ext import report", ["imports"]),
            "for s in range(4):\n    report(step=s + 1, total=4, loss=1 / (s + 1))",
        )
    )
    module = write_module(job, tmp_path)
    out = subprocess.run([sys.executable, "-S", "-I", str(module)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    found = progress_of_lines(out.stdout.splitlines())
    assert (found.step, found.total, found.percent, found.source) == (4, 4, 100.0, "report")


def test_a_shimmed_report_reads_back_with_its_nans(tmp_path):
    job = compile_notebook(
        notebook(
            ("from kale_ext import report", ["imports"]),
            "report(step=1, loss=float('nan'))",
        )
    )
    module = write_module(job, tmp_path)
    assert repr(PREFIX) in module.read_text()  # the shim prints the prefix kale_ext reads
    env = {"RANK": "2", "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-S", "-I", str(module)], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    found = metric_values(parse_metric(out.stdout.strip()))
    assert (found.step, found.rank) == (1, 2) and math.isnan(found.values["loss"])


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.312345, "0.3123"), (2.0, "2"), (1234.5678, "1235"), (12345.6, "12350"), (0, "0"),
     (-0.5, "-0.5"), (0.00012, "1.2e-4"), (3e7, "3e+7"), (1.5e-7, "1.5e-7"),
     (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf")],
)  # fmt: skip
def test_format_value(value, text):
    assert format_value(value) == text


def test_series_colours_go_round_by_rank():
    assert [series_color(r) for r in range(len(SERIES_COLORS))] == list(SERIES_COLORS)
    assert series_color(len(SERIES_COLORS) + 1) == SERIES_COLORS[1]
    assert len(set(SERIES_COLORS)) == len(SERIES_COLORS)


@pytest.mark.parametrize(
    ("name", "lower"),
    [("loss", True), ("val_loss", True), ("trainError", True), ("valMSE", True),
     ("top1_err", True), ("epoch_time", True), ("perplexity", True), ("errors", True),
     ("accuracy", False), ("f1", False), ("lossless", False), ("runtime", False),
     ("val/acc", False)],
)  # fmt: skip
def test_which_metrics_are_better_lower(name, lower):
    # the panel's Jest spec (metrics/summary.spec.ts) holds the same table
    assert lower_is_better(name) is lower


def test_best_point_is_the_lowest_loss_or_the_highest_accuracy():
    points = [(1, 0.5), (2, 0.3), (3, 0.3), (4, math.nan), (5, 0.4)]
    assert best_point("loss", points) == (2, 0.3)  # the earliest of equals
    assert best_point("accuracy", points) == (1, 0.5)
    assert best_point("loss", [(1, math.inf), (2, math.nan)]) is None
    assert best_point("loss", []) is None


def test_frontend_constants_are_the_ones_used_here():
    constants = json.loads(json.dumps(frontend_constants()))  # JSON as it is, nothing lost
    assert constants["prefix"] == PREFIX and constants["max_points"] == MAX_POINTS
    assert constants["series_colors"] == list(SERIES_COLORS)
    assert constants["lower_is_better"] == list(LOWER_IS_BETTER)
    # the panel leaves out of its charts the keys progress.py reads progress from and the
    # checkpoint's step
    assert constants["internal_keys"] == list(INTERNAL_KEYS)
    assert INTERNAL_KEYS == (*PROGRESS_KEYS, CHECKPOINT_STEP) == (
        "total", "epoch", "epochs", "checkpoint_step")  # fmt: skip
    assert constants["nan_text"] == format_value(math.nan)
    assert "-" + constants["inf_text"] == format_value(-math.inf)
    size = constants["chart_size"]
    assert (
        size["width"] > size["left"] + size["right"]
        and size["height"] > size["top"] + size["bottom"]
    )
