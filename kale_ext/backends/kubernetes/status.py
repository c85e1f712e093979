"""A job's status in plain words, from its TrainJob and its pods (pure functions).

Trainer v2.3.0 has no Running condition, and a Kueue-resumed job keeps `Suspended=False`, so the
pods decide between Created, Queued and Running; the conditions decide Complete and Failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from ...job.trainjob import ANNOTATION, KUEUE_QUEUE
from ..base import JobInfo, NodeState, Status
from .config import BACKEND, INDEX_LABEL, NODE, STEPS


def iso(moment: datetime | None) -> str | None:
    """A moment as the API server writes it (UTC, whole seconds)."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """A timestamp as the API server writes it."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def said(reason: str | None, message: str | None) -> str | None:
    """Reason and message as kubectl describe joins them."""
    if reason and message:
        return f"{reason}: {message}"
    return reason or message or None


def _exit(terminated) -> str:
    return f"{terminated.reason or 'exited'} (exit code {terminated.exit_code})"


def node_container(pod):
    """The status of the pod's `node` container, or None before it has one."""
    return next((c for c in pod.status.container_statuses or [] if c.name == NODE), None)


def restarts(pod) -> int:
    """How often the pod's `node` container has restarted."""
    container = node_container(pod)
    return (container.restart_count or 0) if container else 0


def _node_reason(pod) -> str | None:
    """Why a node is not simply running or done: an exit, a wait, an eviction, the scheduler."""
    status = pod.status
    container = node_container(pod)
    state = container.state if container else None
    ended = state.terminated if state else None
    waiting = state.waiting if state else None
    last = container.last_state.terminated if container and container.last_state else None
    if ended and (ended.exit_code or ended.reason not in (None, "Completed")):
        return _exit(ended)
    if waiting and waiting.reason:
        return f"{waiting.reason} after {_exit(last)}" if last else said(*_wait(waiting))
    if status.reason:
        return said(status.reason, status.message)
    unscheduled = next(
        (c for c in status.conditions or [] if c.type == "PodScheduled" and c.status == "False"),
        None,
    )
    return said(unscheduled.reason, unscheduled.message) if unscheduled else None


def _wait(waiting) -> tuple[str, str | None]:
    # ContainerCreating and PodInitializing are normal steps: their reason alone says enough
    normal = waiting.reason in ("ContainerCreating", "PodInitializing")
    return waiting.reason, None if normal else waiting.message


def newest(pods: Iterable):
    """The most recently created of ``pods``, or None."""
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    return max(pods, key=lambda p: p.metadata.creation_timestamp or epoch, default=None)


def node_states(pods: Iterable) -> list[NodeState]:
    """One state per node index, from the newest pod of each index."""
    newest_of: dict[int, Any] = {}
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    for pod in sorted(pods, key=lambda p: p.metadata.creation_timestamp or epoch):
        index = (pod.metadata.labels or {}).get(INDEX_LABEL)
        if index is not None:
            newest_of[int(index)] = pod
    out = []
    for index in sorted(newest_of):
        pod = newest_of[index]
        container = node_container(pod)
        ended = container.state.terminated if container and container.state else None
        out.append(
            NodeState(
                index=index,
                state=pod.status.phase or "Pending",
                reason=_node_reason(pod),
                exit_code=ended.exit_code if ended else None,
            )
        )
    return out


def _conditions(obj: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}


def finished_condition(obj: dict) -> dict | None:
    """The TrainJob's true Failed or Complete condition, or None while it has not finished."""
    conditions = _conditions(obj)
    for kind in ("Failed", "Complete"):
        if (conditions.get(kind) or {}).get("status") == "True":
            return conditions[kind]
    return None


def job_status(obj: dict, nodes: list[NodeState]) -> tuple[Status, str | None]:
    """The status and its plain reason: conditions first, then what the pods say.

    Running pods make a job Running; a pending pod makes it Queued with the scheduler's reason.
    """
    finished = finished_condition(obj)
    if finished is not None and finished["type"] == "Failed":
        culprit = next((f"node {n.index}: {n.reason}" for n in nodes if n.reason), None)
        base = said(finished.get("reason"), finished.get("message"))
        return Status.FAILED, "; ".join(x for x in (culprit, base) if x) or None
    if finished is not None:
        return Status.COMPLETE, None
    suspended = (_conditions(obj).get("Suspended") or {}).get("status") == "True"
    if suspended or (obj.get("spec") or {}).get("suspend"):
        queue_name = (obj["metadata"].get("labels") or {}).get(KUEUE_QUEUE)
        return Status.QUEUED, f"waiting for Kueue queue {queue_name}" if queue_name else "suspended"
    pending = [n for n in nodes if n.state == "Pending"]
    if pending:
        return Status.QUEUED, next((n.reason for n in pending if n.reason), "pods are starting")
    if nodes:
        trouble = (f"node {n.index}: {n.reason}" for n in nodes if n.reason)
        return Status.RUNNING, next(trouble, None)
    return Status.CREATED, None


def job_info(obj: dict, pods: Iterable) -> JobInfo:
    """A JobInfo from a TrainJob (Kubernetes JSON form) and its node pods."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    trainer = spec.get("trainer") or {}
    nodes = node_states(pods)
    status, reason = job_status(obj, nodes)
    if meta.get("deletionTimestamp"):  # Foreground deletion: gone once its pods are
        reason = f"being deleted; {reason}" if reason else "being deleted"
    finished = finished_condition(obj)
    notes = meta.get("annotations") or {}
    return JobInfo(
        name=meta["name"],
        status=status,
        backend=BACKEND,
        runtime=(spec.get("runtimeRef") or {}).get("name", ""),
        num_nodes=trainer.get("numNodes") or max(len(nodes), 1),
        procs_per_node=trainer.get("numProcPerNode") or 1,
        reason=reason,
        nodes=nodes,
        created=meta.get("creationTimestamp"),
        finished=finished.get("lastTransitionTime") if finished else None,
        provenance={k: v for k, v in notes.items() if k.startswith(ANNOTATION)},
    )


def belongs_to(job: str) -> Callable[[str | None, str | None], bool]:
    """Whether an event's object (kind, name) is the job's TrainJob, JobSet, a Job, a pod, or
    its Kueue Workload: matched by the names Trainer and JobSet give them, not just prefixes."""
    j, steps = re.escape(job), "|".join(STEPS)
    patterns = {
        "TrainJob": re.compile(j),
        "JobSet": re.compile(j),
        "Job": re.compile(rf"{j}-({steps})-\d+"),
        "Pod": re.compile(rf"{j}-({steps})-\d+-\d+-[a-z0-9]+"),
        "Workload": re.compile(rf"trainjob-{j}-[0-9a-f]{{5}}"),
    }
    return lambda kind, name: kind in patterns and bool(patterns[kind].fullmatch(name or ""))
