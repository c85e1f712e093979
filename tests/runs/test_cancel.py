"""Cancelling a real sweep on the local backend: no more trials start, the running ones are
stopped and kept (reading Cancelled), the sweep reads Cancelled."""

from __future__ import annotations

import json

import pytest

from kale_ext.errors import BackendError
from kale_ext.runs import record as rec
from kale_ext.runs import sweep

from .conftest import finished, stop_driver, wait_for

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster
TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"

#: quality below 0.5: each trial keeps reporting (about 10 s) until it is stopped.
SLOW = {"quality": "0.1,0.2,0.3"}


def _reporting(name: str, count: int):
    """The record once ``count`` trials run and have reported their metric."""

    def check():
        record = rec.read(name)
        running = [t for t in record["trials"] if t["status"] == "Running" and t["metric"]]
        return record if len(running) >= count else None

    return wait_for(check, what=f"{count} trials of {name} reporting")


def test_cancel_stops_the_running_trials_and_starts_no_more(sweep_nb, backend):
    name = sweep.start(backend, sweep_nb, SLOW, metric="accuracy", parallel=2)["name"]
    _reporting(name, 2)
    record = sweep.cancel(name)
    assert record["status"] == "Cancelled", record
    assert record["reason"] == "0 of 3 complete; 2 cancelled; 1 never started"
    assert not sweep.driver_running(name)
    assert [t["job"] for t in record["trials"]] == [f"{name}-0", f"{name}-1"]  # no third
    for trial in record["trials"]:
        assert trial["status"] == "Cancelled"
        assert trial["reason"] == f"cancelled with its sweep {name}"
        info = backend.get_job(trial["job"])  # kept, stopped, reading Cancelled
        assert info.status.finished and info.status_text == "Cancelled"
        assert info.reason == trial["reason"]
    assert sorted(j.name for j in backend.list_jobs()) == [f"{name}-0", f"{name}-1"]
    assert sweep.cancel(name)["status"] == "Cancelled"  # again: nothing more to do
    summary = rec.summary(sweep.get(name))
    assert summary["best"] is None and "Cancelled" in rec.table(summary)


def test_a_sweep_whose_driver_is_gone_is_cancelled_by_the_caller(sweep_nb, backend):
    name = sweep.start(backend, sweep_nb, SLOW, metric="accuracy")["name"]
    _reporting(name, 1)
    stop_driver(name)
    assert sweep.get(name)["status"] == "Interrupted"
    record = sweep.cancel(name)
    assert record["status"] == "Cancelled" and record["trials"][0]["status"] == "Cancelled"
    assert backend.get_job(f"{name}-0").status_text == "Cancelled"


def test_an_ended_sweep_cannot_be_cancelled(sweep_nb, backend):
    name = sweep.start(backend, sweep_nb, {"quality": "0.9"}, metric="accuracy")["name"]
    assert finished(name)["status"] == "Complete"
    with pytest.raises(BackendError, match=f"sweep {name} has ended already \\(Complete\\)") as e:
        sweep.cancel(name)
    assert e.value.status == 409
    with pytest.raises(Exception, match="no sweep named 'nope'"):
        sweep.cancel("nope")


#: a trial that runs until it is stopped (about 100 s at the most)
LONG = """\
import time
for step in range(2000):
    print("step", step, quality, flush=True)
    time.sleep(0.05)
"""


@pytest.mark.parametrize("emulated_cluster", [{"kueue": True}], indirect=True)
def test_a_trial_the_cluster_will_not_stop_is_said_to_run_on(emulated_cluster, tmp_path,
                                                             monkeypatch):  # fmt: skip
    """Kueue would start a merely suspended trial again, and this user may not deactivate its
    Workload: the cancel stops what it can, and the record says which trial still runs and why
    (the driver neither ends on the refusal nor calls the trial Cancelled)."""
    from kale_ext.backends.kubernetes import KubernetesBackend
    from tests.conftest import notebook

    cluster = emulated_cluster
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = tmp_path / "long.ipynb"
    path.write_text(json.dumps(notebook(("quality = 0.5\n", ["parameters"]), LONG)))
    queued = {"config": {"run_policy": {"scheduling_policy": {"queue": "team-a"}}}}
    k8s = KubernetesBackend(poll_interval=0.1)
    name = sweep.start(k8s, path, {"quality": "0.1,0.2"}, queued, parallel=2)["name"]

    def running():
        pods = [p for n in (f"{name}-0", f"{name}-1") for p in cluster.pods(n)]
        return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods)

    cluster.wait_for(running, 120, "both trials to run")
    # a PATCH is kmock's "update"
    forbidden = 'workloads.kueue.x-k8s.io is forbidden: User "ana" cannot patch resource'
    cluster.faults.api(403, verb="update", resource="workloads", message=forbidden)
    record = sweep.cancel(name)
    assert record["status"] == "Cancelled" and not sweep.driver_running(name)
    assert record["reason"] == "0 of 2 complete; 2 running (2 not stopped: see its reason)"
    for trial in record["trials"]:
        assert trial["status"] == "Running"
        assert trial["reason"].startswith(f"cancelled with its sweep {name}; its job was not "
                                          f"stopped: job {trial['job']} was not stopped")  # fmt: skip
        assert forbidden in trial["reason"]
        assert not cluster.get(TRAINJOBS, trial["job"])["spec"].get("suspend")
