"""Why a training pod or a TrainJob is not simply running or done, in words a user can act on
(pure functions of the objects as the API server returns them, and of their events).

Each reason keeps Kubernetes' own word in parentheses, so it can be looked up:
``cannot pull image ghcr.io/acme/train:v9 (ImagePullBackOff): ... not found``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..failure import exit_words
from .config import NODE

#: A container ended with this (Kubernetes' OOMKilled) when it used more memory than its limit.
OUT_OF_MEMORY = "killed: out of memory"
_PULL = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_STARTING = ("ContainerCreating", "PodInitializing")
_INSUFFICIENT = re.compile(r"Insufficient ([\w./-]+)")
_QUOTED_IMAGE = re.compile(r'image "([^"]+)"')
#: TrainJob Failed conditions (copied from the JobSet, or set by the Trainer), in words.
CONDITIONS = {
    "DeadlineExceeded": "ran longer than its active_deadline_seconds{deadline} and was stopped",
    "FailedJobs": "a node failed, so the job did",
    "ReachedMaxRestarts": "failed again after the restarts its runtime allows",
    "FailJobSetFailurePolicyAction": "its runtime's failure policy ended it",
    "TrainingRuntimeNotSupported": "its runtime is not one this Trainer supports",
}


def said(reason: str | None, message: str | None) -> str | None:
    """Reason and message as kubectl describe joins them."""
    if reason and message:
        return f"{reason}: {message}"
    return reason or message or None


def container_of(pod):
    """The status of the pod's `node` container, or None before it has one."""
    return next((c for c in pod.status.container_statuses or [] if c.name == NODE), None)


def memory_limit(pod) -> str | None:
    for c in (pod.spec.containers if pod.spec else None) or []:
        if c.name == NODE and c.resources and c.resources.limits:
            return c.resources.limits.get("memory")
    return None


def ending(terminated, pod=None) -> str:
    """How a container ended: `exited with code 3`, `killed by signal 9 (SIGKILL) (exit code
    137)`, `killed: out of memory (OOMKilled; memory limit 2Gi)`."""
    code = terminated.exit_code
    if terminated.reason == "OOMKilled":
        limit = memory_limit(pod) if pod is not None else None
        return f"{OUT_OF_MEMORY} (OOMKilled" + (f"; memory limit {limit})" if limit else ")")
    words = exit_words(code, container=True)
    if words:
        return f"killed by {words} (exit code {code})"
    named = (
        f" ({terminated.reason})" if terminated.reason not in (None, "Error", "Completed") else ""
    )
    return f"exited with code {code}{named}"


def ended_badly(terminated) -> bool:
    return bool(
        terminated and (terminated.exit_code or terminated.reason not in (None, "Completed"))
    )


def registry_message(message: str | None, events: Iterable = ()) -> str | None:
    """What the registry said about an image: from the container's message (`ErrImagePull:
    rpc error: ... desc = ...`), else from the pod's `Failed to pull image` event."""
    texts = [message or ""] + [
        e.message for e in events if (e.message or "").startswith("Failed to pull image")
    ]
    for text in texts:
        for marker in ("desc = ", "ErrImagePull: "):
            if marker in text:
                return text.split(marker, 1)[1].strip()
    return message or None


def waiting_reason(waiting, container, events: Iterable = ()) -> str | None:
    reason, message = waiting.reason, waiting.message
    if reason in _STARTING:
        return reason  # normal steps: their name says enough
    if reason in _PULL:
        m = _QUOTED_IMAGE.search(message or "")
        image = m.group(1) if m else (container.image if container else "?")
        why = registry_message(message, events)
        return f"cannot pull image {image} ({reason})" + (f": {why}" if why else "")
    if reason == "CreateContainerConfigError":
        return (
            f"cannot start its container ({reason}): {message}; a Secret or ConfigMap the "
            "job's env or env_from names is missing"
        )
    return said(reason, message)


def unschedulable(message: str | None) -> str:
    """The scheduler's words, led by what is short: `no node has room: not enough
    nvidia.com/gpu (Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.)`."""
    short = list(dict.fromkeys(r.rstrip(".") for r in _INSUFFICIENT.findall(message or "")))
    lead = f"no node has room: not enough {', '.join(short)}" if short else "no node can take it"
    return f"{lead} (Unschedulable: {message})" if message else f"{lead} (Unschedulable)"


def pod_reason(pod, events: Iterable = ()) -> str | None:
    """Why a training pod is not simply running or done; ``events``: the pod's own."""
    events = list(events)
    status = pod.status
    container = container_of(pod)
    state = container.state if container else None
    ended = state.terminated if state else None
    waiting = state.waiting if state else None
    last = container.last_state.terminated if container and container.last_state else None
    if status.reason == "Evicted":
        return f"evicted from its node (Evicted): {status.message}"
    if ended_badly(ended):
        return ending(ended, pod)
    if waiting and waiting.reason:
        if last is not None and waiting.reason not in _PULL:
            return f"restarting ({waiting.reason}) after it {ending(last, pod)}"
        return waiting_reason(waiting, container, events)
    if status.reason:
        return said(status.reason, status.message)
    blocked = next(
        (c for c in status.conditions or [] if c.type == "PodScheduled" and c.status == "False"),
        None,
    )
    if blocked is None:
        return None
    if blocked.reason == "Unschedulable":
        return unschedulable(blocked.message)
    return said(blocked.reason, blocked.message)


def condition_reason(obj: dict, condition: dict) -> str:
    """A TrainJob's Failed condition in words, with its reason and message after them."""
    reason, message = condition.get("reason"), condition.get("message")
    deadline = (obj.get("spec") or {}).get("activeDeadlineSeconds")
    words = CONDITIONS.get(reason or "")
    if words is None:
        return said(reason, message) or "failed"
    words = words.format(deadline=f" ({deadline} s)" if deadline else "")
    return f"{words} ({said(reason, message)})"


def kueue_wait(queue: str, events: Iterable = ()) -> str:
    """Waiting for Kueue, with what its Workload's latest event says (quota, a missing queue);
    a Workload deactivated (``spec.active: false``, by someone else than kale_ext's stop) is
    not waiting for its queue: Kueue runs it only once it is active again."""
    said_last = [e for e in events if (e.object or "").startswith("Workload/") and e.message]
    if said_last and (said_last[-1].reason or "").startswith("EvictedDueToDeactivated"):
        return (f"its Kueue Workload is deactivated ({said_last[-1].message}): Kueue does not "
                f"run it until its spec.active is true again (queue {queue})")  # fmt: skip
    why = f": {said_last[-1].message}" if said_last else ""
    return f"waiting for Kueue queue {queue} to admit it{why}"
