"""The in-job side of tracking: what report() queues becomes MLflow metrics with their steps; a
server that cannot be reached is said once and never reaches the training loop. (Against a real
server: tests/runs/test_tracking.py.)"""

import json
import os
import subprocess
import sys

import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.metrics import parse_metric
from kale_ext.mlflow_api import RUN_ID_ENV, URI_ENV, Tracking
from kale_ext.tracking_sink import Sink, encode_metrics, start
from tests.conftest import notebook
from tests.harness.mlflow_server import free_port


def test_records_become_metrics_with_their_steps():
    records = [
        (1.5, {"step": 3, "rank": 0, "loss": 0.25, "acc": 1}),
        (2.0, {"step": None, "rank": 0, "loss": float("nan"), "note": "text", "flag": True}),
        (2.5, {"step": 2.0, "rank": 0, "gap": float("inf"), "low": float("-inf")}),
    ]
    assert [json.loads(m) for m in encode_metrics(records, first_index=7)] == [
        {"key": "loss", "value": 0.25, "timestamp": 1500, "step": 3},
        {"key": "acc", "value": 1.0, "timestamp": 1500, "step": 3},
        {"key": "loss", "value": "NaN", "timestamp": 2000, "step": 8},  # no step: its index
        {"key": "gap", "value": "Infinity", "timestamp": 2500, "step": 2},
        {"key": "low", "value": "-Infinity", "timestamp": 2500, "step": 2},
    ]


@pytest.mark.parametrize(
    "record, metrics",
    [
        # report(step=s, total=n): total is how far the job is, not a metric
        ({"step": 3, "rank": 0, "total": 9, "loss": 0.25}, {"loss": 0.25}),
        ({"step": 3, "rank": 0, "total": 9.0, "loss": 0.5}, {"loss": 0.5}),  # a float total
        # report(epoch=e, epochs=m): neither is a metric
        ({"epoch": 2, "epochs": 5, "rank": 0, "acc": 0.9}, {"acc": 0.9}),
        ({"epoch": 2.0, "epochs": 5.0, "rank": 0, "acc": 1}, {"acc": 1.0}),
        ({"step": 1, "total": 4}, {}),  # progress alone: nothing for MLflow
        # checkpoint.save(): the step it saved is the job's last checkpoint, not a metric
        ({"step": 4, "rank": 0, "checkpoint_step": 4}, {}),
    ],
)
def test_kale_exts_own_keys_are_not_sent_to_mlflow_as_metrics(record, metrics):
    sent = [json.loads(m) for m in encode_metrics([(1.0, record)])]
    assert {m["key"]: m["value"] for m in sent} == metrics


def test_a_server_that_cannot_be_reached_is_said_once_and_tracking_stops():
    said = []
    sink = Sink(Tracking(f"http://127.0.0.1:{free_port()}"), "run", said.append)
    try:
        for step in range(100):
            sink.track({"step": step, "loss": 1.0})
        sink.send()
        sink.track({"step": 100, "loss": 1.0})  # after it is off: dropped, never raised
        sink.send()
    finally:
        sink.close()
    assert len(said) == 1 and "tracking is off for this job (cannot reach" in said[0]
    assert sink.off


def test_only_rank_0_of_a_tracked_job_tracks(monkeypatch):
    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    assert start() is None  # not tracked
    monkeypatch.setenv(RUN_ID_ENV, "run")
    monkeypatch.setenv(URI_ENV, "http://127.0.0.1:1")
    monkeypatch.setenv("RANK", "1")
    assert start() is None  # another rank: its metrics are rank 0's business


def test_a_tracking_uri_that_is_not_a_server_is_said_once(monkeypatch, capsys):
    monkeypatch.setenv(RUN_ID_ENV, "run")
    monkeypatch.setenv(URI_ENV, "file:///tmp/mlruns")
    monkeypatch.setenv("RANK", "0")
    assert start() is None
    assert "must be an http(s):// address" in capsys.readouterr().err


def test_a_compiled_job_trains_on_when_its_tracking_server_is_gone(tmp_path):
    job = compile_notebook(
        notebook(
            ("from kale_ext import report", ["imports"]),
            "for s in range(50):\n    report(step=s, loss=1 / (s + 1))",
        )
    )
    module = write_module(job, tmp_path)
    env = {**os.environ, RUN_ID_ENV: "run", URI_ENV: f"http://127.0.0.1:{free_port()}"}
    out = subprocess.run([sys.executable, str(module)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert len([line for line in out.stdout.splitlines() if parse_metric(line)]) == 50
    assert out.stderr.count("MLflow tracking is off for this job") == 1
    assert "Traceback" not in out.stderr
