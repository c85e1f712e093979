"""A TrainJob's status.trainerStatus as its progress and metrics
(kale_ext/backends/kubernetes/trainer_status.py), read as untrusted input, and through job_info."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.kubernetes.status import job_info
from kale_ext.backends.kubernetes.trainer_status import (
    trainer_checkpoint,
    trainer_metrics,
    trainer_progress,
)
from kale_ext.display import job_status

WHEN = "2026-11-27T12:00:00Z"


def trainjob(trainer_status: object = None) -> dict:
    obj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "fit", "creationTimestamp": WHEN},
           "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 1}}}  # fmt: skip
    if trainer_status is not None:
        obj["status"] = {"trainerStatus": trainer_status}
    return obj


@dataclass
class Case:
    name: str
    status: object
    progress: tuple | None  # (percent, eta_seconds, updated), None: no progress
    metrics: dict | None = None


CASES = [
    Case("none yet", None, None),
    Case("percent, ETA and metrics", {"progressPercentage": 45, "estimatedRemainingSeconds": 120,
         "metrics": [{"name": "loss", "value": "0.25"}], "lastUpdatedTime": WHEN},
         (45.0, 120, WHEN), {"loss": "0.25"}),
    Case("a percent without an ETA", {"progressPercentage": 100, "lastUpdatedTime": WHEN},
         (100.0, None, WHEN)),
    Case("metrics without a percent", {"metrics": [{"name": "acc", "value": "0.9"}],
         "lastUpdatedTime": WHEN}, None, {"acc": "0.9"}),
    Case("the time with fractions and an offset", {"progressPercentage": 5,
         "lastUpdatedTime": "2026-11-27T13:00:00.5+01:00"},
         (5.0, None, "2026-11-27T13:00:00.5+01:00")),
    Case("a percent over 100", {"progressPercentage": 150, "lastUpdatedTime": WHEN}, None),
    Case("a percent that is text", {"progressPercentage": "45", "lastUpdatedTime": WHEN}, None),
    Case("a percent that is true", {"progressPercentage": True, "lastUpdatedTime": WHEN}, None),
    Case("a negative ETA", {"progressPercentage": 5, "estimatedRemainingSeconds": -3,
         "lastUpdatedTime": WHEN}, (5.0, None, WHEN)),
    Case("an ETA that is a fraction", {"progressPercentage": 5, "estimatedRemainingSeconds": 2.5,
         "lastUpdatedTime": WHEN}, (5.0, None, WHEN)),
    Case("not an object", ["45"], None),
    Case("metrics that are not name and value strings", {"metrics": [
        {"name": "loss", "value": 0.2}, "x", {"name": "", "value": "1"},
        {"name": "ok", "value": "1"}]}, None, {"ok": "1"}),
    Case("long names and values cut at 64", {"metrics": [{"name": "n" * 99, "value": "v" * 99}]},
         None, {"n" * 64: "v" * 64}),
    Case("at most 256 metrics", {"metrics": [{"name": f"m{i}", "value": "1"} for i in range(300)]},
         None, {f"m{i}": "1" for i in range(256)}),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_trainer_status_read_as_untrusted_input(case: Case):
    found = trainer_progress(trainjob(case.status))
    if case.progress is None:
        assert found is None
    else:
        assert (found.percent, found.eta_seconds, found.updated) == case.progress
        assert (found.step, found.total, found.source) == (None, None, "trainer")
    assert trainer_metrics(trainjob(case.status)) == case.metrics


def test_job_info_carries_it_and_kale_ext_status_shows_it():
    obj = trainjob({"progressPercentage": 45, "estimatedRemainingSeconds": 125,
                    "metrics": [{"name": "loss", "value": "0.25"}], "lastUpdatedTime": WHEN})  # fmt: skip
    info = job_info(obj, [])
    assert info.progress.source == "trainer" and info.trainer_metrics == {"loss": "0.25"}
    data = info.to_dict()
    assert data["progress"]["percent"] == 45 and data["progress"]["eta_seconds"] == 125
    assert data["trainer_metrics"] == {"loss": "0.25"}
    from kale_ext.server.schema import validator

    assert not list(validator("#/components/schemas/JobInfo").iter_errors(data))
    info.status = Status.RUNNING
    shown = job_status(info).splitlines()
    assert any(line.startswith("progress") and "45%, ETA 2m 05s" in line for line in shown), shown
    assert "trainer       loss 0.25" in shown


def test_the_checkpoint_step_among_the_metrics_is_the_jobs_last_checkpoint():
    status = {"progressPercentage": 40, "lastUpdatedTime": WHEN,
              "metrics": [{"name": "checkpoint_step", "value": "12"}]}  # fmt: skip
    found = trainer_checkpoint(trainjob(status))
    assert (found.step, found.time, found.exact) == (12, WHEN, False)
    assert job_info(trainjob(status), []).checkpoint == found
    assert (
        trainer_checkpoint(trainjob({**status, "metrics": [{"name": "loss", "value": "1"}]}))
        is None
    )
    assert trainer_checkpoint(trainjob({**status, "lastUpdatedTime": 3})) is None
    assert trainer_checkpoint(trainjob()) is None
