"""The Trainer's published runtimes as facts (kale_ext/job/published_runtimes.py): what a preview
reads when no cluster can be asked. tests/harness/test_runtimes.py checks them against the
official files wherever those are present."""

from __future__ import annotations

import pytest

from kale_ext.job.published_runtimes import RUNTIMES, published_manifest, published_runtime

#: The Trainer v2.3.0 set (manifests/base/runtimes): every ClusterTrainingRuntime it installs.
V2_3_0 = {
    "torch-distributed", "torch-distributed-with-cache", "jax-distributed", "xgboost-distributed",
    "deepspeed-distributed", "mlx-distributed", "torchtune-llama3.2-1b", "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
}  # fmt: skip


def test_every_runtime_of_the_release_is_there():
    assert set(RUNTIMES) == V2_3_0


@pytest.mark.parametrize("name", sorted(V2_3_0))
def test_each_is_a_runtime_that_says_where_its_facts_come_from(name):
    runtime = published_runtime(name, "no cluster is configured")
    assert runtime is not None and runtime.name == name and runtime.framework
    assert runtime.published == (
        "Kubeflow Trainer v2.3.0's published runtimes, not the cluster's (no cluster is configured)"
    )
    assert runtime.mpi is (name in ("deepspeed-distributed", "mlx-distributed"))


def test_a_runtime_it_does_not_publish():
    assert published_runtime("my-runtime", "why") is None
    with pytest.raises(KeyError, match="no facts for runtime 'my-runtime'"):
        published_manifest("my-runtime")
