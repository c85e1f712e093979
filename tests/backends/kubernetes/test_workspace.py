"""The workspace's ConfigMaps on the (fake) cluster: made before the TrainJob, owned by it after,
shared by jobs of the same workspace, and never left behind by a failed submit."""

from __future__ import annotations

import pytest

from kale_ext.backends.base import BackendError
from kale_ext.compile.compiler import compile_notebook
from kale_ext.job.runtimes import Runtime
from kale_ext.job.shipping import configmap_names
from kale_ext.job.spec import build_job_spec
from kale_ext.job.workspace import collect
from tests.harness.fake_kube import status_error
from tests.harness.kube_fixtures import NB
from tests.harness.runtimes import runtime_manifest
from tests.job.test_workspace import tree

RUNTIME = Runtime.from_manifest(runtime_manifest("torch-distributed"))


@pytest.fixture
def workspace(tmp_path):
    return collect(tree(tmp_path, {"helpers.py": "x = 1\n", "data.csv": "a\n1\n"}))


def spec(name: str, workspace):
    return build_job_spec(compile_notebook(NB), {"name": name}, RUNTIME, workspace=workspace)


def names(kube) -> list[str]:
    return sorted(kube._store("configmaps", "team"))


def owners(kube, name: str) -> list[str]:
    return [o["name"] for o in kube.get("configmaps", name)["metadata"].get("ownerReferences", [])]


def test_configmaps_come_first_then_the_trainjob_then_their_owner(backend, kube, workspace):
    backend.submit(spec("fit", workspace))
    order = [c[0] for c in kube.calls if c[0].startswith(("create", "patch"))]
    assert order == ["create_namespaced_config_map", "create_namespaced_custom_object",
                     "patch_namespaced_config_map"]  # fmt: skip
    [cm] = configmap_names(workspace.packed())
    assert names(kube) == [cm]
    owner = kube.get("configmaps", cm)["metadata"]["ownerReferences"]
    assert owner == [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                      "name": "fit", "uid": "uid-fit"}]  # fmt: skip
    pod = kube.get("trainjobs", "fit")["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]
    volume = pod["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert volume["volumes"][0]["projected"]["sources"] == [{"configMap": {"name": cm}}]


def test_an_unchanged_workspace_is_uploaded_once_and_goes_with_its_last_job(
    backend, kube, workspace
):
    backend.submit(spec("first", workspace))
    backend.submit(spec("second", workspace))
    assert kube.count("create_namespaced_config_map") == 1
    [cm] = names(kube)
    assert owners(kube, cm) == ["first", "second"]
    backend.delete("first")
    assert owners(kube, cm) == ["second"]
    backend.delete("second")
    assert names(kube) == []


def test_a_failed_trainjob_create_deletes_the_configmaps_it_made(
    backend, kube, workspace, tmp_path
):
    backend.submit(spec("kept", workspace))
    other = collect(tree(tmp_path / "other", {"b.py": "y = 2\n"}))
    kube.failures["create_namespaced_custom_object"] = status_error(
        422, "Invalid", 'TrainJob.trainer.kubeflow.org "bad" is invalid'
    )
    with pytest.raises(BackendError, match="is invalid"):
        backend.submit(spec("bad", other))
    with pytest.raises(BackendError, match="is invalid"):
        backend.submit(spec("bad", workspace))  # shared with "kept": not its to delete
    assert names(kube) == configmap_names(workspace.packed())
    assert owners(kube, names(kube)[0]) == ["kept"]


def test_a_configmap_collected_meanwhile_is_made_again_owned(backend, kube, workspace):
    backend.submit(spec("old", workspace))
    [cm] = names(kube)
    # the old job is deleted while the new one is being submitted: its ConfigMap goes with it
    kube.hooks["create_namespaced_custom_object"] = lambda n: backend.delete("old")
    backend.submit(spec("new", workspace))
    assert owners(kube, cm) == ["new"]


def test_a_configmap_changed_meanwhile_is_patched_again(backend, kube, workspace):
    backend.submit(spec("first", workspace))
    [cm] = names(kube)

    def someone_else_edits(n: int) -> None:
        if n == 2:  # between our read and our patch: the guard on resourceVersion fails
            meta = kube.get("configmaps", cm)["metadata"]
            meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)

    kube.hooks["patch_namespaced_config_map"] = someone_else_edits
    backend.submit(spec("second", workspace))
    assert owners(kube, cm) == ["first", "second"]
    assert kube.count("patch_namespaced_config_map") == 3  # one refused, one retried


def test_when_owning_fails_the_trainjob_and_the_new_configmaps_go(backend, kube, workspace):
    kube.failures["patch_namespaced_config_map"] = status_error(
        403, "Forbidden", 'configmaps "x" is forbidden: User "me" cannot patch'
    )
    with pytest.raises(BackendError, match="cannot patch"):
        backend.submit(spec("fit", workspace))
    assert names(kube) == [] and kube.get("trainjobs", "fit") is None
