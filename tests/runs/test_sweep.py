"""Real sweeps on the local backend: each trial an ordinary job (real processes)."""

from __future__ import annotations

import json

import optuna
import pytest

from kale_ext.display import jobs_table
from kale_ext.errors import BackendError, ConfigError
from kale_ext.runs import record as rec
from kale_ext.runs import sweep

from .conftest import finished, stop_driver, wait_for


def test_a_grid_sweep_runs_every_point_and_marks_the_best(sweep_nb, backend):
    specs = {"quality": "0.9,0.6", "layers": "1,2"}
    started = sweep.start(backend, sweep_nb, specs, metric="accuracy", parallel=2)
    name = started["name"]
    record = finished(name)
    assert record["status"] == "Complete", record
    trials = {t["job"]: t for t in record["trials"]}
    assert [t["parameters"] for t in record["trials"]] == [
        {"quality": 0.9, "layers": 1}, {"quality": 0.9, "layers": 2},
        {"quality": 0.6, "layers": 1}, {"quality": 0.6, "layers": 2},
    ]  # fmt: skip
    assert {t["status"] for t in trials.values()} == {"Complete"}
    assert [t["metric"] for t in record["trials"]] == [0.9, 0.9, 0.6, 0.6]
    summary = rec.summary(record)
    assert summary["best"] == f"{name}-0" and summary["trials"][0]["best"]
    assert [t["metric"] for t in summary["trials"]] == [0.9, 0.9, 0.6, 0.6]  # best first
    for job in trials:  # ordinary jobs, labelled with their sweep, their logs there
        info = backend.get_job(job)
        assert info.sweep == name and info.to_dict()["sweep"] == name
        assert any("trained" in line.text for line in backend.logs(job))
    table = rec.table(record)
    assert table.splitlines()[2].startswith(f"*  0      {name}-0  Complete  0.9")


def test_a_random_sweep_stops_a_bad_trial_early_and_says_so(sweep_nb, backend):
    # seed 1 draws 0.8, 0.9, then 0.1 twice: two trials complete, then the bad ones are stopped
    started = sweep.start(backend, sweep_nb, {"quality": "choice(0.9,0.8,0.1)"},
                          search="random", trials=4, seed=1, metric="accuracy", goal="max",
                          early_stop=True, prune_after=2)  # fmt: skip
    record = finished(started["name"])
    assert record["status"] == "Complete", record
    stopped = [t for t in record["trials"] if t["status"] == "Stopped"]
    assert stopped and all(t["parameters"]["quality"] == 0.1 for t in stopped)
    reason = stopped[0]["reason"]
    assert (
        reason.startswith("stopped early: accuracy 0.1 at step ") and "below the median" in reason
    )
    info = backend.get_job(stopped[0]["job"])  # the job itself reads as stopped, not crashed
    assert info.status_text == "Stopped early" and info.reason == reason
    assert info.failure is None
    assert "Stopped early" in jobs_table([info])
    study = optuna.load_study(
        study_name=started["name"],
        storage=f"sqlite:///{rec.sweep_dir(started['name']) / rec.STUDY}",
    )
    states = [t.state.name for t in study.trials]  # fmt: skip
    assert states.count("PRUNED") == len(stopped) and states.count("COMPLETE") >= 2


def test_a_killed_driver_resumes_with_the_same_study(sweep_nb, backend):
    started = sweep.start(backend, sweep_nb, {"quality": "choice(0.9,0.8)"},
                          search="random", trials=3, seed=2, metric="accuracy")  # fmt: skip
    name = started["name"]
    wait_for(lambda: any(t["status"] == "Complete" for t in rec.read(name)["trials"]))
    stop_driver(name)
    assert sweep.get(name)["status"] == "Interrupted"
    assert f"kale-ext sweep --resume {name}" in sweep.get(name)["reason"]
    sweep.resume(name)
    with pytest.raises(ConfigError, match="running already"):
        sweep.resume(name)
    record = finished(name)
    assert record["status"] == "Complete", record
    jobs = [t["job"] for t in record["trials"]]
    assert jobs == [f"{name}-{k}" for k in range(3)]
    storage = f"sqlite:///{rec.sweep_dir(name) / rec.STUDY}"
    study = optuna.load_study(study_name=name, storage=storage)
    states = [t.state.name for t in study.trials]
    assert states.count("COMPLETE") == 3, (states, record["trials"])
    assert len(study.trials) in (3, 4)  # a trial asked just before the kill, never submitted


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"search": "random"}, "trials", "a random search needs a number of trials"),
        ({"search": "random", "trials": 3}, "metric", "needs the metric to go by"),
        ({"early_stop": True}, "metric", "early stopping needs the metric"),
        ({"parallel": 0}, "parallel", "must be a whole number from 1 to 64"),
        ({"search": "tpe", "trials": 5000, "metric": "a"}, "trials", "from 1 to 1000"),
        ({"search": "bayes"}, "search", "must be one of grid, random, tpe"),
        ({"goal": "up", "metric": "a"}, "goal", "must be min or max"),
        ({"specs": {"quality": "uniform(0,1)"}}, "param.quality", "a range needs a random"),
        ({"options": {"nodes": 0}}, "nodes", ""),
    ],
)  # fmt: skip
def test_a_bad_sweep_is_refused_before_anything_is_created(sweep_nb, backend, kwargs, field,
                                                          message):  # fmt: skip
    specs = kwargs.pop("specs", {"quality": "0.9,0.6"})
    options = kwargs.pop("options", None)
    with pytest.raises(ConfigError) as e:
        sweep.start(backend, sweep_nb, specs, options, **kwargs)
    assert e.value.field == field and message in str(e.value)
    assert sweep.listing() == [] and backend.list_jobs() == []


def test_random_without_optuna_says_how_to_install_it(sweep_nb, backend, monkeypatch):
    monkeypatch.setattr("kale_ext.runs.search.have_optuna", lambda: False)
    with pytest.raises(ConfigError, match=r"pip install 'kale-ext\[sweep\]'"):
        sweep.start(backend, sweep_nb, {"quality": "0.9"}, search="random", trials=2,
                    metric="accuracy")  # fmt: skip


@pytest.mark.parametrize(
    "submitted", [True, False, "half-made", "never-started"],
    ids=["submitted", "not-submitted", "half-made", "never-started"],
)  # fmt: skip
def test_a_trial_recorded_but_not_marked_submitted_is_not_lost(sweep_nb, backend, submitted):
    """A driver killed between recording a trial and recording its submit: resumed, the trial's
    job is watched if it was submitted, else submitted now; either way the trial completes.
    Killed inside the submit, it left a folder without a record (the trial failed: "exists
    already") or a record whose supervisor never started (the sweep waited forever): what
    the submit made is deleted and the trial submitted again."""
    name = sweep.start(backend, sweep_nb, {"quality": "0.9,0.6"}, metric="accuracy")["name"]
    assert finished(name)["status"] == "Complete"
    job = f"{name}-1"
    created = backend.get_job(job).created
    record = rec.read(name)
    record["trials"][1].update(status=rec.PENDING, metric=None, step=None)
    record.update(status="Interrupted")
    rec.write(record)
    if submitted is not True:
        backend.delete(job, outputs=True)
    if submitted == "half-made":
        (backend.jobs_dir / job).mkdir()
        (backend.jobs_dir / job / "node-0.log").touch()
    elif submitted == "never-started":
        made = json.loads((backend.jobs_dir / f"{name}-0" / "job.json").read_text())
        made.update(
            name=job, status="Created", reason=None, finished=None, submitter=[2**22 + 7, "gone"]
        )
        for key in ("supervisor_pid", "supervisor_started", "started"):
            made.pop(key, None)
        (backend.jobs_dir / job).mkdir()
        (backend.jobs_dir / job / "job.json").write_text(json.dumps(made))
    wait_for(lambda: not sweep.driver_running(name))  # the first driver has gone
    sweep.resume(name)
    record = finished(name)
    assert record["status"] == "Complete", record
    assert [(t["status"], t["metric"]) for t in record["trials"]] == [
        ("Complete", 0.9), ("Complete", 0.6)
    ]  # fmt: skip
    assert (backend.get_job(job).created == created) is (submitted is True)  # again if needed


class _DeleteRefused:
    """The backend, except that it cannot delete (a filesystem refusing, a cluster's RBAC)."""

    def __init__(self, backend):
        self._backend = backend

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def delete(self, name, outputs=False):
        raise BackendError(f"cannot remove the job {name}: Permission denied")


def test_a_half_made_trial_that_cannot_be_deleted_fails_saying_what_stays(sweep_nb, backend):
    """Resumed, a driver whose delete of what a cut submit made is refused submits nothing over
    it: the trial fails saying what stays and why, the other trials stand."""
    from kale_ext.runs.driver import Driver

    name = sweep.start(backend, sweep_nb, {"quality": "0.9,0.6"}, metric="accuracy")["name"]
    assert finished(name)["status"] == "Complete"
    job = f"{name}-1"
    record = rec.read(name)
    record["trials"][1].update(status=rec.PENDING, metric=None, step=None)
    record.update(status="Interrupted")
    rec.write(record)
    backend.delete(job, outputs=True)
    (backend.jobs_dir / job).mkdir()  # a folder without its record: the submit was cut
    wait_for(lambda: not sweep.driver_running(name))
    assert Driver(name, backend=_DeleteRefused(backend)).run() == 0
    record = rec.read(name)
    trial = record["trials"][1]
    assert trial["status"] == rec.FAILED
    assert trial["reason"] == (f"not submitted: what its submit made stays: cannot remove the "
                               f"job {job}: Permission denied")  # fmt: skip
    assert record["trials"][0]["status"] == "Complete"
    assert (backend.jobs_dir / job).is_dir()  # left for the user to see and remove
