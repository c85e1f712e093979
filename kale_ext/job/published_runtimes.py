"""The Kubeflow Trainer's published ClusterTrainingRuntimes (release v2.3.0, the runtimes its
manifests install: manifests/base/runtimes), written down as facts: what a preview reads from a
runtime when there is no cluster to ask (``kale-ext compile --trainjob``, ``run --dry-run`` and the
panel's preview without one). Writing a TrainJob is not running one: only a submit asks the
cluster.

The facts are what kale_ext and the Trainer's webhooks read from a runtime: its name and labels,
its ML policy, and per replicated job its ancestor label, what it depends on, and its containers
(name, image, command, args, resources). The tests build their runtimes from them too, and check
them against the official files wherever those are present (tests/harness/test_runtimes.py).
"""

from __future__ import annotations

import copy

from .runtimes import Runtime

#: The Trainer release whose runtimes these are.
VERSION = "v2.3.0"
SOURCE = f"Kubeflow Trainer {VERSION}'s published runtimes"

FRAMEWORK = "trainer.kubeflow.org/framework"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
CONTAINER_FACTS = ("name", "image", "command", "args", "resources")
TORCH_IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
MPI = {
    "numProcPerNode": 1,
    "mpiImplementation": "OpenMPI",
    "sshAuthMountPath": "/home/mpiuser/.ssh",
    "runLauncherAsNode": True,
}
SSHD = {"command": ["/usr/sbin/sshd"], "args": ["-De", "-f", "/home/mpiuser/.sshd_config"]}


def container(name: str, image: str, **facts) -> dict:
    """A container's facts (command, args, resources as Kubernetes writes them)."""
    return {"name": name, "image": image, **facts}


def job(name: str, *containers: dict, ancestor: str | None = None, after: tuple = ()) -> dict:
    """A replicated job; ``after`` holds (job, status) pairs it depends on."""
    template: dict = {"spec": {"template": {"spec": {"containers": list(containers)}}}}
    if ancestor:
        template = {"metadata": {"labels": {ANCESTOR: ancestor}}, **template}
    out: dict = {"name": name, "template": template}
    if after:
        out["dependsOn"] = [{"name": n, "status": status} for n, status in after]
    return out


def runtime(name: str, labels: dict, policy: dict, *jobs: dict) -> dict:
    """A runtime's facts: its metadata and the parts of its spec that the facts cover."""
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"mlPolicy": policy, "template": {"spec": {"replicatedJobs": list(jobs)}}},
    }


def _initializer(kind: str) -> dict:
    name = f"{kind}-initializer"
    return job(name, container(name, f"ghcr.io/kubeflow/trainer/{name}"), ancestor=name)


def _torchtune(name: str, config: str, *tokenizer: str) -> dict:
    command = [
        "tune", "run", "--rdzv_endpoint=localhost:29500", "full_finetune_distributed",
        "--config", config, "dataset=torchtune.datasets.instruct_dataset",
        "dataset.source=parquet", "dataset.data_dir=/workspace/dataset/data",
        "output_dir=/workspace/output", *tokenizer, "checkpointer.checkpoint_dir=/workspace/model",
    ]  # fmt: skip
    trainer = container(
        "node",
        "ghcr.io/kubeflow/trainer/torchtune-trainer",
        command=command,
        resources={"limits": {"nvidia.com/gpu": 2}},
    )
    after = (("dataset-initializer", "Complete"), ("model-initializer", "Complete"))
    return runtime(
        name,
        {FRAMEWORK: "torchtune"},
        {"numNodes": 1, "torch": {}},
        _initializer("dataset"),
        _initializer("model"),
        job("node", trainer, ancestor="trainer", after=after),
    )


def _mpi(name: str, framework: str) -> dict:
    image = f"ghcr.io/kubeflow/trainer/{framework}-runtime"
    return runtime(
        name,
        {FRAMEWORK: framework},
        {"numNodes": 1, "mpi": MPI},
        job("node", container("node", image, **SSHD)),
        job("launcher", container("node", image), ancestor="trainer", after=(("node", "Ready"),)),
    )


def _single(name: str, framework: str, policy: str, image: str) -> dict:
    trainer = job("node", container("node", image), ancestor="trainer")
    return runtime(name, {FRAMEWORK: framework}, {"numNodes": 1, policy: {}}, trainer)


LLAMA_TOKENIZER = "tokenizer.path=/workspace/model/original/tokenizer.model"
RUNTIMES: dict[str, dict] = {
    r["metadata"]["name"]: r
    for r in (
        _single("torch-distributed", "torch", "torch", TORCH_IMAGE),
        _single("jax-distributed", "jax", "jax", "nvcr.io/nvidia/jax:25.10-py3"),
        _single(
            "xgboost-distributed", "xgboost", "xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"
        ),
        _mpi("deepspeed-distributed", "deepspeed"),
        _mpi("mlx-distributed", "mlx"),
        runtime(
            "torch-distributed-with-cache",
            {FRAMEWORK: "torch", "trainer.kubeflow.org/webhook-validation": "disabled"},
            {"numNodes": 1, "torch": {}},
            _initializer("dataset"),
            job(
                "node",
                container("node", TORCH_IMAGE),
                ancestor="trainer",
                after=(("dataset-initializer", "Complete"),),
            ),
        ),
        _torchtune("torchtune-llama3.2-1b", "llama3_2/1B_full", LLAMA_TOKENIZER),
        _torchtune("torchtune-llama3.2-3b", "llama3_2/3B_full", LLAMA_TOKENIZER),
        _torchtune(
            "torchtune-qwen2.5-1.5b",
            "qwen2_5/1.5B_full",
            "tokenizer.path=/workspace/model/vocab.json",
            "tokenizer.merges_file=/workspace/model/merges.txt",
        ),
    )
}


def published_manifest(name: str) -> dict:
    """The published ClusterTrainingRuntime ``name`` (a fresh copy); KeyError when there is none."""
    if name not in RUNTIMES:
        raise KeyError(f"no facts for runtime {name!r} (known: {', '.join(sorted(RUNTIMES))})")
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        **copy.deepcopy(RUNTIMES[name]),
    }


def published_runtime(name: str, why: str) -> Runtime | None:
    """The published runtime ``name`` as a Runtime whose ``published`` says where its facts come
    from and ``why`` the cluster was not asked; None when the Trainer publishes no such runtime."""
    if name not in RUNTIMES:
        return None
    import dataclasses

    runtime = Runtime.from_manifest(published_manifest(name))
    return dataclasses.replace(runtime, published=f"{SOURCE}, not the cluster's ({why})")
