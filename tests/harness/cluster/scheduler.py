"""The emulated scheduler: which node takes a pod, or why none can (in the scheduler's words,
as its ``FailedScheduling`` events say it)."""

from __future__ import annotations

from tests.harness.cluster.render import quantity


def requests(pod: dict) -> dict[str, float]:
    """What the pod asks for: each container's requests, else its limits."""
    out: dict[str, float] = {}
    for c in pod["spec"]["containers"]:
        res = c.get("resources") or {}
        for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            out[k] = out.get(k, 0.0) + quantity(v)
    return out


def free(node: dict, pods: list[dict]) -> dict[str, float]:
    """What is left on the node beside the running pods placed on it."""
    left = {
        k: quantity(v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()
    }
    for pod in pods:
        if pod["spec"].get("nodeName") != node["metadata"]["name"]:
            continue
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for k, v in requests(pod).items():
            left[k] = left.get(k, 0.0) - v
    return left


def place(api, faults, pod: dict, placed: list[dict]) -> tuple[str | None, str]:
    """A node for the pod, or why there is none: a node that is not cordoned, whose labels
    match the pod's ``nodeSelector`` and that has room for its requests; its claims must exist."""
    fault = faults.pod_fault("unschedulable", pod)
    nodes = api.items("v1/nodes")
    if fault is not None:
        return None, f"0/{len(nodes)} nodes are available: {len(nodes)} {fault.message}."
    ns = pod["metadata"]["namespace"]
    for volume in pod["spec"].get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and api.get("v1/persistentvolumeclaims", ns, claim) is None:
            return (
                None,
                f'0/{len(nodes)} nodes are available: persistentvolumeclaim "{claim}" not found.',
            )
    need = requests(pod)
    reasons: dict[str, int] = {}
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        if (node.get("spec") or {}).get("unschedulable"):
            why = "node(s) were unschedulable"
        elif not (pod["spec"].get("nodeSelector") or {}).items() <= labels.items():
            why = "node(s) didn't match Pod's node affinity/selector"
        else:
            room = free(node, placed)
            short = [k for k, v in need.items() if room.get(k, 0.0) < v]
            if not short:
                return node["metadata"]["name"], ""
            why = f"Insufficient {short[0]}"
        reasons[why] = reasons.get(why, 0) + 1
    listed = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
    return None, f"0/{len(nodes)} nodes are available: {listed}."
