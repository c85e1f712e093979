"""A job's status in plain words, from its TrainJob and its pods (pure functions).

Trainer v2.3.0 has no Running condition, and a Kueue-resumed job keeps `Suspended=False`, so the
pods decide between Created, Queued and Running; the conditions decide Complete and Failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from ...job import mpi as mpi_job
from ...job.restart_runtime import asked_runtime
from ...job.trainjob import ANNOTATION, KUEUE_QUEUE, STOPPED, trainjob_procs
from ..base import STOPPED_BY, Event, JobInfo, NodeState, Status
from .config import BACKEND, INDEX_LABEL, JOBSET_LABEL, STEP_LABEL, STEPS
from .failures import cluster_failure
from .kept import KEPT_LINES, Kept
from .kueue import ADMITTED, Waiting
from .reasons import condition_reason, container_of, kueue_wait, pod_reason
from .reasons import said as said  # the backend's too
from .restarts import restart_said
from .trainer_status import trainer_checkpoint, trainer_metrics, trainer_progress


def iso(moment: datetime | None) -> str | None:
    """A moment as the API server writes it (UTC, whole seconds)."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """A timestamp as the API server writes it."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def node_container(pod):
    """The status of the pod's `node` container, or None before it has one."""
    return container_of(pod)


def restarts(pod) -> int:
    """How often the pod's `node` container has restarted."""
    container = node_container(pod)
    return (container.restart_count or 0) if container else 0


def newest(pods: Iterable):
    """The most recently created of ``pods``, or None."""
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    return max(pods, key=lambda p: p.metadata.creation_timestamp or epoch, default=None)


def is_mpi(obj: dict) -> bool:
    """Whether a TrainJob (Kubernetes JSON form) is an MPI job: its launcher pod is node 0
    (job/mpi.py: node_of)."""
    return mpi_job.launched(((obj.get("spec") or {}).get("trainer") or {}).get("command"))


#: The label selector of a job's training pods: its nodes' and, for an MPI job, its launcher's.
TRAINING_PODS = f"{STEP_LABEL} in ({mpi_job.LAUNCHER},{mpi_job.NODE})"


def training_pods(name: str) -> str:
    """The label selector of job ``name``'s training pods."""
    return f"{JOBSET_LABEL}={name},{TRAINING_PODS}"


def node_selector(name: str, node: int, mpi: bool) -> str:
    """The label selector of the pods of job ``name``'s ``node`` (job/mpi.py: pod_of)."""
    step, index = mpi_job.pod_of(node, mpi)
    return f"{JOBSET_LABEL}={name},{STEP_LABEL}={step},{INDEX_LABEL}={index}"


def newest_by_node(pods: Iterable, mpi: bool = False) -> dict[int, Any]:
    """The newest pod of each node (``mpi``: the launcher is node 0, job/mpi.py: node_of)."""
    newest_of: dict[int, Any] = {}
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    for pod in sorted(pods, key=lambda p: p.metadata.creation_timestamp or epoch):
        labels = pod.metadata.labels or {}
        index = labels.get(INDEX_LABEL)
        if index is None or not index.isdigit():
            continue
        node = mpi_job.node_of(labels.get(STEP_LABEL, mpi_job.NODE), int(index), mpi)
        if node is not None:
            newest_of[node] = pod
    return dict(sorted(newest_of.items()))


def node_states(pods: Iterable, events: Iterable[Event] = (), mpi: bool = False) -> list[NodeState]:
    """One state per node, from the newest pod of each; ``events`` (the job's) add what the
    registry said about an image."""
    events = list(events)
    out = []
    for index, pod in newest_by_node(pods, mpi).items():
        container = node_container(pod)
        ended = container.state.terminated if container and container.state else None
        own = [e for e in events if e.object == f"Pod/{pod.metadata.name}"]
        out.append(
            NodeState(
                index=index,
                state=pod.status.phase or "Pending",
                reason=pod_reason(pod, own),
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


#: A suspended TrainJob outside Kueue: someone suspended it (or submitted it suspended).
SUSPENDED = "suspended by the user (spec.suspend is true): it starts once resumed"
#: Said after a kale_ext stop of a job in a Kueue queue (its Workload deactivated: stop.py); by
#: the user unless a sweep stopped it (early, or cancelled with it).
STOPPED_IN_KUEUE = ("suspended{who}: its Kueue Workload is deactivated, so it holds no quota and "
                    "Kueue does not start it again")  # fmt: skip


def job_status(
    obj: dict, nodes: list[NodeState], events: Iterable[Event] = (), kueue: Waiting | None = None
) -> tuple[Status, str | None]:
    """The status and its plain reason: conditions first, then what the pods say; ``kueue``:
    what its Kueue Workload says (kueue.py), when read.

    Running pods make a job Running; a pending pod makes it Queued with the scheduler's reason.
    """
    finished = finished_condition(obj)
    if finished is not None and finished["type"] == "Failed":  # job_info puts the culprit first
        culprit = next((f"node {n.index}: {n.reason}" for n in nodes if n.reason), None)
        return Status.FAILED, "; ".join(x for x in (culprit, condition_reason(obj, finished)) if x)
    if finished is not None:
        return Status.COMPLETE, None
    suspended = (_conditions(obj).get("Suspended") or {}).get("status") == "True"
    if suspended or (obj.get("spec") or {}).get("suspend"):
        queue_name = (obj["metadata"].get("labels") or {}).get(KUEUE_QUEUE)
        if queue_name and kueue is not None:
            return Status.QUEUED, kueue.text
        return Status.QUEUED, kueue_wait(queue_name, events) if queue_name else SUSPENDED
    pending = [n for n in nodes if n.state == "Pending"]
    if pending:
        waits = (f"node {n.index}: {n.reason}" for n in pending if n.reason)
        wait = next(waits, "pods are starting")
        admitted = kueue is not None and kueue.state == ADMITTED
        return Status.QUEUED, f"{kueue.text}; {wait}" if admitted else wait
    if nodes:
        trouble = (f"node {n.index}: {n.reason}" for n in nodes if n.reason)
        return Status.RUNNING, next(trouble, None)
    return Status.CREATED, None


def job_info(
    obj: dict,
    pods: Iterable,
    events: Iterable[Event] = (),
    logs: dict | None = None,
    kueue: Waiting | None = None,
) -> JobInfo:
    """A JobInfo from a TrainJob (Kubernetes JSON form), its node pods and, when known, the
    job's events, a node's last log lines and its Kueue state; a failed job's with its failure
    summary; the progress and metrics Kubeflow Trainer holds in its status.trainerStatus."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    trainer = spec.get("trainer") or {}
    pods, events, mpi = list(pods), list(events), is_mpi(obj)
    nodes = node_states(pods, events, mpi)
    status, reason = job_status(obj, nodes, events, kueue)
    failure = None
    if status is Status.FAILED:
        failure = cluster_failure(obj, newest_by_node(pods, mpi), events, logs)
        condition = condition_reason(obj, finished_condition(obj))
        reason = failure.summary if failure.node is None else f"{failure.summary}; {condition}"
    notes = meta.get("annotations") or {}
    if status is not Status.FAILED:  # which start of its JobSet runs (a job with restarts)
        reason = restart_said(pods, notes, reason)
    procs = trainjob_procs(obj)
    finished = finished_condition(obj)
    if notes.get(STOPPED) and status is not Status.COMPLETE:  # suspended by a stop, and kept
        status, reason, failure = Status.FAILED, notes[STOPPED], None
        if (meta.get("labels") or {}).get(KUEUE_QUEUE):
            who = " by the user" if reason.startswith(STOPPED_BY) else ""
            reason = f"{reason}; {STOPPED_IN_KUEUE.format(who=who)}"
        finished = _conditions(obj).get("Suspended") or {"lastTransitionTime": None}
    if meta.get("deletionTimestamp"):  # Foreground deletion: gone once its pods are
        reason = f"being deleted; {reason}" if reason else "being deleted"
    return JobInfo(
        name=meta["name"],
        status=status,
        backend=BACKEND,
        runtime=asked_runtime(notes) or (spec.get("runtimeRef") or {}).get("name", ""),
        num_nodes=trainer.get("numNodes") or max(len(nodes), 1),
        procs_per_node=procs.count,
        procs_why=procs.why,
        reason=reason,
        nodes=nodes,
        created=meta.get("creationTimestamp"),
        finished=finished.get("lastTransitionTime") if finished else None,
        provenance={k: v for k, v in notes.items() if k.startswith(ANNOTATION)},
        failure=failure,
        progress=trainer_progress(obj),
        trainer_metrics=trainer_metrics(obj),
        checkpoint=trainer_checkpoint(obj),
    )


#: Said of a failed job whose pods went before kale_ext saw them.
PODS_GONE = (
    f"its pods were deleted before kale_ext looked at them, and what they said went with them "
    f"(kale_ext keeps a failure and each node's last {KEPT_LINES} lines when it sees them)"
)


def recall(info: JobInfo, kept: Kept | None, pods: list) -> JobInfo:
    """A failed job whose pods no longer say where it failed: the failure kept while they did,
    or the plain words that it is gone."""
    if info.status is not Status.FAILED or (info.failure and info.failure.node is not None):
        return info
    if kept is not None:
        info.failure = kept.failure
        info.reason = (
            f"{kept.failure.summary}; {info.reason}" if info.reason else kept.failure.summary
        )
    elif not pods:
        info.reason = f"{info.reason}; {PODS_GONE}" if info.reason else PODS_GONE
        if info.failure is not None:
            info.failure.summary = info.reason
    return info


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
