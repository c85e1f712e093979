"""The runtimes the Local backend offers, and the framework environment each node gets: the
torch plugin's ``PET_*`` for torch-distributed, the xgboost and jax plugins' own variables
(kale_ext/job/framework_env.py) for theirs, as a cluster gives them, with node 0 at 127.0.0.1
and the job's rendezvous port as the trainer port; the MPI runtimes (deepspeed, mlx) run under
one Open MPI mpirun (mpirun.py). The Trainer's other runtimes compile as any other (for a
cluster) but are refused here before anything starts, in one sentence naming the runtime and
why (``unavailable``: one only a cluster runs, or an MPI runtime without mpirun here)."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...job.framework_env import FRAMEWORK_ENV, node_env
from ...job.procs import how_to_ask
from ...job.runtimes import TORCH_DISTRIBUTED, Runtime
from ..base import NotFound
from .mpirun import MPI_RUNTIMES, missing

if TYPE_CHECKING:
    from ...job.spec import JobSpec

LOCAL_RUNTIMES: tuple[Runtime, ...] = (
    TORCH_DISTRIBUTED,
    *(
        Runtime(name=f"{fw}-distributed", framework=fw, image="local", local=True)
        for fw in FRAMEWORK_ENV
    ),
    *MPI_RUNTIMES.values(),
)

HOST = "127.0.0.1"

INITIALIZERS = "first fills its volumes in initializer jobs ({jobs})"
#: The Trainer v2.3 runtimes (manifests/base/runtimes) a local run cannot give what they need:
#: a name prefix or suffix, and why.
CLUSTER_ONLY: tuple[tuple[str, str], ...] = (
    ("torchtune-", INITIALIZERS.format(jobs="the model and dataset downloads")),
    ("-with-cache", "streams its dataset from the data cache the cluster runs beside it"),
)


def cluster_only(runtime: Runtime | str) -> str | None:
    """Why ``runtime`` (a name, or a runtime with its shape) runs only on a cluster, in one
    sentence naming it; None when nothing says so."""
    name = runtime if isinstance(runtime, str) else runtime.name
    why = next((w for k, w in CLUSTER_ONLY if name.startswith(k) or name.endswith(k)), None)
    if isinstance(runtime, Runtime) and why is None:
        initializers = [j for j in runtime.replicated_jobs if j.endswith("initializer")]
        if initializers:
            why = INITIALIZERS.format(jobs=", ".join(initializers))
    if why is None:
        return None
    local = ", ".join(r.name for r in LOCAL_RUNTIMES)
    return (
        f"runtime {name!r} runs only on a cluster: it {why}, which kale_ext does not do on this "
        f"machine; submit it to Kubernetes, or run locally on {local}"
    )


def unavailable(runtime: Runtime | str) -> str | None:
    """Why ``runtime`` cannot run on this machine, in one sentence naming it (the same from
    every entry point: a lookup by name, a submit); None when it can, or nothing says so."""
    return cluster_only(runtime) or missing(runtime)


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


def check_runnable(spec: JobSpec) -> None:
    """Refuse, before anything starts, a job this machine cannot run: a runtime only a cluster
    offers, an initializer (its jobs run only on a cluster), several processes per node without
    torch (torchrun; an MPI runtime's processes are mpirun's)."""
    why = unavailable(spec.runtime)
    if why is not None:  # as a lookup by name refuses it (submit.lookup_runtime)
        raise ConfigError("runtime", why)
    if spec.runtime not in LOCAL_RUNTIMES:
        known = ", ".join(r.name for r in LOCAL_RUNTIMES)
        raise NotFound(f"runtime {spec.runtime.name!r} is not available locally ({known} are)")
    if spec.initializer:
        raise ConfigError(
            "initializer",
            "the job's initializer (train(initializer=...)) fills its volumes in initializer "
            "jobs, which only a cluster runs: submit it to Kubernetes, or leave it out to run "
            "here",
        )
    torch = importlib.util.find_spec("torch") is not None
    if not torch and spec.procs_per_node > 1 and not spec.runtime.mpi:
        raise ConfigError(
            "procs_per_node",
            "more than one process per node needs torch (torchrun) installed; "
            + how_to_ask(spec.procs),
        )
