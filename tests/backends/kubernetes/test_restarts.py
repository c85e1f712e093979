"""A job with restarts on a cluster (tests/harness/fake_kube.py's API server): its own
TrainingRuntime made before its TrainJob and owned by it, gone when a submit fails or the job is
deleted, never listed among the runtimes; the views say which restart its pods belong to.
The real Trainer and JobSet run it in tests/harness/controlplane/test_kale_ext.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kale_ext.backends.base import BackendError
from kale_ext.backends.kubernetes.restarts import restart_said
from kale_ext.job.restart_runtime import RESTART_ATTEMPT_LABEL
from tests.harness.fake_kube import status_error
from tests.harness.kube_fixtures import make_spec


def test_a_job_with_restarts_runs_on_a_training_runtime_it_owns(backend, kube):
    backend.submit(make_spec({"max_restarts": 2}))
    trainjob = kube.get("trainjobs", "fit")  # valid against its runtime, or the fake refuses it
    assert trainjob["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "fit",
    }  # fmt: skip
    runtime = kube.get("trainingruntimes", "fit")
    assert runtime["spec"]["template"]["spec"]["failurePolicy"] == {"maxRestarts": 2}
    [owner] = runtime["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "TrainJob", "fit", trainjob["metadata"]["uid"],
    )  # fmt: skip
    made = [c.args[3] for c in kube.mocks["create_namespaced_custom_object"].call_args_list]
    assert made == ["trainingruntimes", "trainjobs"]  # the runtime first: the job names it
    assert all(c.kwargs["field_validation"] == "Strict"
               for c in kube.mocks["create_namespaced_custom_object"].call_args_list)  # fmt: skip
    assert [r.name for r in backend.list_runtimes()] == ["torch-distributed"]
    assert backend.get_job("fit").runtime == "torch-distributed"  # the one asked for

    backend.delete("fit")
    assert kube.get("trainingruntimes", "fit") is None  # collected with its owner


def test_a_job_without_restarts_makes_no_runtime(backend, kube):
    backend.submit(make_spec())
    assert kube.objects.get(("trainingruntimes", "team"), {}) == {}
    assert kube.get("trainjobs", "fit")["spec"]["runtimeRef"]["name"] == "torch-distributed"


def test_a_submit_that_fails_leaves_no_runtime_behind(backend, kube):
    refused = status_error(403, "Forbidden", "trainjobs.trainer.kubeflow.org is forbidden")

    def second_call_fails(count: int) -> None:  # the runtime is made, the TrainJob refused
        if count == 2:
            raise refused

    kube.hooks["create_namespaced_custom_object"] = second_call_fails
    with pytest.raises(BackendError, match="forbidden"):
        backend.submit(make_spec({"max_restarts": 1}))
    assert kube.get("trainingruntimes", "fit") is None
    assert kube.get("trainjobs", "fit") is None


@pytest.mark.parametrize(
    "attempts, reason, said",
    [
        ([], "node 1: CrashLoopBackOff", "node 1: CrashLoopBackOff"),
        (["0", "0"], None, None),
        (["1", "0"], None, "restart 1 of 2"),
        (["2", "2"], "pods are starting", "restart 2 of 2; pods are starting"),
        (["x"], None, None),
    ],
)
def test_the_views_say_which_restart_runs(attempts, reason, said):
    pods = [SimpleNamespace(metadata=SimpleNamespace(labels={RESTART_ATTEMPT_LABEL: a}))
            for a in attempts]  # fmt: skip
    assert restart_said(pods, {"kale-ext.io/max-restarts": "2"}, reason) == said
