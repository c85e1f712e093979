"""One job looked at closely (``get_job``; a listing stays at two calls): the events that say
why it waits (a registry's message, Kueue's), the failing rank's last lines, and whether a
running job has been quiet for longer than the backend's ``stall_seconds``."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ..base import BackendError, JobInfo, LogLine, Status, split_rank
from . import kept as kept_failure
from .config import NODE, REQUEST_TIMEOUT
from .failures import cluster_failure, failed_ending, pod_failure
from .kueue import state_of
from .status import (
    is_mpi,
    job_info,
    newest_by_node,
    node_container,
    parse_time,
    recall,
    restarts,
)

#: How many of the failing pod's last lines are read (for torchrun's report and the tail).
TAIL_LINES = 200
_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z ")


def closer_look(backend, obj: dict, pods: list) -> JobInfo:
    """The job's info with the events, logs, Kueue state and stall a single job's view
    deserves; a failure a pod shows is kept, and a kept one recalled once the pods no longer
    show it (kept.py)."""
    name, mpi = obj["metadata"]["name"], is_mpi(obj)
    kueue = state_of(backend, obj, pods)  # None unless it waits in a Kueue queue
    info = job_info(obj, pods, kueue=kueue)
    if info.status is Status.CREATED:
        info.reason = backend._latest_warning(name)  # e.g. the JobSet could not be created
        return info
    if info.status in (Status.QUEUED, Status.FAILED):
        events = _events(backend, name)
        info = job_info(obj, pods, events, kueue=kueue)
        failed_node = info.failure.node if info.failure else None
        if failed_node is not None:
            pod = newest_by_node(pods, mpi)[failed_node]
            logs = {failed_node: _last_lines(backend, pod, failed_node, info.procs_per_node)}
            info = job_info(obj, pods, events, logs, kueue)
    endings = _endings(pods, mpi)
    if endings or info.status is Status.FAILED:
        kept = kept_failure.read(backend, name)
        mark = kept_failure.fingerprint(_states(pods, mpi))
        if endings and (kept is None or kept.fingerprint != mark):
            _keep(backend, obj, pods, mark, info.procs_per_node, kept)
        info = recall(info, kept, pods)
    if info.status is Status.RUNNING and backend.stall_seconds:
        backend.note_output(info, _last_output(backend, pods, mpi, backend.stall_seconds))
    return info


def _endings(pods: list, mpi: bool) -> dict[int, tuple[str, int, int | None]]:
    """The nodes whose container ended badly (now, or before a restart): node → (pod, restarts,
    exit code)."""
    out = {}
    for index, pod in newest_by_node(pods, mpi).items():
        found = pod_failure(index, pod)
        if found is not None and found.exit_code is not None:
            out[index] = (pod.metadata.name, restarts(pod), found.exit_code)
    return out


def _states(pods: list, mpi: bool) -> dict[int, tuple[str, int, int | None]]:
    """Where every node's container is: node → (pod, restarts, exit code of the ending that
    tells it, None while it runs or waits). The kept lines are taken again when it changes (a
    node ends, restarts, or its pod is replaced), so they follow the pods until they are gone."""
    out = {}
    for index, pod in newest_by_node(pods, mpi).items():
        ended, _ = failed_ending(node_container(pod))
        out[index] = (pod.metadata.name, restarts(pod), ended.exit_code if ended else None)
    return out


def _keep(backend, obj: dict, pods: list, mark: str, procs: int, before=None) -> None:
    """Keep the failure the pods show and each node's last lines (kept.py): a failed node's
    from the run that failed (``previous=true`` once its container restarted or ended again).
    A failure kept ``before`` that named its exception wins over a later one that does not."""
    newest = newest_by_node(pods, is_mpi(obj))
    texts = {i: _read(backend, pod, "last lines", tail_lines=kept_failure.KEPT_LINES,
                      previous=_failed_before(pod)).splitlines()
             for i, pod in newest.items()}  # fmt: skip
    if before is not None:  # a node whose lines cannot be read now keeps those read before
        texts = {i: t or before.lines.get(i, []) for i, t in texts.items()}
    logs = {i: [LogLine(i, t, r) for r, t in (split_rank(i, procs, x) for x in lines)]
            for i, lines in texts.items()}  # fmt: skip
    failure = cluster_failure(obj, newest, _events(backend, obj["metadata"]["name"]), logs)
    if before is not None and before.failure.exception and not failure.exception:
        failure = before.failure
    kept_failure.save(backend, obj, kept_failure.Kept(failure, texts, fingerprint=mark))


def _events(backend, name: str) -> list:
    try:
        return backend._events(name)
    except BackendError:
        return []  # events may be forbidden: the pods still say most


def _failed_before(pod) -> bool:
    """Whether the node's failure is told by its container's previous run (failures.py)."""
    return failed_ending(node_container(pod))[1]


def _read(backend, pod, what: str, previous: bool | None = None, **kwargs) -> str:
    """The pod's `node` container's log; ``previous`` (by default: while it waits to restart)
    for its run before."""
    if previous is None:
        container = node_container(pod)
        waiting = container is not None and container.state and container.state.waiting
        restarted = (
            container is not None and container.last_state and container.last_state.terminated
        )
        previous = bool(waiting and restarted)
    try:
        return backend.call(
            f"read the {what} of pod {pod.metadata.name}",
            backend.core.read_namespaced_pod_log,
            pod.metadata.name,
            backend.namespace,
            container=NODE,
            previous=previous,
            _request_timeout=REQUEST_TIMEOUT,
            **kwargs,
        )
    except BackendError:
        return ""


def _last_lines(backend, pod, node: int, procs: int) -> list[LogLine]:
    text = _read(backend, pod, "last lines", previous=_failed_before(pod), tail_lines=TAIL_LINES)
    return [LogLine(node, t, r) for r, t in (split_rank(node, procs, x) for x in text.splitlines())]


def _last_output(backend, pods: list, mpi: bool, stall_seconds: float) -> datetime | None:
    """When a running node last wrote a line (its start, before it wrote any): the nodes are
    asked one at a time, until one wrote within ``stall_seconds``."""
    latest = None
    now = datetime.now(timezone.utc)
    for pod in newest_by_node(pods, mpi).values():
        container = node_container(pod)
        running = container.state.running if container and container.state else None
        if running is None:
            continue
        moment = running.started_at
        m = _STAMP.match(_read(backend, pod, "last line", tail_lines=1, timestamps=True))
        if m:
            moment = parse_time(m.group(1) + "Z")
        if moment is not None and (latest is None or moment > latest):
            latest = moment
        if latest is not None and (now - latest).total_seconds() < stall_seconds:
            break
    return latest
