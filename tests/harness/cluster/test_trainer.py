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


def test_replicated_jobs_other_than_the_trainer_are_not_run(emulated_cluster, kube_api):
    body = trainjob("fit", valid=False)
    body["spec"]["runtimeRef"]["name"] = "torch-distributed-with-cache"
    submit(kube_api[1], body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert ("TrainJob", "NotEmulated", "the emulated cluster runs the trainer job only; not run: "
            "dataset-initializer") in events(emulated_cluster, "fit")  # fmt: skip
