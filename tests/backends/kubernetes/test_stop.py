"""Stopping a job on the cluster (kale_ext/backends/kubernetes/stop.py), on the emulated
cluster with its Kueue on (tests/harness/cluster/kueue.py): Kueue starts a merely suspended
job again, so Stop deactivates a queued job's Workload first, or refuses saying why."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import BackendError, Status
from kale_ext.backends.kubernetes import KubernetesBackend
from kale_ext.backends.kubernetes.stop import JOB_UID
from kale_ext.backends.submit import submit
from kale_ext.runs.rerun import rerun
from kale_ext.runs.stop import stop
from tests.cli import cli
from tests.conftest import notebook

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster

TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"
WORKLOADS, NS = "kueue.x-k8s.io/v1beta2/workloads", "team"
KUEUE = [{"kueue": True}]
QUEUED = {"config": {"run_policy": {"scheduling_policy": {"queue": "team-a"}}}}
SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)


@pytest.fixture
def k8s(emulated_cluster) -> KubernetesBackend:
    return KubernetesBackend(poll_interval=0.1)


@pytest.fixture
def slow(tmp_path):
    path = tmp_path / "nb" / "slow.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(SLOW))
    return path


def start(k8s, cluster, path, name: str, options: dict | None = QUEUED) -> None:
    """Submit the slow notebook as job ``name`` and wait for its pod to run."""
    submit(k8s, path, {**(options or {}), "name": name})

    def runs():
        pods = cluster.pods(name)
        return pods and all((p.get("status") or {}).get("phase") == "Running" for p in pods)

    cluster.wait_for(runs, 120, f"{name} to run")


def workload(cluster, name: str) -> dict | None:
    uid = cluster.get(TRAINJOBS, name)["metadata"]["uid"]
    found = [w for w in cluster.items(WORKLOADS) if w["metadata"]["labels"].get(JOB_UID) == uid]
    return found[0] if found else None


def settle(cluster, name: str) -> None:
    """Until Kueue has looked at the job as it is now and has nothing left to do."""
    cluster.wait_for(lambda: cluster.call(cluster.kueue.settled, NS, name), 60, "Kueue settled")


def evicted(wl: dict) -> tuple[str, str] | None:
    found = [c for c in wl["status"]["conditions"] if c["type"] == "Evicted"]
    return (found[0]["status"], found[0]["reason"]) if found else None


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_a_stopped_kueue_job_stays_stopped_and_its_rerun_is_a_new_job(emulated_cluster, k8s, slow):
    cluster = emulated_cluster
    start(k8s, cluster, slow, "fit")
    info = stop(k8s, "fit", "ana")
    settle(cluster, "fit")  # Kueue has had its say: it starts a job that is only suspended
    tj = cluster.get(TRAINJOBS, "fit")
    assert tj["spec"]["suspend"] is True
    assert tj["metadata"]["annotations"]["kale-ext.io/stopped"].startswith("stopped by ana at ")
    wl = workload(cluster, "fit")
    assert wl["spec"]["active"] is False and evicted(wl) == ("True", "Deactivated")
    patches = [r.resource.plural for r in cluster.requests("PATCH")]
    patches = [p for p in patches if p in ("workloads", "trainjobs")]
    # deactivated first: Kueue never resumes it; Kueue suspending it meanwhile makes the
    # suspend sent with the version read stale (a 409), and it is sent again on the new one
    assert patches[0] == "workloads" and set(patches[1:]) == {"trainjobs"}, patches
    cluster.wait_for(lambda: not cluster.pods("fit"), 60, "the pods to go")
    said = [(e.object, e.reason, e.message) for e in k8s.events("fit")]  # the Workload's too
    evicting = (f"Workload/{wl['metadata']['name']}", "EvictedDueToDeactivated")
    assert (*evicting, "The workload is deactivated") in said
    for seen in (info, k8s.get_job("fit"), k8s.list_jobs()[0]):
        assert seen.status_text == "Stopped" and seen.reason.startswith("stopped by ana at ")
        assert "waiting for Kueue" not in seen.reason

    again = rerun(k8s, "fit", "fit-again")  # a new TrainJob, with a Workload of its own
    assert again.name == "fit-again"
    cluster.wait_for(lambda: cluster.pods("fit-again"), 120, "the rerun to start")
    new = workload(cluster, "fit-again")
    assert new["metadata"]["name"] != wl["metadata"]["name"] and new["spec"]["active"] is True
    assert cluster.get(TRAINJOBS, "fit")["spec"]["suspend"] is True  # the stopped one stays
    assert workload(cluster, "fit")["spec"]["active"] is False


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_a_job_without_a_queue_is_stopped_as_before(emulated_cluster, k8s, slow):
    cluster = emulated_cluster
    start(k8s, cluster, slow, "plain", options=None)
    assert stop(k8s, "plain", "ana").status_text == "Stopped"
    cluster.wait_for(lambda: not cluster.pods("plain"), 60, "the pods to go")
    assert cluster.get(TRAINJOBS, "plain")["spec"]["suspend"] is True
    assert cluster.items(WORKLOADS) == [] and cluster.requests(plural="workloads") == []


FORBIDDEN = (
    'workloads.kueue.x-k8s.io "{wl}" is forbidden: User "ana" cannot patch resource "workloads" '
    'in API group "kueue.x-k8s.io" in the namespace "team"'
)


@pytest.mark.parametrize(
    "emulated_cluster, fault, status, says",
    [
        (KUEUE[0], ("update", FORBIDDEN), 403,
         ["cannot deactivate Kueue Workload team/{wl}: " + FORBIDDEN + " (HTTP 403 Forbidden)",
          "kale_ext needs list and patch workloads.kueue.x-k8s.io in namespace team"]),
        (KUEUE[0], ("list", 'workloads.kueue.x-k8s.io is forbidden: User "ana" cannot list'), 403,
         ["cannot list the Kueue Workloads in team: workloads.kueue.x-k8s.io is forbidden",
          "kale_ext needs list and patch workloads.kueue.x-k8s.io in namespace team"]),
        ({}, None, 409,  # Kueue is not running: no Workload, so a suspend would not hold
         ["Kueue has made no Workload for it yet (none labelled kueue.x-k8s.io/job-uid="]),
        (KUEUE[0], ("list", None), 409,  # the job has the label, the cluster has no Kueue
         ["this cluster does not serve workloads.kueue.x-k8s.io/v1beta2 (HTTP 404 NotFound): is "
          "Kueue (≥ 0.15) installed?"]),
    ],
    indirect=["emulated_cluster"],
    ids=["patch forbidden", "list forbidden", "no Workload", "Workloads not served"],
)  # fmt: skip
def test_a_stop_that_kueue_would_undo_is_refused_with_the_servers_reason(
    emulated_cluster, k8s, slow, fault, status, says
):
    cluster = emulated_cluster
    start(k8s, cluster, slow, "fit")
    wl = (workload(cluster, "fit") or {"metadata": {"name": ""}})["metadata"]["name"]
    if fault is not None:
        code, message = (404, None) if fault[1] is None else (403, fault[1].format(wl=wl))
        cluster.faults.api(code, verb=fault[0], resource="workloads", message=message)
    with pytest.raises(BackendError) as info:
        stop(k8s, "fit", "ana")
    message = str(info.value)
    assert info.value.status == status
    assert message.startswith("job fit was not stopped: Kueue (queue team-a) would start a "
                              "suspended job again, so kale_ext first deactivates")  # fmt: skip
    for part in says:
        assert part.format(wl=wl) in message, message
    tj = cluster.get(TRAINJOBS, "fit")  # left as it was: running, not marked stopped
    assert not tj["spec"].get("suspend") and "kale-ext.io/stopped" not in tj["metadata"].get(
        "annotations", {}
    )
    assert k8s.get_job("fit").status is Status.RUNNING
    if status == 403:  # the CLI says the same, without a traceback
        out = cli("stop", "fit", "--backend", "kubernetes")
        assert out.returncode == 1 and out.stderr.startswith("error: job fit was not stopped")
        assert "kale_ext needs list and patch" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_a_suspend_that_fails_after_the_workload_is_deactivated_says_so(
    emulated_cluster, k8s, slow
):
    cluster = emulated_cluster
    start(k8s, cluster, slow, "fit")
    wl = workload(cluster, "fit")["metadata"]["name"]
    cluster.faults.api(500, verb="update", resource="trainjobs", times=1)
    with pytest.raises(BackendError) as info:
        stop(k8s, "fit", "ana")
    assert info.value.status == 500
    assert str(info.value).startswith("cannot stop TrainJob team/fit: Internal error occurred")
    assert str(info.value).endswith(f"; its Kueue Workload {wl} is deactivated, so Kueue stops its "
                                    "pods: stop it again to record who stopped it")  # fmt: skip
    settle(cluster, "fit")
    assert cluster.get(TRAINJOBS, "fit")["spec"]["suspend"] is True  # Kueue's own stop
    seen = k8s.get_job("fit")
    assert seen.status is Status.QUEUED and seen.reason == (  # the user's stop deactivated it
        "suspended by the user: its Kueue Workload is deactivated, holding no quota, and Kueue "
        "runs it only once its spec.active is true again (LocalQueue team-a)"
    )
    again = stop(k8s, "fit", "ana")  # records who stopped it
    assert again.status_text == "Stopped" and again.reason.startswith("stopped by ana at ")


@pytest.mark.parametrize("first", ["stop", "delete", "another change"])
def test_a_stop_that_meets_a_stop_or_delete_that_came_first_is_refused(
    emulated_cluster, k8s, slow, monkeypatch, first
):
    """Issue 42: a stop read the TrainJob, then suspended it whatever happened meanwhile: a stop
    or a delete that came first (from another request, process or machine) was overwritten (two
    stops both answered 200, the later's name kept) or a job being deleted was stopped. Now the
    suspend is sent with the version read: the later stop is a 409 saying why, or a 404; a
    change that stops nothing (the controllers write a running job's status) is read again and
    the stop goes on."""
    import threading

    from kale_ext.backends.base import NotFound

    cluster = emulated_cluster
    start(k8s, cluster, slow, "fit", options=None)
    late_read, go = threading.Event(), threading.Event()
    read = k8s.trainjob

    def held(name: str) -> dict:  # the later stop waits between its read and its suspend
        obj = read(name)
        if threading.current_thread().name == "late" and not late_read.is_set():
            late_read.set()
            assert go.wait(60)
        return obj

    monkeypatch.setattr(k8s, "trainjob", held)
    out: dict = {}

    def late() -> None:
        try:
            k8s.stop("fit", "stopped by late")
        except BackendError as e:
            out["error"] = e

    thread = threading.Thread(target=late, name="late")
    thread.start()
    assert late_read.wait(60)
    if first == "stop":
        k8s.stop("fit", "stopped by first")
    elif first == "delete":
        k8s.delete("fit")
    else:
        k8s.trainer_objects(
            "label", "patch", "trainjobs", "fit", {"metadata": {"labels": {"a": "b"}}}
        )
    go.set()
    thread.join(60)
    assert not thread.is_alive()
    error = out.get("error")
    if first == "stop":
        assert isinstance(error, BackendError) and error.status == 409, out
        assert "job fit has ended already (Stopped: stopped by first)" in str(error)
        annotations = cluster.get(TRAINJOBS, "fit")["metadata"]["annotations"]
        assert annotations["kale-ext.io/stopped"] == "stopped by first"  # not overwritten
    elif first == "another change":
        assert error is None, error
        tj = cluster.get(TRAINJOBS, "fit")
        assert tj["spec"]["suspend"] is True and tj["metadata"]["labels"]["a"] == "b"
        assert tj["metadata"]["annotations"]["kale-ext.io/stopped"] == "stopped by late"
    else:
        assert isinstance(error, BackendError) and error.status in (404, 409), out
        assert isinstance(error, NotFound) or "job fit is being deleted" in str(error), error
        cluster.wait_for(lambda: cluster.get(TRAINJOBS, "fit") is None, 60, "the job to go")
