"""Processes per node: what a TrainJob's nodes start, and why. One rule, the Trainer's own.

A TrainJob carries ``spec.trainer.numProcPerNode`` only when the user asked for a count (as the
Kubeflow SDK's CustomTrainer does); otherwise the runtime's plugin chooses. Kubeflow Trainer
v2.3.0's torch plugin (pkg/runtime/framework/plugins/torch/torch.go, ``EnforceMLPolicy``):

- ``numProcPerNode`` set: that count;
- else the resources per node are the TrainJob's ``resourcesPerNode`` when it has one, else the
  runtime's ``node`` container's (``runtime.ExtractResourcePerNodeFromRuntime``); so a
  ``resourcesPerNode`` without GPUs hides GPUs the runtime declares (a v2.3.0 bug, PR #3974);
- GPUs (``runtime.GetNumGPUPerNode``): the first resource whose name contains "gpu", requests
  before limits, rounded up; any: ``PET_NPROC_PER_NODE=auto``, which torchrun turns into the
  node's CUDA devices (the GPUs the pod was given);
- else ``max(1, CPUs)`` (``getNumCPUPerNode``): the CPU request, or when it is absent or zero
  the CPU limit, rounded up (``Quantity.Value()``: "500m" is 1, "2.5" is 3).

Runtimes that do not launch with torchrun (jax, xgboost: kale_ext starts the function with
python) run one process per node whatever they are given. MPI runtimes (deepspeed, mlx) start
their hostfile's slots per node (``plugins/mpi/mpi.go``, ``mpi_procs``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ConfigError
from .k8s_values import quantity_value
from .options import BY_NAME, check


def counted(n: int, one: str, many: str | None = None) -> str:
    """`1 node`, `2 nodes`, `1 process`, `4 processes` (``many``: when not ``one`` + s)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def shape_text(nodes: int, procs: int) -> str:
    """`2 nodes × 4 processes`: a job's nodes and the processes each starts."""
    return f"{counted(nodes, 'node')} × {counted(procs, 'process', 'processes')}"


@dataclass(frozen=True)
class Procs:
    """The processes each node starts, and where that count comes from."""

    count: int
    why: str  # "asked", "the runtime's choice: 4 CPUs per node", ...
    asked: bool = False  # numProcPerNode is in the TrainJob

    def text(self) -> str:
        """`4 processes (the runtime's choice: 4 CPUs per node)`."""
        return f"{counted(self.count, 'process', 'processes')} ({self.why})"

    def shape(self, nodes: int) -> str:
        """`2 nodes × 4 processes (the runtime's choice: 4 CPUs per node)`."""
        return f"{shape_text(nodes, self.count)} ({self.why})"


ASKED = "asked"


def _whole(value) -> int:
    """A quantity's integer value, rounded up as Kubernetes' Quantity.Value() does."""
    try:
        return math.ceil(quantity_value(str(value)))
    except (ValueError, ArithmeticError):
        return 0


def _gpus_in(resources: dict | None) -> int:
    for name, value in (resources or {}).items():
        if "gpu" in str(name).lower():  # the first such resource, as numGPU returns
            return _whole(value)
    return 0


def gpu_count(resources: dict | None) -> int:
    """GetNumGPUPerNode: GPUs per node in ``{"requests", "limits"}``, requests first."""
    resources = resources or {}
    return _gpus_in(resources.get("requests")) or _gpus_in(resources.get("limits"))


def cpu_count(resources: dict | None) -> int:
    """getNumCPUPerNode: the CPU request, else (absent or zero) the CPU limit, rounded up."""
    resources = resources or {}
    request = _whole((resources.get("requests") or {}).get("cpu", 0))
    return request or _whole((resources.get("limits") or {}).get("cpu", 0))


def resources_per_node(requests: dict, limits: dict) -> dict | None:
    """A TrainJob's ``resourcesPerNode`` from a config's requests and limits (None: none)."""
    out = {}
    if requests:
        out["requests"] = dict(requests)
    if limits:
        out["limits"] = dict(limits)
    return out or None


def procs_per_node(
    launcher: str,
    asked: int | None,
    job_resources: dict | None,
    runtime_resources: dict | None,
    runtime_known: bool = True,
) -> Procs:
    """The processes per node the Trainer starts for a TrainJob (see the module's doc).

    ``launcher``: the runtime's (torchrun, or python: one process per node); ``asked``: the
    TrainJob's numProcPerNode (None: unset); ``job_resources``: its resourcesPerNode
    (``{"requests", "limits"}`` or None); ``runtime_resources``: the runtime's node container's
    (``runtime_known`` False: they could not be read, so taken as none and said so)."""
    if asked is not None:
        return Procs(asked, ASKED, asked=True)
    if launcher != "torchrun":
        return Procs(1, "the runtime starts one process per node")
    own = job_resources is not None
    resources = job_resources if own else runtime_resources
    whose = "" if own else " (from the runtime's container)"
    gpus = gpu_count(resources)
    if gpus:
        return Procs(gpus, f"the runtime's choice: {counted(gpus, 'GPU')} per node{whose}")
    cpus = cpu_count(resources)
    hidden = own and gpu_count(runtime_resources)
    note = (
        f"; the runtime's {counted(gpu_count(runtime_resources), 'GPU')} are not counted: "
        "Trainer v2.3.0 "
        "reads only the TrainJob's resourcesPerNode when it has one"
        if hidden
        else ""
    )
    if cpus:
        return Procs(cpus, f"the runtime's choice: {counted(cpus, 'CPU')} per node{whose}{note}")
    unknown = "" if own or runtime_known else " (the runtime's resources not known here)"
    return Procs(1, f"the runtime's choice: 1, no CPUs or GPUs stated per node{unknown}{note}")


def mpi_procs(
    slots: int | None,
    asked: int | None,
    job_resources: dict | None,
    runtime_resources: dict | None,
) -> Procs:
    """The processes per node of a job on an MPI runtime: the hostfile's slots, as the Trainer's
    MPI plugin sets them (EnforceMLPolicy): the TrainJob's numProcPerNode when asked; else the
    runtime's ``mpi.numProcPerNode`` (``slots``; None: not known here, as for a TrainJob kale_ext
    did not make), and when that is 1 the GPUs per node if more than one (the TrainJob's
    resourcesPerNode when it has one, else the runtime's). CPUs are not counted."""
    if asked is not None:
        return Procs(asked, ASKED, asked=True)
    if slots is None:
        return Procs(1, "the runtime's choice: its MPI numProcPerNode, not known here")
    if slots == 1:
        own = job_resources is not None
        gpus = gpu_count(job_resources if own else runtime_resources)
        if gpus > 1:
            whose = "" if own else " (from the runtime's container)"
            return Procs(gpus, f"the runtime's choice: {counted(gpus, 'GPU')} per node{whose}")
    return Procs(slots, f"the runtime's choice: its MPI numProcPerNode, {slots}")


def how_to_ask(procs: Procs) -> str:
    """What a refusal of the runtime's choice tells the user to do."""
    if procs.asked:
        return "ask for fewer processes per node (--procs-per-node, the panel's Processes)"
    return (
        f"{counted(procs.count, 'process', 'processes')} per node is {procs.why}: set "
        "procs_per_node explicitly "
        "(--procs-per-node N, the panel's Processes per node, options.procs_per_node) or ask "
        "for fewer CPUs/GPUs per node"
    )


def checked_procs(runtime, asked: int | None, requests: dict, limits: dict) -> Procs:
    """The processes per node of a job on ``runtime`` (a job.runtimes.Runtime), within the
    option's bounds (the site's too): a runtime's choice beyond them is refused, saying how to
    set the count instead."""
    resources = resources_per_node(requests, limits)
    if runtime.mpi:  # the MPI plugin's rule: the hostfile's slots
        procs = mpi_procs(runtime.mpi_procs_per_node, asked, resources, runtime.resources)
    else:
        procs = procs_per_node(runtime.launcher, asked, resources, runtime.resources)
    if not procs.asked:
        try:
            check(BY_NAME["procs_per_node"], procs.count)
        except ConfigError as e:
            raise ConfigError("procs_per_node", f"{e.message}; {how_to_ask(procs)}") from None
    return procs
