"""The job monitor: background polling of a scripted backend into the model and a view,
backend errors, cancel and stop."""

from __future__ import annotations

import pytest

from kale_ext.backends.base import BackendError, Status
from kale_ext.ipython.monitor import CANCELLED
from kale_ext.ipython.widgets import MAX_ERRORS, JobMonitor
from tests.harness.kube_fixtures import kube, kubeconfig  # noqa: F401 (fixtures)
from tests.harness.monitor import METRICS_SCRIPT, SCRIPT, ScriptedBackend, Step


def test_polling_feeds_the_text_view(capsys):
    backend = ScriptedBackend(SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", interval=0.01)
    assert monitor.wait(10) == "Complete"
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "[job] submitted to the fake backend: 2 nodes × 1 process; logs follow "
        "(cancel: %kale_delete job)"
    )
    assert [o.split(" (")[0] for o in out[1:]] == [
        "[job] Created",
        "[job] Running",
        "[rank 0] epoch 1",
        "[rank 1] epoch 1",
        "[rank 0] epoch 2",
        "[rank 1] done",
        "[job] Complete",
    ]
    assert monitor.model.offsets == {0: 16, 1: 13}  # every line read once
    assert repr(monitor) == "<JobMonitor job: Complete>"


def test_poll_without_a_thread():
    backend = ScriptedBackend(SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", start=False)
    results = [monitor.poll() for _ in range(4)]
    assert results == [True, True, True, False] and monitor.status == "Complete"


def test_repeated_backend_errors_stop_the_monitor(capsys):
    backend = ScriptedBackend(SCRIPT, fail_with=BackendError("the API server is unreachable", 503))
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.wait(10)
    assert backend.polls == MAX_ERRORS
    assert monitor.model.error == "the API server is unreachable"
    assert "[job] the API server is unreachable" in capsys.readouterr().out


def test_an_unexpected_exception_is_shown_not_raised():
    class Broken(ScriptedBackend):
        def logs(self, *a, **k):
            raise RuntimeError("boom")

    monitor = JobMonitor(Broken(SCRIPT), "job", view="text", interval=0.01)
    monitor.wait(10)
    assert monitor.model.error == "the monitor stopped: RuntimeError: boom"


def test_cancel_deletes_in_the_background(capsys):
    backend = ScriptedBackend([Step(Status.RUNNING, ((0, "working"),))])
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.cancel()
    assert backend.deleted.wait(5)
    assert monitor.wait(10) == CANCELLED
    assert "[job] Cancelled" in capsys.readouterr().out


def test_stop_leaves_the_job_running():
    backend = ScriptedBackend([Step(Status.RUNNING)])
    monitor = JobMonitor(backend, "job", view="text", interval=0.01)
    monitor.stop()
    assert monitor.wait(5) == "Running" and not backend.deleted.is_set()


def test_text_monitor_prints_the_metrics(capsys):
    backend = ScriptedBackend(METRICS_SCRIPT, nodes=2)
    monitor = JobMonitor(backend, "job", nodes=2, view="text", interval=0.01)
    assert monitor.wait(10) == "Complete"
    out = capsys.readouterr().out
    assert "KALE_METRIC" not in out
    assert out.splitlines()[-2] == (
        "[job] metrics: loss: rank 0 0.4 (step 2), rank 1 0.5 (step 2) · "
        "accuracy: rank 0 0.97 (step 2)"
    )


def test_bad_view_name():
    with pytest.raises(ValueError):
        JobMonitor(ScriptedBackend(SCRIPT), "job", view="gui", start=False)


def test_the_monitor_gives_the_jobs_result_and_outputs(kube, tmp_path, monkeypatch):  # noqa: F811
    """What a %%trainjob cell returns has .result() and .outputs, as kale_ext.get_job(NAME) does
    (a cluster job here, its claim mounted at tmp_path; tests/runs/test_handle.py runs real
    jobs)."""
    import torch

    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.results import CLAIMS_ENV
    from kale_ext.compile.resultsave import FOLDER, MAX_BYTES, MAX_BYTES_ENV, _kale_ext_keep
    from kale_ext.errors import JobFailed
    from tests.harness.kube_fixtures import make_spec

    backend = KubernetesBackend(poll_interval=0.002)
    backend.submit(make_spec({"outputs": "pvc:results:/out"}))
    monkeypatch.setenv(CLAIMS_ENV, f"results={tmp_path}")
    monkeypatch.setenv("KALE_EXT_OUTPUT_DIR", str(tmp_path / "fit"))  # as the job's rank 0
    monkeypatch.setenv("RANK", "0")
    (tmp_path / "fit").mkdir()
    (tmp_path / "fit" / "notes.txt").write_text("done")
    _kale_ext_keep({"acc": 0.5, "w": torch.ones(2)}, FOLDER, MAX_BYTES, MAX_BYTES_ENV)
    monitor = JobMonitor(backend, "fit", view="text", start=False)
    kube.set_conditions("fit", ("Complete", "True", "AllJobsCompleted", "done"))
    value = monitor.result(timeout=30)
    assert value["acc"] == 0.5 and value["w"].tolist() == [1.0, 1.0]
    assert [f.path for f in monitor.outputs] == ["notes.txt"]
    assert monitor.outputs.load("notes.txt") == "done"
    kube.set_conditions("fit", ("Failed", "True", "JobFailed", "image pull failed"))
    with pytest.raises(JobFailed, match="^job fit failed"):
        monitor.result(timeout=30)
