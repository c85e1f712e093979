"""Whether a Kubernetes cluster has a node with room for one training node: checked at submit, so
a job no node could ever hold is refused (422 Unschedulable) instead of waiting forever."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...job.k8s_values import quantity_value
from ..base import BackendError

if TYPE_CHECKING:
    from ...job.spec import JobSpec
    from .config import Cluster


def _per_node_request(spec: JobSpec) -> dict[str, str]:
    """What one training node asks the scheduler for: requests, else limits."""
    return {**spec.config.limits, **spec.config.requests}


def _allocatable(node) -> dict[str, str]:
    return (node.status.allocatable if node.status else None) or {}


def _has_room(node, need: dict[str, str]) -> bool:
    allocatable = _allocatable(node)
    return all(
        k in allocatable and quantity_value(allocatable[k]) >= quantity_value(v)
        for k, v in need.items()
    )


def _shortfall(nodes: list, need: dict[str, str]) -> str:
    """Per resource that no node has enough of: what was asked and the most any node has."""
    parts = []
    for key, asked in need.items():
        node = max(nodes, key=lambda n: quantity_value(_allocatable(n).get(key, "0")))
        held = _allocatable(node).get(key, "0")
        if quantity_value(held) < quantity_value(asked):
            most = f"the most a node has is {held} ({node.metadata.name})"
            parts.append(f"{key}: asked {asked}, {most}")
    return "; ".join(parts) or "no single node has all of it at once"


def _describe(need: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in need.items())


def check_room(cluster: Cluster, spec: JobSpec) -> list[str]:
    """Raise when no node could ever hold one training node; warnings when unsure."""
    need = _per_node_request(spec)
    if not need:
        return []
    try:
        nodes = cluster.call("list the cluster's nodes", cluster.core.list_node).items
    except BackendError as e:
        return [f"could not check that a node has room for {_describe(need)}: {e}"]
    selector = spec.config.node_selector
    usable = [
        n
        for n in nodes
        if not (n.spec and n.spec.unschedulable)
        and selector.items() <= (n.metadata.labels or {}).items()
    ]
    if not usable:
        which = f" with labels {_describe(selector)}" if selector else ""
        return [f"no schedulable node{which} now: the job waits until one joins"]
    if any(_has_room(n, need) for n in usable):
        return []
    raise BackendError(
        f"no node has room for one training node's {_describe(need)}: {_shortfall(usable, need)}",
        422,
        "Unschedulable",
    )
