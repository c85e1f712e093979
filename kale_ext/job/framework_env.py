"""The settings a non-torch runtime's own plugin gives each node, as data: one table per
framework (the ``mlPolicy`` key of the runtime), so the Local backend gives every node the
environment a cluster would, and the emulated cluster renders it as the Trainer does.

From Kubeflow Trainer v2.3: ``pkg/runtime/framework/plugins/xgboost/xgboost.go`` and
``pkg/runtime/framework/plugins/jax/jax.go`` (``EnforceMLPolicy``), names and the port in
``pkg/constants/constants.go`` (``XGBoostEnv*``, ``ContainerTrainerPort``). The torch plugin's
``PET_*`` variables are the local supervisor's and the emulator's own concern. MPI runtimes
(deepspeed, mlx: ``plugins/mpi/mpi.go``) put their settings (``OMPI_MCA_*``, the hostfile at
``/etc/mpi/hostfile``) on the launcher, a replicated job of its own that runs ``mpirun`` over
SSH: neither the Local backend nor the emulated cluster runs it, so they are not listed here.

Values are templates: ``{nodes}`` the number of nodes; ``{workers}`` nodes × GPUs per node (one
per node without GPUs); ``{rank}`` the node's index (on a cluster a fieldRef to its Job
completion index); ``{host}`` node 0's address (``<job>-node-0-0.<job>`` on a cluster);
``{port}`` the trainer port (29500 on a cluster).
"""

from __future__ import annotations

from .procs import gpu_count  # GPUs per node as the Trainer counts them

__all__ = ["FRAMEWORK_ENV", "cluster_env", "gpu_count", "node_env", "workers"]

TRAINER_PORT = 29500
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

FRAMEWORK_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "xgboost": (  # plugins/xgboost/xgboost.go: the Rabit tracker runs on node 0
        ("DMLC_TRACKER_URI", "{host}"),
        ("DMLC_TRACKER_PORT", "{port}"),
        ("DMLC_TASK_ID", "{rank}"),
        ("DMLC_NUM_WORKER", "{workers}"),
    ),
    "jax": (  # plugins/jax/jax.go: one JAX process per node
        ("JAX_NUM_PROCESSES", "{nodes}"),
        ("JAX_PROCESS_ID", "{rank}"),
        ("JAX_COORDINATOR_ADDRESS", "{host}:{port}"),
    ),
}


def workers(framework: str, nodes: int, gpus: int) -> int:
    """XGBoost's DMLC_NUM_WORKER: a worker per GPU, else one per node (jax: one per node)."""
    return nodes * gpus if framework == "xgboost" and gpus > 0 else nodes


def node_env(
    framework: str, nodes: int, rank: int, host: str, port: int, gpus: int = 0
) -> dict[str, str]:
    """The framework's variables for node ``rank`` (empty for a framework not listed)."""
    values = {"nodes": nodes, "workers": workers(framework, nodes, gpus), "rank": rank,
              "host": host, "port": port}  # fmt: skip
    return {k: v.format(**values) for k, v in FRAMEWORK_ENV.get(framework, ())}


def cluster_env(framework: str, job: str, nodes: int, gpus: int = 0) -> list[dict]:
    """The framework's variables as the Trainer puts them on the trainer container (Kubernetes
    JSON env entries; the rank read from the pod's Job completion index)."""
    host = f"{job}-node-0-0.{job}"
    values = {"nodes": nodes, "workers": workers(framework, nodes, gpus), "host": host,
              "port": TRAINER_PORT}  # fmt: skip
    out = []
    for name, template in FRAMEWORK_ENV.get(framework, ()):
        if template == "{rank}":
            out.append({"name": name, "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}})
        else:
            out.append({"name": name, "value": template.format(**values)})
    return out
