"""Cancelling a real sweep on the local backend: no more trials start, the running ones are
stopped and kept (reading Cancelled), the sweep reads Cancelled."""

from __future__ import annotations

import pytest

from kale_ext.errors import BackendError
from kale_ext.runs import record as rec
from kale_ext.runs import sweep

from .conftest import finished, stop_driver, wait_for

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
