"""Training runtimes: what a TrainJob's `runtimeRef` points at, as far as kale_ext needs it."""

from __future__ import annotations

from dataclasses import dataclass, field

FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
MPI_FRAMEWORKS = frozenset({"deepspeed", "mlx"})


@dataclass(frozen=True)
class Runtime:
    name: str
    framework: str  # torch, deepspeed, jax, xgboost, mlx, torchtune, ...
    kind: str = "ClusterTrainingRuntime"  # or TrainingRuntime (namespaced)
    replicated_jobs: tuple[str, ...] = ("node",)
    image: str = ""
    num_nodes: int = 1
    accelerators: dict = field(default_factory=dict)  # e.g. {"nvidia.com/gpu": "1"} per node
    mpi: bool = False
    #: an MPI runtime's ``mlPolicy.mpi.numProcPerNode``: its hostfile's slots per node unless
    #: the TrainJob asks for a count (job/mpi.py)
    mpi_procs_per_node: int = 1
    #: the replicated job labelled as the trainer (the one TrainJob.spec.trainer overrides) and
    #: its containers: what a runtime patch may target (the Trainer refuses other names)
    trainer_job: str = "node"
    trainer_containers: tuple[str, ...] = ("node",)
    #: the trainer's `node` container's resources ({"requests", "limits"}; None: it states
    #: none): what the Trainer counts processes per node from when a TrainJob has no
    #: resourcesPerNode (job/procs.py)
    resources: dict | None = None
    #: a runtime of the local backend: its nodes run in this Python environment (the user's)
    local: bool = False
    #: where the facts come from when not from the backend: "" (asked of the backend), or a
    #: sentence naming the published runtimes they come from and why the cluster was not asked
    #: (published_runtimes.published_runtime; a preview only, never a submit)
    published: str = ""

    @property
    def launcher(self) -> str:
        """How the node container starts the function: torchrun for torch, else python."""
        return "torchrun" if self.framework in ("torch", "torchtune") else "python"

    @classmethod
    def from_manifest(cls, manifest: dict) -> Runtime:
        """A Runtime from a (Cluster)TrainingRuntime object in Kubernetes JSON form."""
        meta = manifest.get("metadata", {})
        spec = manifest.get("spec", {})
        jobs = spec.get("template", {}).get("spec", {}).get("replicatedJobs", [])
        image, accelerators = "", {}
        trainer = next(
            (j for j in jobs if _labels(j).get(ANCESTOR_LABEL) == "trainer"),
            next((j for j in jobs if j.get("name") == "node"), {}),
        )
        trainer_pod = _pod(trainer)
        for job in jobs:
            if job.get("name") != "node":
                continue
            pod = _pod(job)
            for c in pod.get("containers", []):
                if c.get("name") == "node":
                    image = c.get("image", "")
                    limits = (c.get("resources") or {}).get("limits", {})
                    accelerators = {
                        k: str(v)
                        for k, v in limits.items()
                        if "gpu" in k or "mig-" in k or "tpu" in k
                    }
        policy = spec.get("mlPolicy", {})
        return cls(
            name=meta.get("name", ""),
            framework=meta.get("labels", {}).get(FRAMEWORK_LABEL, ""),
            kind=manifest.get("kind", "ClusterTrainingRuntime"),
            replicated_jobs=tuple(j.get("name", "") for j in jobs) or ("node",),
            image=image,
            num_nodes=int(policy.get("numNodes", 1) or 1),
            accelerators=accelerators,
            mpi="mpi" in policy,
            mpi_procs_per_node=int((policy.get("mpi") or {}).get("numProcPerNode") or 1),
            trainer_job=trainer.get("name", "node"),
            trainer_containers=tuple(c.get("name", "") for c in trainer_pod.get("containers", [])),
            resources=_node_resources(jobs),
        )

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "framework": self.framework,
            "kind": self.kind,
            "image": self.image,
            "num_nodes": self.num_nodes,
            "accelerators": self.accelerators,
            "initializers": [j for j in self.replicated_jobs if j.endswith("-initializer")],
        }


def _node_resources(jobs: list[dict]) -> dict | None:
    """The resources of the first `node` container of the replicated job named `node` or
    labelled as the trainer, as the Trainer v2.3.0 reads them (ExtractResourcePerNodeFromRuntime,
    pkg/runtime/runtime.go)."""
    for job in jobs:
        if job.get("name") != "node" and _labels(job).get(ANCESTOR_LABEL) != "trainer":
            continue
        for c in _pod(job).get("containers", []):
            if c.get("name") == "node" and c.get("resources") is not None:
                res = c["resources"]
                return {
                    "requests": {k: str(v) for k, v in (res.get("requests") or {}).items()},
                    "limits": {k: str(v) for k, v in (res.get("limits") or {}).items()},
                }
    return None


def _pod(job: dict) -> dict:
    return job.get("template", {}).get("spec", {}).get("template", {}).get("spec", {})


def _labels(job: dict) -> dict:
    return (job.get("template", {}).get("metadata") or {}).get("labels") or {}


#: The runtime the embedded local backend offers: it mirrors the cluster's torch-distributed.
TORCH_DISTRIBUTED = Runtime(name="torch-distributed", framework="torch", image="local", local=True)
DEFAULT_RUNTIME = TORCH_DISTRIBUTED.name
