"""What Kueue says of a job (kale_ext/backends/kubernetes/kueue.py): a Workload's conditions in
words, and the states every view shows through get_job and list_jobs on the fake cluster."""

from __future__ import annotations

import json

import pytest
import urllib3

from kale_ext.backends.base import BackendError, Queue, Status
from kale_ext.backends.kubernetes import KubernetesBackend, kueue
from kale_ext.backends.kubernetes.kueue import (
    ADMITTED,
    DEACTIVATED,
    EVICTED,
    FINISHED,
    INADMISSIBLE,
    PREEMPTED,
    RESERVED,
    WAITING,
    owned_by,
    positions,
    workload_state,
)
from kale_ext.backends.submit import submit
from kale_ext.runs.stop import stop
from tests.conftest import notebook
from tests.harness.kube_wire import status_error

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster, for the last test

QUEUE = {"kueue.x-k8s.io/queue-name": "team-a"}
NO_QUOTA = ("couldn't assign flavors to pod set node: insufficient quota for cpu in flavor "
            "default, request > maximum capacity (2 > 1)")  # fmt: skip


def cond(kind: str, status: str = "True", reason: str = "", message: str = "") -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip


def workload(*conditions: dict, active: bool = True, admitted_by: str | None = None,
             uid: str = "uid-fit", name: str = "trainjob-fit-1a2b3") -> dict:  # fmt: skip
    status: dict = {"conditions": list(conditions)}
    if admitted_by:
        status["admission"] = {"clusterQueue": admitted_by, "podSetAssignments": []}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/job-uid": uid},
                     "ownerReferences": [{"kind": "TrainJob", "name": "fit", "uid": uid,
                                          "controller": True}]},
        "spec": {"active": active, "queueName": "team-a", "podSets": [{"name": "node", "count": 1}]},
        "status": status,
    }  # fmt: skip


PENDING = cond("QuotaReserved", "False", "Pending", NO_QUOTA)
RESERVED_ = cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq")
ADMITTED_ = cond("Admitted", "True", "Admitted", "The workload is admitted")
PREEMPTED_EVICTION = cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload")
PREEMPTED_IN_CQ = cond(
    "Preempted",
    "True",
    "InClusterQueue",
    "Preempted to accommodate a workload (UID: u2) due to prioritization",
)
TIMEOUT = cond("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout")
DEACTIVATED_ = cond("Evicted", "True", "Deactivated", "The workload is deactivated")


@pytest.mark.parametrize(
    "wl, cq, position, state, text",
    [
        (workload(PENDING), "cq", 3, WAITING,
         f"waiting for quota (Kueue: ClusterQueue cq, position 3): {NO_QUOTA}"),
        (workload(PENDING), "cq", None, WAITING, f"waiting for quota (Kueue: ClusterQueue cq): {NO_QUOTA}"),
        (workload(), None, None, WAITING, "waiting for quota (Kueue: LocalQueue team-a)"),
        (workload(cond("QuotaReserved", "False", "Inadmissible", "LocalQueue team-a doesn't exist")),
         None, None, INADMISSIBLE,
         "not admissible (Kueue: LocalQueue team-a): LocalQueue team-a doesn't exist; it waits until that is fixed"),
        (workload(RESERVED_, ADMITTED_, admitted_by="cq"), None, None, ADMITTED,
         "admitted (Kueue: ClusterQueue cq)"),
        (workload(RESERVED_, cond("Admitted", "False", "NoChecks"), admitted_by="cq"), None, None,
         RESERVED, "quota reserved, waiting for admission checks (Kueue: ClusterQueue cq)"),
        (workload(PENDING, PREEMPTED_EVICTION, PREEMPTED_IN_CQ), "cq", 2, PREEMPTED,
         "preempted by Kueue (InClusterQueue: Preempted to accommodate a workload (UID: u2) due to "
         "prioritization); waiting for quota again (Kueue: ClusterQueue cq)"),
        (workload(PENDING, TIMEOUT), "cq", None, EVICTED,
         "evicted by Kueue (PodsReadyTimeout: Exceeded the PodsReady timeout); waiting for quota "
         "again (Kueue: ClusterQueue cq)"),
        (workload(DEACTIVATED_, active=False), "cq", None, DEACTIVATED,
         "suspended by the user: its Kueue Workload is deactivated"),
        (workload(cond("Evicted", "True", "DeactivatedDueToRequeuingLimitExceeded",
                       "The workload is deactivated due to exceeding the maximum number of "
                       "re-queuing retries"), active=False), "cq", None, DEACTIVATED,
         "deactivated by Kueue (DeactivatedDueToRequeuingLimitExceeded: The workload is "
         "deactivated due to exceeding the maximum number of re-queuing retries), holding no quota"),
        (workload(ADMITTED_, cond("Finished", "True", "Succeeded"), admitted_by="cq"), None, None,
         FINISHED, "finished"),
        # conditions reset to False once quota is reserved again (pkg/workload/workload.go)
        (workload(RESERVED_, ADMITTED_, cond("Evicted", "False", "QuotaReserved"),
                  cond("Preempted", "False", "QuotaReserved"), admitted_by="cq"), None, None,
         ADMITTED, "admitted (Kueue: ClusterQueue cq)"),
    ],
)  # fmt: skip
def test_a_workloads_conditions_in_words(wl, cq, position, state, text):
    said = workload_state(wl, cq, position)
    assert said.state == state
    assert said.text.startswith(text), said.text


def test_a_workload_is_the_jobs_only_when_labelled_with_its_uid_and_controlled_by_it():
    assert owned_by(workload(), "uid-fit")
    assert not owned_by(workload(uid="uid-other"), "uid-fit")
    stray = workload()
    stray["metadata"]["ownerReferences"][0]["controller"] = False
    assert not owned_by(stray, "uid-fit")


def test_positions_count_from_one_and_skip_what_is_not_a_position():
    summary = {"items": [
        {"metadata": {"name": "a"}, "positionInClusterQueue": 0, "positionInLocalQueue": 0},
        {"metadata": {"name": "b"}, "positionInClusterQueue": 2, "positionInLocalQueue": 1},
        {"metadata": {"name": "c"}, "positionInClusterQueue": True},
        {"metadata": {}, "positionInClusterQueue": 4},
    ]}  # fmt: skip
    assert positions(summary) == {"a": 1, "b": 3}
    assert positions({}) == {}


# ----- through the backend, on the fake cluster -------------------------------------------------


@pytest.fixture
def visibility(monkeypatch):
    """The visibility API's answers, by LocalQueue (none: not served, a 404)."""
    served: dict[str, dict] = {}
    asked: list[str] = []

    def summary(cluster, queue):
        asked.append(queue)
        if queue not in served:
            raise BackendError("the server could not find the requested resource", 404)
        return served[queue]

    monkeypatch.setattr(kueue, "pending_summary", summary)
    return served, asked


def queued_job(kube, wl: dict | None, suspend: bool = True) -> None:
    kube.add_trainjob("fit", labels=dict(QUEUE))
    kube.get("trainjobs", "fit")["spec"]["suspend"] = suspend
    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"}})
    if wl is not None:
        kube.put("workloads", wl)


def test_a_job_waiting_for_quota_names_its_cluster_queue_and_position(backend, kube, visibility):
    served, asked = visibility
    queued_job(kube, workload(PENDING))
    served["team-a"] = {"items": [
        {"metadata": {"name": "other-1"}, "positionInClusterQueue": 0},
        {"metadata": {"name": "other-2"}, "positionInClusterQueue": 1},
        {"metadata": {"name": "trainjob-fit-1a2b3"}, "positionInClusterQueue": 2}]}  # fmt: skip
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is Status.QUEUED
        assert info.status_text.startswith(
            "Queued (waiting for quota (Kueue: ClusterQueue cq, position 3): couldn't assign"
        )
    assert asked == ["team-a", "team-a"]


def test_without_the_visibility_api_the_position_is_left_out(backend, kube, visibility):
    queued_job(kube, workload(PENDING))
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.reason == f"waiting for quota (Kueue: ClusterQueue cq): {NO_QUOTA}"


@pytest.mark.parametrize(
    "answer, retry",
    [
        (status_error(404, "NotFound", "the server could not find the requested resource"),
         kueue.VISIBILITY_RETRY),
        (status_error(403, "Forbidden", "cannot get resource localqueues/pendingworkloads"),
         kueue.VISIBILITY_RETRY),
        # its APIService registered, its server down: each call waited for the aggregator
        (status_error(503, "ServiceUnavailable", "the server is currently unable to handle the "
                      "request"), kueue.VISIBILITY_DOWN_RETRY),
        (urllib3.exceptions.ReadTimeoutError(None, "/apis", "read timed out"),
         kueue.VISIBILITY_DOWN_RETRY),  # no answer in VISIBILITY_TIMEOUT (a 504)
        (status_error(500, "InternalError", "the visibility server failed"), None),
    ],
)  # fmt: skip
def test_a_cluster_without_the_visibility_api_is_asked_again_only_after_a_while(
    backend, kube, monkeypatch, answer, retry
):
    """Each listing of a waiting job once made one failing call to a visibility API the
    cluster does not serve (or the user may not read, or whose server is down): the backend
    remembers it for VISIBILITY_RETRY seconds (VISIBILITY_DOWN_RETRY); another failure is asked
    again at the next listing."""
    from unittest import mock

    from kubernetes import client

    asked = mock.Mock(side_effect=answer)  # the one call kueue.py makes through call_api
    monkeypatch.setattr(client.ApiClient, "call_api", asked)
    clock = [1000.0]
    monkeypatch.setattr(kueue, "monotonic", lambda: clock[0])
    queued_job(kube, workload(PENDING))
    for _ in range(3):
        [info] = backend.list_jobs()
        assert info.reason == f"waiting for quota (Kueue: ClusterQueue cq): {NO_QUOTA}"
    assert backend.get_job("fit").reason == info.reason
    remembered = retry is not None
    assert asked.call_count == (1 if remembered else 4)
    assert "/pendingworkloads" in asked.call_args.args[0]
    clock[0] += (retry or kueue.VISIBILITY_RETRY) - 1
    backend.list_jobs()
    assert asked.call_count == (1 if remembered else 5)
    clock[0] += 1  # the bound: asked again, in case it was installed or allowed since
    backend.list_jobs()
    assert asked.call_count == (2 if remembered else 6)
    assert KubernetesBackend(poll_interval=0.002).list_jobs()[0].reason == info.reason
    assert asked.call_count == (3 if remembered else 7)  # a new backend asks for itself


def test_an_admitted_job_starting_and_running(backend, kube, visibility):
    queued_job(kube, workload(RESERVED_, ADMITTED_, admitted_by="cq"), suspend=False)
    kube.add_pod("fit", 0, "Pending")
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is Status.QUEUED
        assert info.reason == "admitted (Kueue: ClusterQueue cq); node 0: ContainerCreating"


def test_an_admitted_job_whose_pods_run_is_running_without_asking_kueue(backend, kube, visibility):
    queued_job(kube, workload(RESERVED_, ADMITTED_, admitted_by="cq"), suspend=False)
    kube.add_pod("fit", 0, "Running")
    before = kube.count("list_namespaced_custom_object")
    info = backend.get_job("fit")
    assert (info.status, info.reason) == (Status.RUNNING, None)
    assert kube.count("list_namespaced_custom_object") == before  # its Workload is not read


def test_a_preempted_job_says_so_not_merely_waiting(backend, kube, visibility):
    queued_job(kube, workload(PENDING, PREEMPTED_EVICTION, PREEMPTED_IN_CQ))
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is Status.QUEUED
        assert info.reason.startswith("preempted by Kueue (InClusterQueue: ")
    assert visibility[1] == []  # a preempted job's position is not asked


def test_a_job_stopped_by_the_user_reads_suspended_by_the_user(backend, kube, visibility):
    queued_job(kube, workload(DEACTIVATED_, active=False))
    kube.get("trainjobs", "fit")["metadata"]["annotations"] = {
        "kale-ext.io/stopped": "stopped by ana at 2026-01-01T00:00:00Z"}  # fmt: skip
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status_text == "Stopped"
        assert info.reason.startswith(
            "stopped by ana at 2026-01-01T00:00:00Z; suspended by the user"
        )
        assert "waiting" not in info.reason


def test_a_job_its_sweep_stopped_is_suspended_not_by_the_user(backend, kube, visibility):
    queued_job(kube, workload(DEACTIVATED_, active=False))
    kube.get("trainjobs", "fit")["metadata"]["annotations"] = {
        "kale-ext.io/stopped": "stopped early: loss 0.9 at step 3"}  # fmt: skip
    info = backend.get_job("fit")
    assert info.status_text == "Stopped early"
    assert info.reason.startswith("stopped early: loss 0.9 at step 3; suspended: its Kueue")


def test_a_workload_deactivated_elsewhere_reads_suspended_by_the_user(backend, kube, visibility):
    queued_job(kube, workload(DEACTIVATED_, active=False))
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is Status.QUEUED
        assert info.reason.startswith("suspended by the user: its Kueue Workload is deactivated")


def test_a_suspended_job_whose_pods_still_stop_reads_its_workload(backend, kube, visibility):
    """Kueue suspended it (its Workload deactivated) and its pod is still Running while it
    stops: the Workload says why, as once the pod is gone (the pods alone said nothing)."""
    queued_job(kube, workload(DEACTIVATED_, active=False))
    kube.add_pod("fit", 0, "Running")
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is Status.QUEUED
        assert info.reason.startswith("suspended by the user: its Kueue Workload is deactivated")


def test_a_workload_that_cannot_be_read_leaves_the_queue_named(backend, kube, visibility):
    queued_job(kube, workload(PENDING))
    kube.failures["list_namespaced_custom_object"] = status_error(
        403, "Forbidden", 'workloads.kueue.x-k8s.io is forbidden: User "ana" cannot list'
    )
    assert backend.get_job("fit").reason == "waiting for Kueue queue team-a to admit it"


def test_a_listing_reads_the_workloads_once_however_many_jobs(backend, kube, visibility):
    for name in ("a", "b", "c"):
        kube.add_trainjob(name, labels=dict(QUEUE))
        kube.get("trainjobs", name)["spec"]["suspend"] = True
        kube.put("workloads", workload(PENDING, uid=f"uid-{name}", name=f"trainjob-{name}-00000"))
    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"}})
    before = kube.count("list_namespaced_custom_object")
    infos = backend.list_jobs()
    assert [i.reason.split(":")[0] for i in infos] == ["waiting for quota (Kueue"] * 3
    # the TrainJobs, the Workloads, the LocalQueues; and one LocalQueue's positions
    assert kube.count("list_namespaced_custom_object") - before == 3
    assert visibility[1] == ["team-a"]


def test_a_submit_to_a_queue_that_cannot_hold_it_says_so(backend, kube):
    from tests.harness.kube_fixtures import make_spec

    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"}})
    assert backend.submit(make_spec({"queue": "team-a"})).warnings == ()
    missing = backend.submit(make_spec({"queue": "team-b", "name": "fit-2"}))
    assert missing.warnings == ("queue team-b: namespace team has no such Kueue LocalQueue, so "
                                "the job waits until one is made (`kale-ext queues` lists them)",)  # fmt: skip
    kube.failures["get_namespaced_custom_object"] = status_error(
        404, "NotFound", "the server could not find the requested resource"
    )
    unserved = backend.submit(make_spec({"queue": "team-a", "name": "fit-3"}))
    assert unserved.warnings == ("queue team-a: this cluster does not serve localqueues.kueue."
                                 "x-k8s.io/v1beta2 (is Kueue installed?), so the job runs without "
                                 "waiting for quota",)  # fmt: skip
    assert kube.get("trainjobs", "fit-3")["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "team-a"
    }  # what was asked, with the warning


def test_the_namespaces_queues(backend, kube):
    kube.put("localqueues", {"metadata": {"name": "team-b"}, "spec": {"clusterQueue": "cq"},
                             "status": {"pendingWorkloads": 2, "admittedWorkloads": 1}})  # fmt: skip
    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"}})
    assert backend.list_queues() == (
        [Queue("team-a", "cq"), Queue("team-b", "cq", pending=2, admitted=1)],
        None,
    )


@pytest.mark.parametrize(
    "failure, says",
    [(None, "namespace team has no Kueue LocalQueue"),
     (status_error(404, "NotFound", "the server could not find the requested resource"),
      "Kueue (≥ 0.15) is not installed"),
     (status_error(403, "Forbidden", 'localqueues.kueue.x-k8s.io is forbidden: User "ana"'),
      "listing queues needs list on localqueues.kueue.x-k8s.io in namespace team")],
)  # fmt: skip
def test_no_queue_to_list_says_why(backend, kube, failure, says):
    if failure is not None:
        kube.failures["list_namespaced_custom_object"] = failure
    queues, reason = backend.list_queues()
    assert queues == [] and says in reason


def test_another_failure_to_list_queues_is_an_error(backend, kube):
    kube.failures["list_namespaced_custom_object"] = status_error(500, "InternalError", "etcd down")
    with pytest.raises(BackendError, match="etcd down"):
        backend.list_queues()


# ----- on the emulated cluster, with its Kueue and visibility API (tests/harness/cluster) --------

SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)


@pytest.mark.parametrize("emulated_cluster", [{"kueue": True, "kueue_quota": 1}], indirect=True)
def test_waiting_jobs_read_their_cluster_queue_and_place_until_quota_frees(
    emulated_cluster, kube_api, tmp_path
):
    """Kueue admits one Workload at a time: the others wait, each with its ClusterQueue (from
    the LocalQueue) and its position (from the visibility API), in `get_job` and `list_jobs`;
    a stop releases the quota, the next job runs and the one behind it moves up."""
    cluster, custom = emulated_cluster, kube_api[1]
    custom.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "team", "localqueues", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cluster-queue"}})  # fmt: skip
    k8s = KubernetesBackend(poll_interval=0.1)
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(SLOW))
    for name in ("first", "second", "third"):
        submit(k8s, path, {"queue": "team-a", "name": name})
        if name == "first":
            cluster.wait_for(
                lambda: k8s.get_job("first").status is Status.RUNNING, 120, "first runs"
            )
    waits = "waiting for quota (Kueue: ClusterQueue cluster-queue, position {}): couldn't assign"

    def reasons() -> dict:
        return {n: k8s.get_job(n).reason for n in ("second", "third")}

    said = cluster.wait_for(lambda: all("position" in (r or "") for r in reasons().values())
                            and reasons(), 60, "both wait with a position")  # fmt: skip
    assert said["second"].startswith(waits.format(1)), said
    assert said["third"].startswith(waits.format(2)), said
    listed = {i.name: i for i in k8s.list_jobs()}
    assert listed["third"].status_text.startswith(f"Queued ({waits.format(2)}")

    stopped = stop(k8s, "first", "ana")
    assert stopped.status_text == "Stopped" and "suspended by the user" in stopped.reason
    cluster.wait_for(lambda: k8s.get_job("second").status is Status.RUNNING, 120, "second runs")
    cluster.wait_for(lambda: waits.format(1) in (k8s.get_job("third").reason or ""), 60,
                     "third moves up")  # fmt: skip
