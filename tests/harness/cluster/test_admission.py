"""What the emulated API server refuses, through the real kubernetes client: the TrainJob
checks (strict schema, CEL rules, the Trainer's webhook) with the answers a real cluster
gives."""

import json

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from kubernetes.client.exceptions import ApiException  # noqa: E402

from tests.harness.emulated import GROUP, VERSION, trainjob  # noqa: E402

NS = "team"


def create(custom, body, **kw):
    return custom.create_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", body, **kw)


@pytest.mark.parametrize(
    "change, params, code, reason, said",
    [
        (lambda tj: tj["metadata"].update(name="Bad_Name"), {}, 422, "Invalid",
         'TrainJob.trainer.kubeflow.org "Bad_Name" is invalid: TrainJob: metadata.name must match '
         "RFC 1035 DNS label format"),
        (lambda tj: tj["spec"]["trainer"].update(numNodes="two"), {}, 422, "Invalid",
         "spec.trainer.numNodes: 'two' is not of type 'integer'"),
        (lambda tj: tj["spec"]["trainer"].update(podSpecOverrides=[]), {"field_validation": "Strict"},
         400, "BadRequest", 'strict decoding error: unknown field "spec.trainer.podSpecOverrides"'),
        (lambda tj: tj["spec"]["trainer"].update(env=[{"name": "PET_NNODES", "value": "3"}]), {}, 403,
         "Forbidden", 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
         "spec.trainer.env[0]: PET_NNODES is set by the torch plugin (reserved)"),
        (lambda tj: tj["spec"]["runtimeRef"].update(name="nope"), {}, 403, "Forbidden",
         'spec.runtimeRef: Not found: ClusterTrainingRuntime.trainer.kubeflow.org "nope" not found'),
    ],
    ids=["cel", "schema", "strict", "webhook", "runtime"],
)  # fmt: skip
def test_what_admission_refuses(kube_api, change, params, code, reason, said):
    _, custom = kube_api
    body = trainjob("fit", valid=False)
    change(body)
    with pytest.raises(ApiException) as refused:
        create(custom, body, **params)
    answer = json.loads(refused.value.body)
    assert (refused.value.status, answer["kind"], answer["reason"]) == (code, "Status", reason)
    assert said in answer["message"]
    assert custom.list_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs")["items"] == []


def test_an_update_may_not_change_runtime_patches_of_a_running_job(kube_api):
    _, custom = kube_api
    create(custom, trainjob("fit", script="import time; time.sleep(60)"))
    patch = {"manager": "example.com/late", "trainingRuntimeSpec": {}}
    with pytest.raises(ApiException) as refused:
        custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                              {"spec": {"runtimePatches": [patch]}})  # fmt: skip
    assert (
        refused.value.status == 403 and "only while the TrainJob is suspended" in refused.value.body
    )


def test_a_stored_trainjob_gets_the_crds_defaults_and_its_patches_their_time(kube_api):
    """As the real API server and the Trainer's defaulting webhook: suspend false, managedBy, and
    each runtime patch the time it was last changed (kept by an update that leaves it as it was,
    renewed by one that changes it)."""
    _, custom = kube_api
    late = {"manager": "example.com/late", "trainingRuntimeSpec": {}}
    made = create(custom, trainjob("fit", script="import time; time.sleep(60)", patches=[late]))
    assert (made["spec"]["suspend"], made["spec"]["managedBy"]) == (
        False, "trainer.kubeflow.org/trainjob-controller")  # fmt: skip
    [stamped] = made["spec"]["runtimePatches"]
    assert stamped["time"].endswith("Z")

    def patch(spec):
        return custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                                     {"spec": spec})  # fmt: skip

    assert patch({"suspend": True})["spec"]["runtimePatches"] == [stamped]
    changed = {**late, "trainingRuntimeSpec": {"template": {"spec": {}}}}
    renewed = patch({"runtimePatches": [{**changed, "time": "2000-01-01T00:00:00Z"}]})
    assert renewed["spec"]["runtimePatches"][0]["time"] not in ("2000-01-01T00:00:00Z", None)
