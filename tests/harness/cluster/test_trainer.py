"""The emulated Trainer: a TrainJob's pods, conditions and events through its life (runs real
processes: small Python commands)."""

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.harness.emulated import (  # noqa: E402
    TRAINJOBS,
    conditions,
    finished,
    node_state,
    submit,
    trainjob,
)

GROUP, VERSION, NS = "trainer.kubeflow.org", "v1alpha1", "team"
SLEEP = "import time; print('up', flush=True); time.sleep(120)"


def events(cluster, of: str) -> list[tuple[str, str, str]]:
    return [(e["involvedObject"]["kind"], e["reason"], e["message"]) for e in cluster.events()
            if e["involvedObject"]["name"].startswith(of)]  # fmt: skip


def test_a_job_completes_when_every_node_succeeds(emulated_cluster, kube_api):
    submit(kube_api[1], trainjob("fit", nodes=2))
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert conditions(emulated_cluster, "fit")["Complete"][1:] == (
        "AllJobsCompleted",
        "jobset completed successfully",
    )
    pods = emulated_cluster.pods("fit")
    assert [p["status"]["phase"] for p in pods] == ["Succeeded", "Succeeded"]
    assert [node_state(p)["terminated"]["reason"] for p in pods] == ["Completed", "Completed"]
    status = emulated_cluster.get(TRAINJOBS, "fit")["status"]["jobsStatus"]
    # JobSet counts Jobs, not pods: the trainer's one Job succeeded
    assert status == [{"name": "node", "ready": 0, "succeeded": 1, "failed": 0, "active": 0,
                       "suspended": 0}]  # fmt: skip
    assert ("Job", "SuccessfulCreate", f"Created pod: {pods[1]['metadata']['name']}") in events(
        emulated_cluster, "fit"
    )


def test_a_failing_node_restarts_until_the_backoff_limit_then_the_job_fails(
    emulated_cluster, kube_api
):
    submit(kube_api[1], trainjob("fit", script="import sys; print('trying'); sys.exit(3)"))
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Failed"
    said = conditions(emulated_cluster, "fit")["Failed"]
    assert said == (
        "True",
        "FailedJobs",
        "jobset failed due to one or more job failures (first failed job: fit-node-0)",
    )
    emulated_cluster.wait_for(lambda: not emulated_cluster.pods("fit"), 30, "the pod deleted")
    seen = events(emulated_cluster, "fit")
    assert ("Job", "BackoffLimitExceeded", "Job has reached the specified backoff limit") in seen
    backoffs = [e for e in emulated_cluster.events() if e["reason"] == "BackOff"]
    assert backoffs[0]["count"] == 7 and backoffs[0]["type"] == "Warning"  # 1 run + 6 restarts


def test_a_runtime_with_restart_policy_never_replaces_failed_pods(emulated_cluster, kube_api):
    from tests.harness.runtimes import runtime_manifest

    runtime = runtime_manifest("torch-distributed")
    runtime.update(kind="TrainingRuntime")
    [step] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    step["template"]["spec"]["backoffLimit"] = 1
    step["template"]["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    kube_api[1].create_namespaced_custom_object(GROUP, VERSION, NS, "trainingruntimes", runtime)
    body = trainjob("fit", script="raise SystemExit(2)", valid=False)
    body["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    submit(kube_api[1], body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Failed"
    pods = emulated_cluster.pods("fit")
    assert [p["status"]["phase"] for p in pods] == [
        "Failed",
        "Failed",
    ]  # the first and its replacement
    assert {node_state(p)["terminated"]["exitCode"] for p in pods} == {2}


def test_suspended_jobs_wait_for_their_resume(emulated_cluster, kube_api):
    _, custom = kube_api
    body = trainjob("fit")
    body["spec"]["suspend"] = True
    submit(custom, body)
    emulated_cluster.wait_for(lambda: "Suspended" in conditions(emulated_cluster, "fit"))
    assert conditions(emulated_cluster, "fit")["Suspended"] == (
        "True",
        "Suspended",
        "TrainJob is suspended",
    )
    assert emulated_cluster.pods("fit") == []
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, "trainjobs", "fit", {"spec": {"suspend": False}}
    )
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert conditions(emulated_cluster, "fit")["Suspended"][:2] == ("False", "Resumed")


def test_the_active_deadline_fails_the_job_and_deletes_its_pods(emulated_cluster, kube_api):
    body = trainjob("fit", script=SLEEP)
    body["spec"]["activeDeadlineSeconds"] = 1
    submit(kube_api[1], body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Failed"
    assert conditions(emulated_cluster, "fit")["Failed"][1] == "DeadlineExceeded"
    emulated_cluster.wait_for(lambda: not emulated_cluster.pods("fit"), 30, "the pods deleted")


def test_a_pod_name_over_63_characters_fails_when_the_jobset_is_made(emulated_cluster, kube_api):
    name = "a" * 49  # 49 + len("-node-0-0-abcde") = 64
    submit(kube_api[1], trainjob(name, valid=False))  # admission lets it in, as v2.3.0 does
    emulated_cluster.wait_for(lambda: events(emulated_cluster, name))
    [(kind, reason, message)] = events(emulated_cluster, name)
    assert (kind, reason) == ("TrainJob", "TrainJobResourcesCreationFailed")
    assert "must be no more than 63" in message
    assert "status" not in emulated_cluster.get(TRAINJOBS, name) and not emulated_cluster.pods(name)


def test_foreground_deletion_stops_the_pods_first(emulated_cluster, kube_api):
    _, custom = kube_api
    submit(custom, trainjob("fit", script=SLEEP, nodes=2))
    emulated_cluster.wait_for(lambda: all(
        node_state(p).get("running") for p in emulated_cluster.pods("fit")) and len(
        emulated_cluster.pods("fit")) == 2)  # fmt: skip
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                           propagation_policy="Foreground")  # fmt: skip
    emulated_cluster.wait_for(lambda: emulated_cluster.get(TRAINJOBS, "fit") is None, 30, "deleted")
    assert emulated_cluster.pods("fit") == []
    killing = [e for e in emulated_cluster.events() if e["reason"] == "Killing"]
    assert len(killing) == 2 and killing[0]["message"] == "Stopping container node"


def test_the_trainer_job_starts_once_the_initializer_it_depends_on_completes(
    emulated_cluster, kube_api
):
    """JobSet's dependsOn: torch-distributed-with-cache's node job waits for its
    dataset-initializer to Complete; the initializer gets the TrainJob's storage URI."""
    from tests.harness.runtimes import runtime_manifest

    runtime = runtime_manifest("torch-distributed-with-cache")
    runtime.update(kind="TrainingRuntime")
    first, _ = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    [init] = first["template"]["spec"]["template"]["spec"]["containers"]
    init["command"] = ["python", "-c", "import os; print('got', os.environ['STORAGE_URI'])"]
    kube_api[1].create_namespaced_custom_object(GROUP, VERSION, NS, "trainingruntimes", runtime)
    body = trainjob("fit", valid=False)
    body["spec"]["runtimeRef"].update(name="torch-distributed-with-cache", kind="TrainingRuntime")
    body["spec"]["initializer"] = {"dataset": {"storageUri": "hf://kale/data"}}
    submit(kube_api[1], body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    made = [(e["involvedObject"]["name"], e["message"].rsplit("-", 1)[0])
            for e in emulated_cluster.events() if e["reason"] == "SuccessfulCreate"]  # fmt: skip
    assert made == [("fit-dataset-initializer-0", "Created pod: fit-dataset-initializer-0-0"),
                    ("fit-node-0", "Created pod: fit-node-0-0")]  # in this order  # fmt: skip
    status = emulated_cluster.get(TRAINJOBS, "fit")["status"]["jobsStatus"]
    assert [(s["name"], s["succeeded"]) for s in status] == [("dataset-initializer", 1),
                                                              ("node", 1)]  # fmt: skip


def test_an_mpi_runtimes_other_jobs_are_not_run(emulated_cluster, kube_api):
    body = trainjob("fit", valid=False)
    body["spec"]["runtimeRef"]["name"] = "deepspeed-distributed"
    submit(kube_api[1], body)
    emulated_cluster.wait_for(lambda: emulated_cluster.pods("fit"))
    assert ("TrainJob", "NotEmulated", "the emulated cluster runs an MPI runtime's trainer job "
            "only; not run: node") in events(emulated_cluster, "fit")  # fmt: skip


def test_the_failure_policy_starts_every_node_again_then_fails_past_max_restarts(
    emulated_cluster, kube_api
):
    """JobSet's failurePolicy.maxRestarts with backoffLimit 0 (kale_ext's max_restarts): node 1
    fails on attempt 0 only, so attempt 1 (every pod made again, labelled so) completes; a
    job failing every attempt fails with ReachedMaxRestarts."""
    from tests.harness.runtimes import runtime_manifest

    runtime = runtime_manifest("torch-distributed")
    runtime.update(kind="TrainingRuntime")
    runtime["spec"]["template"]["spec"]["failurePolicy"] = {"maxRestarts": 1}
    [step] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    step["template"]["spec"]["backoffLimit"] = 0
    [node] = step["template"]["spec"]["template"]["spec"]["containers"]
    node["env"] = [{"name": "ATTEMPT", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"}}}]  # fmt: skip
    kube_api[1].create_namespaced_custom_object(GROUP, VERSION, NS, "trainingruntimes", runtime)
    fails = "import os; raise SystemExit(3 if os.environ['PET_NODE_RANK'] == '1' and {} else 0)"
    for name, when in (("once", "os.environ['ATTEMPT'] == '0'"), ("always", "True")):
        body = trainjob(name, script=fails.format(when), nodes=2, valid=False)
        body["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
        submit(kube_api[1], body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "once")) == "Complete"
    attempts = {p["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"]
                for p in emulated_cluster.pods("once")}  # fmt: skip
    assert attempts == {"1"}  # the first attempt's pods are gone
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "always")) == "Failed"
    assert conditions(emulated_cluster, "always")["Failed"] == (
        "True",
        "ReachedMaxRestarts",
        "jobset failed due to reaching max number of restarts (first failed job: always-node-0)",
    )
    restarted = [e for e in events(emulated_cluster, "always")
                 if e[1] == "RestartJobSetFailurePolicyAction"]  # fmt: skip
    assert len(restarted) == 1


def test_suspending_a_running_job_stops_its_pods_and_counts_its_job_suspended(
    emulated_cluster, kube_api
):
    _, custom = kube_api
    submit(custom, trainjob("fit", script=SLEEP, nodes=2))
    emulated_cluster.wait_for(lambda: len(emulated_cluster.pods("fit")) == 2 and all(
        node_state(p).get("running") for p in emulated_cluster.pods("fit")))  # fmt: skip
    custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                          {"spec": {"suspend": True}})  # fmt: skip
    emulated_cluster.wait_for(lambda: not emulated_cluster.pods("fit"), 30, "pods gone")
    status = emulated_cluster.get(TRAINJOBS, "fit")["status"]
    assert [(s["name"], s["suspended"], s["active"]) for s in status["jobsStatus"]] == [
        ("node", 1, 0)
    ]
    assert conditions(emulated_cluster, "fit")["Suspended"][:2] == ("True", "Suspended")
