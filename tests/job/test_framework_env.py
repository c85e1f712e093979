"""The per-framework environment table: the values Trainer v2.3's plugins give each node."""

import pytest

from kale_ext.job.framework_env import COMPLETION_INDEX, cluster_env, gpu_count, node_env

RANK = {"fieldRef": {"fieldPath": COMPLETION_INDEX}}


@pytest.mark.parametrize(
    "framework, gpus, expected",
    [
        ("xgboost", 0, [("DMLC_TRACKER_URI", "j-node-0-0.j"), ("DMLC_TRACKER_PORT", "29500"),
                        ("DMLC_TASK_ID", RANK), ("DMLC_NUM_WORKER", "3")]),
        ("xgboost", 2, [("DMLC_TRACKER_URI", "j-node-0-0.j"), ("DMLC_TRACKER_PORT", "29500"),
                        ("DMLC_TASK_ID", RANK), ("DMLC_NUM_WORKER", "6")]),
        ("jax", 2, [("JAX_NUM_PROCESSES", "3"), ("JAX_PROCESS_ID", RANK),
                    ("JAX_COORDINATOR_ADDRESS", "j-node-0-0.j:29500")]),
        ("deepspeed", 0, []),  # MPI: on the launcher, not on the nodes
    ],
)  # fmt: skip
def test_cluster_env_as_the_trainer_renders_it(framework, gpus, expected):
    env = cluster_env(framework, "j", 3, gpus)
    assert [(e["name"], e.get("value", e.get("valueFrom"))) for e in env] == expected


def test_node_env_fills_the_rank_and_the_address():
    assert node_env("xgboost", 2, 1, "127.0.0.1", 4000) == {
        "DMLC_TRACKER_URI": "127.0.0.1",
        "DMLC_TRACKER_PORT": "4000",
        "DMLC_TASK_ID": "1",
        "DMLC_NUM_WORKER": "2",
    }
    assert node_env("torch", 2, 1, "127.0.0.1", 4000) == {}


@pytest.mark.parametrize(
    "resources, count",
    [({}, 0), ({"limits": {"nvidia.com/gpu": "2"}}, 2),
     ({"requests": {"amd.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "4"}}, 1),
     ({"requests": {"cpu": "2"}}, 0)],
)  # fmt: skip
def test_gpu_count_as_the_trainer_counts(resources, count):
    assert gpu_count(resources) == count
