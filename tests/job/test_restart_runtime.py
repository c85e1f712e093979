"""A job with restarts on a cluster: the TrainJob names a TrainingRuntime of its own, which sets
the JobSet's failure policy (a runtime patch cannot: Trainer v2.3.0 refuses failurePolicy in
one) and tells every node its restart attempt."""

from __future__ import annotations

import copy

import pytest
from kubeflow_trainer_api.models import TrainerV1alpha1TrainingRuntime

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.preview import render
from kale_ext.job.restart_runtime import (
    RESTART_ATTEMPT_LABEL,
    RUNTIME_OF,
    asked_runtime,
    restart_runtime,
)
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from tests.conftest import notebook
from tests.harness.crd import runtime_manifest, validate_trainjob

TRAIN = "print('train')"


def torch_runtime() -> tuple[Runtime, dict]:
    manifest = runtime_manifest("torch-distributed")
    return Runtime.from_manifest(manifest), manifest


def test_a_job_with_restarts_names_its_own_training_runtime():
    runtime, _ = torch_runtime()
    spec = build_job_spec(compile_notebook(notebook(TRAIN)), {"max_restarts": 2, "name": "rs"},
                          runtime)  # fmt: skip
    obj = trainjob_dict(spec)
    validate_trainjob(obj)
    ref = obj["spec"]["runtimeRef"]
    assert (ref["name"], ref["kind"]) == ("rs", "TrainingRuntime")
    notes = obj["metadata"]["annotations"]
    assert notes[RUNTIME_OF] == "ClusterTrainingRuntime/torch-distributed"
    assert notes["kale-ext.io/max-restarts"] == "2"
    assert asked_runtime(notes) == "torch-distributed"
    assert "runtimePatches" not in obj["spec"]  # nothing of the restarts in a patch
    assert [o["kind"] for o in render(spec).creates()] == ["TrainingRuntime", "TrainJob"]
    without = trainjob_dict(build_job_spec(compile_notebook(notebook(TRAIN)), {"name": "rs"},
                                           runtime))  # fmt: skip
    assert without["spec"]["runtimeRef"]["name"] == "torch-distributed"
    assert RUNTIME_OF not in without["metadata"]["annotations"]
    assert asked_runtime(without["metadata"]["annotations"]) is None


def test_its_training_runtime_sets_the_jobsets_failure_policy_and_the_restart_env():
    runtime, manifest = torch_runtime()
    manifest["spec"]["template"]["spec"]["failurePolicy"] = {
        "rules": [{"name": "never", "action": "FailJobSet", "onJobFailureReasons": ["x"]}]
    }
    before = copy.deepcopy(manifest)
    spec = build_job_spec(compile_notebook(notebook(TRAIN)), {"max_restarts": 3, "name": "rs"},
                          runtime)  # fmt: skip
    body = restart_runtime(spec, manifest)
    assert manifest == before  # its runtime's manifest is not changed
    assert body["kind"] == "TrainingRuntime" and body["metadata"]["name"] == "rs"
    assert body["metadata"]["labels"] == manifest["metadata"]["labels"]  # its framework label
    assert body["metadata"]["annotations"] == {
        RUNTIME_OF: "ClusterTrainingRuntime/torch-distributed"
    }
    jobset = body["spec"]["template"]["spec"]
    assert jobset["failurePolicy"] == {"maxRestarts": 3, **before["spec"]["template"]["spec"][
        "failurePolicy"]}  # fmt: skip
    [node] = jobset["replicatedJobs"]
    assert node["template"]["spec"]["backoffLimit"] == 0  # a failed node fails its Job at once
    [container] = node["template"]["spec"]["template"]["spec"]["containers"]
    assert container["env"][-1] == {
        "name": "KALE_EXT_RESTART",
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{RESTART_ATTEMPT_LABEL}']"}},
    }
    # every field is one the Trainer's own model of a TrainingRuntime has
    assert TrainerV1alpha1TrainingRuntime.from_dict(body).to_dict() == body


def test_a_runtime_without_the_node_container_is_refused_with_restarts():
    runtime, manifest = torch_runtime()
    pod = manifest["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    pod["template"]["spec"]["containers"][0]["name"] = "trainer"
    spec = build_job_spec(compile_notebook(notebook(TRAIN)), {"max_restarts": 1}, runtime)
    with pytest.raises(ConfigError) as info:
        restart_runtime(spec, manifest)
    assert info.value.field == "max_restarts" and "no container named 'node'" in info.value.message
