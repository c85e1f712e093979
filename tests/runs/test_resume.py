"""A resume is a rerun in the job's lineage (kale_ext/runs/resume.py): only a job that has
ended is resumed, a new node count is checked before anything is read, and on a cluster the new
TrainJob carries its lineage, parent and the step its parent last reported."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import JobInfo, Status
from kale_ext.errors import BackendError, ConfigError
from kale_ext.job.trainjob import LINEAGE, PARENT, RESUME_STEP
from kale_ext.runs.resume import resume
from tests.conftest import notebook
from tests.harness.emulated import TRAINJOBS
from tests.runs.conftest import wait_for

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster


class Listed:
    """A backend that knows one job and may submit nothing."""

    name = "local"

    def __init__(self, info: JobInfo | None = None):
        self.info, self.asked = info, []

    def get_job(self, name: str) -> JobInfo:
        self.asked.append(name)
        assert self.info is not None, "the job was read before the node count was checked"
        return self.info

    def submit(self, *args):
        raise AssertionError("nothing is submitted")


@pytest.mark.parametrize("status", [Status.CREATED, Status.QUEUED, Status.RUNNING])
def test_a_job_that_has_not_ended_is_not_resumed(status):
    backend = Listed(JobInfo("busy", status, "local"))
    with pytest.raises(BackendError) as e:
        resume(backend, "busy")
    assert (e.value.status, e.value.reason) == (409, "NotFinished")
    assert str(e.value) == (
        f"job busy is {status.value}: a job is resumed once it has ended (Stopped, Failed or "
        "Complete); stop it first (kale-ext stop busy)"
    )


def test_a_job_whose_record_cannot_be_read_is_not_resumed():
    why = "the record of job bad cannot be read (job.json is not valid JSON)"
    backend = Listed(JobInfo("bad", Status.UNREADABLE, "local", reason=why))
    with pytest.raises(BackendError) as e:
        resume(backend, "bad")
    assert (e.value.status, e.value.reason, str(e.value)) == (409, "UnreadableRecord", why)


@pytest.mark.parametrize(("nodes", "says"), [(0, "must be at least 1, got 0"),
                                             (1001, "must be at most 1000, got 1001"),
                                             ("2", "must be a whole number")])  # fmt: skip
def test_a_node_count_out_of_bounds_is_refused_before_the_job_is_read(nodes, says):
    backend = Listed()
    with pytest.raises(ConfigError) as e:
        resume(backend, "first", nodes=nodes)
    assert e.value.field == "nodes" and says in e.value.message
    assert backend.asked == []


SAVES = notebook(
    ("from kale_ext import report", ["imports"]),
    "report(checkpoint_step=5)\nprint('saved', flush=True)",
)


@pytest.mark.parametrize("emulated_cluster", [{"trainer_status": True}], indirect=True)
def test_a_resume_on_the_cluster_records_its_lineage_on_the_trainjob(
    emulated_cluster, tmp_path, monkeypatch
):
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.submit import submit

    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))  # where snapshots are kept
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(SAVES))
    backend = KubernetesBackend(config_file=str(emulated_cluster.kubeconfig))
    submit(backend, path, {"name": "first", "nodes": 2}, None, str(path))
    wait_for(lambda: backend.get_job("first").status.finished, 180, "first ends")
    first = backend.get_job("first")
    assert first.status is Status.COMPLETE, first.reason
    assert (first.checkpoint.step, first.checkpoint.exact) == (5, False)  # trainerStatus's
    assert (first.lineage, first.parent) == ("first", None)
    resume(backend, "first", "second", nodes=1)
    made = emulated_cluster.get(TRAINJOBS, "second")
    notes = made["metadata"]["annotations"]
    assert (notes[LINEAGE], notes[PARENT], notes[RESUME_STEP]) == ("first", "first", "5")
    assert made["spec"]["trainer"]["numNodes"] == 1
    assert emulated_cluster.get(TRAINJOBS, "first")["metadata"]["annotations"][LINEAGE] == "first"
    second = backend.get_job("second")
    assert (second.parent, second.lineage, second.resume_step) == ("first", "first", 5)
