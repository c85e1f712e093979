"""The runtimes the Local backend offers, and the framework environment each node gets: the
torch plugin's ``PET_*`` for torch-distributed, the xgboost and jax plugins' own variables
(kale_ext/job/framework_env.py) for theirs, as a cluster gives them, with node 0 at 127.0.0.1
and the job's rendezvous port as the trainer port."""

from __future__ import annotations

from ...job.framework_env import FRAMEWORK_ENV, node_env
from ...job.runtimes import TORCH_DISTRIBUTED, Runtime

LOCAL_RUNTIMES: tuple[Runtime, ...] = (
    TORCH_DISTRIBUTED,
    *(Runtime(name=f"{fw}-distributed", framework=fw, image="local") for fw in FRAMEWORK_ENV),
)

HOST = "127.0.0.1"


def framework_env(record: dict, node: int, port: int) -> dict[str, str]:
    """What the runtime's plugin gives ``node`` (a record without a framework: torch)."""
    framework = record.get("framework", "torch")
    if framework not in FRAMEWORK_ENV:
        return {
            "PET_NNODES": str(record["num_nodes"]),
            "PET_NPROC_PER_NODE": str(record["procs_per_node"]),
            "PET_NODE_RANK": str(node),
            "PET_MASTER_ADDR": HOST,
            "PET_MASTER_PORT": str(port),
        }
    return node_env(framework, record["num_nodes"], node, HOST, port, record.get("gpus", 0))
