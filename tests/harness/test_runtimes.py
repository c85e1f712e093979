"""The official runtimes as facts (tests/harness/runtimes.py): they build the runtimes kale_ext
reads, and they are the official files' facts wherever ../shared is present."""

from __future__ import annotations

import pytest

from kale_ext.job.runtimes import Runtime
from tests.conftest import ROOT
from tests.harness.runtimes import RUNTIMES, facts_of, official_runtimes, runtime_manifest
from tests.harness.shared import ENV, shared_dir, trainer_dir

TORCH = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"


@pytest.mark.parametrize(
    "name, framework, jobs, image, mpi",
    [
        ("torch-distributed", "torch", ("node",), TORCH, False),
        ("torch-distributed-with-cache", "torch", ("dataset-initializer", "node"), TORCH, False),
        ("deepspeed-distributed", "deepspeed", ("node", "launcher"),
         "ghcr.io/kubeflow/trainer/deepspeed-runtime", True),
        ("torchtune-qwen2.5-1.5b", "torchtune",
         ("dataset-initializer", "model-initializer", "node"),
         "ghcr.io/kubeflow/trainer/torchtune-trainer", False),
        ("xgboost-distributed", "xgboost", ("node",), "ghcr.io/kubeflow/trainer/xgboost-runtime",
         False),
    ],
)  # fmt: skip
def test_the_runtimes_kale_ext_reads(name, framework, jobs, image, mpi):
    runtime = Runtime.from_manifest(runtime_manifest(name))
    assert (runtime.name, runtime.framework, runtime.replicated_jobs) == (name, framework, jobs)
    assert (runtime.image, runtime.mpi, runtime.kind) == (image, mpi, "ClusterTrainingRuntime")


def test_torchtune_asks_for_its_gpus():
    runtime = Runtime.from_manifest(runtime_manifest("torchtune-llama3.2-1b"))
    assert runtime.accelerators == {"nvidia.com/gpu": "2"}


def test_each_manifest_is_a_fresh_copy():
    first = runtime_manifest("torch-distributed")
    first["metadata"]["name"] = "changed"
    assert runtime_manifest("torch-distributed")["metadata"]["name"] == "torch-distributed"


def test_a_runtime_without_facts():
    with pytest.raises(KeyError, match="no facts for runtime 'nope' .*torch-distributed"):
        runtime_manifest("nope")


def test_the_facts_are_the_official_files():
    """Where ../shared is present: every official ClusterTrainingRuntime, and only those, with
    the same facts. Without it: the facts read back from the manifests they build."""
    official = official_runtimes()
    if official is None:
        assert {n: facts_of(runtime_manifest(n)) for n in RUNTIMES} == RUNTIMES
        return
    assert sorted(official) == sorted(RUNTIMES)
    for name, manifest in official.items():
        assert facts_of(manifest) == RUNTIMES[name], name


def test_the_shared_folder_is_found_beside_the_checkout_or_where_the_env_says(
    monkeypatch, tmp_path
):
    monkeypatch.delenv(ENV, raising=False)
    assert shared_dir() == ROOT.parent / "shared"
    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    assert shared_dir() == tmp_path / "nowhere"
    assert trainer_dir() is None and official_runtimes() is None
    (tmp_path / "nowhere" / "kubeflow-trainer" / "crds").mkdir(parents=True)
    assert trainer_dir() == tmp_path / "nowhere" / "kubeflow-trainer"
