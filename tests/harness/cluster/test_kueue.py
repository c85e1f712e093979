"""The emulated Kueue (tests/harness/cluster/kueue.py): a queued TrainJob's Workload, its
admission, Kueue starting a job that was only suspended, and deactivation (runs small Python
commands as the jobs' nodes)."""

from __future__ import annotations

import pytest

from tests.harness.cluster.kueue import WORKLOADS, workload_name
from tests.harness.emulated import TRAINJOBS, finished, submit, trainjob

NS, QUEUE = "team", "kueue.x-k8s.io/queue-name"
SLEEP = "import time; print('up', flush=True); time.sleep(120)"
KUEUE = [{"kueue": True}]
ONE_AT_A_TIME = [{"kueue": True, "kueue_quota": 1}]


@pytest.mark.parametrize(
    "owner, uid, kind, group, name",
    [  # kubernetes-sigs/kueue pkg/controller/jobframework/workload_names_test.go
        ("name", "uid", "Job", "batch", "job-name-ef3a1"),
        ("a" * 300, "uid", "Job", "batch", None),  # truncated to 253
        ("fit", "uid", "TrainJob", "trainer.kubeflow.org", "trainjob-fit-"),
    ],
)
def test_workload_names_as_kueue_makes_them(owner, uid, kind, group, name):
    made = workload_name(owner, uid, kind, group)
    if name is None:
        assert len(made) == 253 and made.startswith("job-aaa") and made[-6] == "-"
    else:
        assert made.startswith(name) and len(made) == len(name) + 5 * name.endswith("-")
    assert made != workload_name(owner, uid + "x", kind, group)  # the uid is in the hash


def queued(name: str, script: str = SLEEP, queue: str = "team-a") -> dict:
    body = trainjob(name, script=script)
    body["metadata"]["labels"] = {QUEUE: queue}
    return body


def workload(cluster, name: str) -> dict | None:
    tj = cluster.get(TRAINJOBS, name)
    uid = tj["metadata"]["uid"]
    found = [w for w in cluster.items(WORKLOADS)
             if w["metadata"]["labels"].get("kueue.x-k8s.io/job-uid") == uid]  # fmt: skip
    return found[0] if found else None


def said(obj: dict, kind: str) -> tuple[str, str, str] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return c["status"], c["reason"], c["message"]
    return None


def events(cluster, kind: str, name: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in cluster.events()
            if (e["involvedObject"]["kind"], e["involvedObject"]["name"]) == (kind, name)]  # fmt: skip


def running(cluster, name: str) -> bool:
    pods = cluster.pods(name)
    return bool(pods) and all((p.get("status") or {}).get("phase") == "Running" for p in pods)


def settle(cluster, name: str) -> None:
    """Wait until Kueue has looked at the job as it is now and has nothing left to do."""
    cluster.wait_for(lambda: cluster.call(cluster.kueue.settled, NS, name), 60, "Kueue settled")


def patch(custom, plural: str, name: str, body: dict) -> None:
    group, version = ("kueue.x-k8s.io", "v1beta2") if plural == "workloads" else (
        "trainer.kubeflow.org", "v1alpha1")  # fmt: skip
    custom.patch_namespaced_custom_object(group, version, NS, plural, name, body)


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_a_queued_job_is_created_suspended_its_workload_admitted_and_it_runs(
    emulated_cluster, kube_api
):
    made = submit(kube_api[1], queued("fit", script="print('hi')"))
    assert made["spec"]["suspend"] is True  # Kueue's webhook
    cluster = emulated_cluster
    assert cluster.wait_for(lambda: finished(cluster, "fit"), 60, "the job to finish") == "Complete"
    wl = workload(cluster, "fit")
    uid = made["metadata"]["uid"]
    assert wl["metadata"]["name"] == workload_name("fit", uid)
    assert wl["metadata"]["ownerReferences"] == [{
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "fit",
        "uid": uid, "controller": True, "blockOwnerDeletion": True}]  # fmt: skip
    assert wl["spec"]["active"] is True and wl["spec"]["queueName"] == "team-a"
    cluster.wait_for(lambda: said(workload(cluster, "fit"), "Finished"), 30, "Finished")
    assert said(workload(cluster, "fit"), "Admitted")[0] == "False"  # its quota released
    assert ("CreatedWorkload", f"Created Workload: {NS}/{wl['metadata']['name']}") in events(
        cluster, "TrainJob", "fit"
    )
    assert ("Started", "Admitted by clusterQueue cluster-queue") in events(
        cluster, "TrainJob", "fit"
    )
    assert ("Admitted", "Admitted by ClusterQueue cluster-queue") in events(
        cluster, "Workload", wl["metadata"]["name"]
    )
    kube_api[1].delete_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", NS,
                                                "trainjobs", "fit")  # fmt: skip
    cluster.wait_for(lambda: not cluster.items(WORKLOADS), 30, "the Workload to go with its job")


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_kueue_starts_again_a_job_that_was_only_suspended(emulated_cluster, kube_api):
    cluster = emulated_cluster
    submit(kube_api[1], queued("fit"))
    cluster.wait_for(lambda: running(cluster, "fit"), 60, "the job to run")
    patch(kube_api[1], "trainjobs", "fit", {"spec": {"suspend": True}})
    settle(cluster, "fit")
    assert cluster.get(TRAINJOBS, "fit")["spec"]["suspend"] is False  # the reconciler's rule
    cluster.wait_for(lambda: running(cluster, "fit"), 60, "the job to run again")


@pytest.mark.parametrize("emulated_cluster", KUEUE, indirect=True)
def test_a_deactivated_workload_is_evicted_and_its_job_kept_suspended(emulated_cluster, kube_api):
    cluster, custom = emulated_cluster, kube_api[1]
    submit(custom, queued("fit"))
    cluster.wait_for(lambda: running(cluster, "fit"), 60, "the job to run")
    name = workload(cluster, "fit")["metadata"]["name"]
    patch(custom, "workloads", name, {"spec": {"active": False}})
    cluster.wait_for(lambda: not cluster.pods("fit"), 60, "the pods to go")
    settle(cluster, "fit")
    wl = workload(cluster, "fit")
    assert said(wl, "Evicted") == ("True", "Deactivated", "The workload is deactivated")
    assert said(wl, "Requeued")[:2] == ("False", "Deactivated")
    assert said(wl, "QuotaReserved")[0] == said(wl, "Admitted")[0] == "False"  # quota released
    assert cluster.get(TRAINJOBS, "fit")["spec"]["suspend"] is True
    assert ("EvictedDueToDeactivated", "The workload is deactivated") in events(
        cluster, "Workload", name
    )
    assert ("Stopped", "The workload is deactivated") in events(cluster, "TrainJob", "fit")

    patch(custom, "trainjobs", "fit", {"spec": {"suspend": False}})  # inactive: suspended again
    settle(cluster, "fit")
    assert cluster.get(TRAINJOBS, "fit")["spec"]["suspend"] is True

    patch(custom, "workloads", name, {"spec": {"active": True}})  # reactivated: queued again
    cluster.wait_for(lambda: running(cluster, "fit"), 60, "the job to run again")
    wl = workload(cluster, "fit")
    assert said(wl, "Requeued")[:2] == ("True", "Reactivated")
    assert said(wl, "Evicted")[0] == "False" and said(wl, "Admitted")[0] == "True"


@pytest.mark.parametrize("emulated_cluster", ONE_AT_A_TIME, indirect=True)
def test_a_job_waits_for_quota_and_gets_the_quota_a_deactivated_one_releases(
    emulated_cluster, kube_api
):
    cluster, custom = emulated_cluster, kube_api[1]
    submit(custom, queued("first"))
    cluster.wait_for(lambda: running(cluster, "first"), 60, "the first job to run")
    submit(custom, queued("second"))
    settle(cluster, "second")
    wl = workload(cluster, "second")
    assert said(wl, "QuotaReserved")[:2] == ("False", "Pending")
    assert cluster.get(TRAINJOBS, "second")["spec"]["suspend"] is True and not cluster.pods(
        "second"
    )
    assert ("Pending", said(wl, "QuotaReserved")[2]) in events(
        cluster, "Workload", wl["metadata"]["name"]
    )
    first = workload(cluster, "first")["metadata"]["name"]
    patch(custom, "workloads", first, {"spec": {"active": False}})
    cluster.wait_for(lambda: running(cluster, "second"), 60, "the second job to run")
    assert cluster.get(TRAINJOBS, "first")["spec"]["suspend"] is True


def test_kueue_is_off_unless_asked(emulated_cluster, kube_api):
    made = submit(kube_api[1], queued("fit", script="print('hi')"))
    assert not made["spec"].get("suspend")
    cluster = emulated_cluster
    assert cluster.wait_for(lambda: finished(cluster, "fit"), 60, "the job to finish") == "Complete"
    assert cluster.items(WORKLOADS) == [] and cluster.kueue is None


def pending(custom, queue: str, **params) -> list[tuple[str, int, int]]:
    """The visibility API's answer for LocalQueue ``queue``: (Workload, position in the
    ClusterQueue, position in the LocalQueue) each."""
    path = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{namespace}/localqueues/{name}"
    answer = custom.api_client.call_api(
        path + "/pendingworkloads", "GET", path_params={"namespace": NS, "name": queue},
        query_params=list(params.items()), response_type="object", auth_settings=["BearerToken"],
        _return_http_data_only=True)  # fmt: skip
    assert answer["kind"] == "PendingWorkloadsSummary"
    return [(i["metadata"]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"])
            for i in answer["items"]]  # fmt: skip


@pytest.mark.parametrize("emulated_cluster", ONE_AT_A_TIME, indirect=True)
def test_the_visibility_api_lists_a_local_queues_pending_workloads_in_order(
    emulated_cluster, kube_api
):
    cluster, custom = emulated_cluster, kube_api[1]
    submit(custom, queued("first"))
    cluster.wait_for(lambda: running(cluster, "first"), 60, "the first job to run")
    for name, queue in (("second", "team-a"), ("third", "team-b"), ("fourth", "team-a")):
        submit(custom, queued(name, queue=queue))
        cluster.wait_for(lambda n=name: said(workload(cluster, n) or {}, "QuotaReserved"), 30,
                         f"{name} to wait")  # fmt: skip
    names = {n: workload(cluster, n)["metadata"]["name"] for n in ("second", "third", "fourth")}
    assert pending(custom, "team-a") == [(names["second"], 0, 0), (names["fourth"], 2, 1)]
    assert pending(custom, "team-b") == [(names["third"], 1, 0)]
    assert pending(custom, "team-a", offset=1, limit=5) == [(names["fourth"], 2, 1)]
    assert pending(custom, "nobody") == []
