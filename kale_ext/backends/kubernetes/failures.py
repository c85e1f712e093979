"""A failed TrainJob's summary: the node (and rank) that failed first and why, from its pods
(how each container ended, the termination message the compiled module writes: the cell and
line), torchrun's report in the failing pod's log, and that rank's last lines."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..base import Failure, LogLine
from ..failure import (
    RankFailure,
    exit_words,
    first_failure,
    from_record,
    from_report,
    merge,
    rank_tail,
    summarize,
)
from ..torchrun_report import find_reports, fold_reports
from .reasons import (
    OUT_OF_MEMORY,
    condition_reason,
    container_of,
    ended_badly,
    ending,
    pod_reason,
)


def termination_record(terminated) -> dict | None:
    """The error record the compiled module left as the container's termination message."""
    try:
        data = json.loads(terminated.message or "")
    except (TypeError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("kale_ext"), dict) else None


def failed_ending(container) -> tuple[object | None, bool]:
    """The ending that tells how a node's container failed, and whether it is the previous
    run's (``previous=true`` logs hold its lines). The first failure wins: a container that
    ended badly, then ended again (its next run killed by SIGTERM as the Job controller deletes
    the pod, say) is told by its earlier ending, unless only the later one left the compiled
    module's record (the cell and line)."""
    state = container.state if container else None
    now = state.terminated if state else None
    last = container.last_state.terminated if container and container.last_state else None
    bad = [(e, e is last) for e in (last, now) if ended_badly(e)]
    with_record = [b for b in bad if termination_record(b[0]) is not None]
    if with_record or bad:
        return (with_record or bad)[0]
    return now, False


def pod_failure(index: int, pod, events: Iterable = ()) -> RankFailure | None:
    """How one node's newest pod failed, if it did (or is stuck: a reason, no exit)."""
    ended, _ = failed_ending(container_of(pod))
    if pod.status.reason == "Evicted" or not ended_badly(ended):
        reason = pod_reason(pod, [e for e in events if e.object == f"Pod/{pod.metadata.name}"])
        starting = reason in (None, "ContainerCreating", "PodInitializing")
        return None if starting else RankFailure(node=index, reason=reason)
    record = termination_record(ended)
    found = (from_record(record, index) if record else None) or RankFailure(node=index)
    found.node = index
    found.exit_code = ended.exit_code
    if ended.reason == "OOMKilled":
        found.signal, found.reason = OUT_OF_MEMORY, ending(ended, pod)
    else:
        found.signal = exit_words(ended.exit_code, container=True)
    if found.time is None and ended.finished_at is not None:
        found.time = ended.finished_at.timestamp()
    return found  # its rank: the record's, else torchrun's report (the exit code is torchrun's)


def cluster_failure(
    obj: dict,
    newest: dict[int, object],
    events: Iterable = (),
    logs: dict[int, list[LogLine]] | None = None,
) -> Failure:
    """The summary of a failed TrainJob from the newest pod of each node; ``logs`` (a node's
    last lines, its ranks split) add torchrun's report and the failing rank's last lines."""
    events, logs = list(events), logs or {}
    found: list[RankFailure] = []
    for index, pod in newest.items():
        failure = pod_failure(index, pod, events)
        if failure is None:
            continue
        reported = [
            from_report(e, index) for e in find_reports(t.text for t in logs.get(index, []))
        ]
        if reported and not (failure.exception or failure.signal or failure.reason):
            found += reported  # the container's exit code is torchrun's: its report names the rank
        else:
            found.append(failure)
    first = first_failure(merge(found))
    if first is None:
        conditions = (obj.get("status") or {}).get("conditions") or []
        failed = next((c for c in conditions if c.get("type") == "Failed"), {})
        words = condition_reason(obj, failed)
        return Failure(summary=words, reason=words)
    tail = rank_tail(fold_reports(logs.get(first.node, []), first.node), first.rank)
    return summarize(first, tail, container=True)
