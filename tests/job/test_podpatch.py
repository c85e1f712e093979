"""The TrainJob's one runtime patch: it targets the runtime's own trainer job and container (as
the runtime names them), and the Trainer's schema and webhooks accept it."""

from __future__ import annotations

import copy

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.podpatch import MANAGER, runtime_patch
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from kale_ext.job.workspace import collect
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob
from tests.harness.runtimes import runtime_manifest
from tests.job.test_workspace import tree

NB = notebook("print(open('data.csv').read())")


def renamed(trainer_job: str, container: str = "node") -> dict:
    """torch-distributed with its trainer job (and container) named otherwise."""
    manifest = runtime_manifest("torch-distributed")
    manifest["metadata"]["name"] = "custom"
    [job] = manifest["spec"]["template"]["spec"]["replicatedJobs"]
    job["name"] = trainer_job
    job["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = container
    return manifest


def spec_on(manifest: dict, workspace=None, options=None):
    runtime = Runtime.from_manifest(manifest)
    return build_job_spec(compile_notebook(NB), {"name": "fit", **(options or {})}, runtime,
                          workspace=workspace)  # fmt: skip


@pytest.fixture
def workspace(tmp_path):
    return collect(tree(tmp_path, {"data.csv": "a,b\n1,2\n"}))


def pod_of(patch: dict) -> tuple[str, dict]:
    [job] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return job["name"], job["template"]["spec"]["template"]


def test_nothing_to_patch_is_no_patch():
    assert runtime_patch(spec_on(runtime_manifest("torch-distributed"))) is None


@pytest.mark.parametrize("trainer_job", ["node", "trainer"])
def test_the_workspace_is_mounted_in_the_runtimes_own_trainer_job(workspace, trainer_job):
    manifest = (
        renamed(trainer_job) if trainer_job != "node" else runtime_manifest("torch-distributed")
    )
    spec = spec_on(manifest, workspace, {"config": {"labels": {"team": "a"}}})
    patch = runtime_patch(spec)
    assert patch["manager"] == MANAGER
    name, template = pod_of(patch)
    assert name == trainer_job
    assert template["metadata"] == {"labels": {"team": "a"}}
    assert [v["name"] for v in template["spec"]["volumes"]] == ["kale-ext-workspace"]
    assert template["spec"]["containers"] == [
        {"name": "node", "volumeMounts": [{"name": "kale-ext-workspace",
                                           "mountPath": "/var/run/kale-ext/workspace",
                                           "readOnly": True}]}
    ]  # fmt: skip
    validate_trainjob(trainjob_dict(spec), manifest)


def test_the_patch_never_names_a_job_the_runtime_lacks(workspace):
    manifest = renamed("trainer")
    tj = trainjob_dict(spec_on(manifest, workspace))
    wrong = copy.deepcopy(tj)
    jobs = wrong["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    jobs["replicatedJobs"][0]["name"] = "node"  # what a guess would have written
    with pytest.raises(AssertionError, match="the runtime has no replicated job 'node'"):
        validate_trainjob(wrong, manifest)


def test_a_trainer_job_without_the_node_container_cannot_mount_volumes(workspace):
    spec = spec_on(renamed("node", container="main"), workspace)
    with pytest.raises(ConfigError) as info:
        runtime_patch(spec)
    assert info.value.field == "runtime"
    assert "custom's trainer job 'node' has no container named 'node' (it has main)" in str(
        info.value
    )
