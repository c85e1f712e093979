"""A failure kept after its pods are gone: a ConfigMap owned by the TrainJob.

What tells a job's failure (the termination message with the cell and line, how the container
ended, each node's last lines) lives in the pods, and the pods go: the Job controller deletes a
crash-looping pod when the backoff limit is reached, ``clean_pod_policy All`` and an
administrator delete them. So whenever kale_ext looks at one job (``get_job``: ``status``, the
panel, the monitor, ``%kale_status``, ``GET jobs/{name}``) and a node's container has ended
badly, it keeps the failure it found and the last ``KEPT_LINES`` lines of each node that has a
pod in the ConfigMap ``<job>-failure``, labelled with the job's name and owned by the TrainJob
(deleted with it by the garbage collector). It is written again, until the pods are gone, only
when a node's state changed (it ended, restarted, its pod was replaced): the fingerprint says
which states it was taken from. A failed node's lines and failure are those of its first
failed run (``previous=true`` once it runs or ended again: failures.failed_ending).

Every view reads it once the pods no longer say more: ``get_job`` (one more read, for a failed
job only), ``list_jobs`` (one list call, only when a failed job has no pods left) and ``logs``
(the kept lines, under a line that says they were kept). Its size is bounded (``KEPT_BYTES``,
well below a ConfigMap's 1 MiB): the oldest lines go first.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from ..base import BackendError, Failure, NotFound
from .config import Cluster
from .workspace import owner_of

log = logging.getLogger(__name__)

#: The label that names the job a kept failure belongs to.
KEPT_LABEL = "kale-ext.io/failure-of"
#: How many of each node's last lines are kept.
KEPT_LINES = 200
#: At most this many bytes of lines are kept, for all nodes together (a ConfigMap holds 1 MiB).
KEPT_BYTES = 512 * 1024
#: At most this many bytes of one line are kept (its end is cut).
LINE_BYTES = 4096


@dataclass
class Kept:
    """What was kept of a failed job: its failure, each node's last lines, when, and which
    pods' endings it was taken from."""

    failure: Failure
    lines: dict[int, list[str]] = field(default_factory=dict)
    time: str = ""
    fingerprint: str = ""

    def notice(self, node: int) -> str:
        """The line that heads a node's kept lines."""
        count = len(self.lines.get(node, []))
        return (
            f"kale_ext: the pod of node {node} is gone; its last {count} lines, kept at "
            f"{self.time} when it had failed:"
        )


def name_of(job: str) -> str:
    return f"{job}-failure"


def fingerprint(endings: dict[int, tuple[str, int, int | None]]) -> str:
    """Which node states a kept failure was taken from: node → (pod, restarts, exit code)."""
    return ";".join(f"{n}:{p}:{r}:{c}" for n, (p, r, c) in sorted(endings.items()))


def _cut(line: str) -> str:
    raw = line.encode()
    return line if len(raw) <= LINE_BYTES else raw[:LINE_BYTES].decode(errors="ignore") + " …"


def bounded(lines: dict[int, list[str]]) -> dict[int, list[str]]:
    """Each node's last KEPT_LINES lines (each at most LINE_BYTES), the oldest dropped until
    all nodes together hold at most KEPT_BYTES."""
    budget = KEPT_BYTES // max(len(lines), 1)
    out = {}
    for node, texts in lines.items():
        kept: list[str] = []
        size = 0
        for text in reversed(texts[-KEPT_LINES:]):
            text = _cut(text)
            size += len(text.encode()) + 1
            if size > budget:
                break
            kept.append(text)
        out[node] = kept[::-1]
    return out


def body(trainjob: dict, kept: Kept) -> dict:
    """The ConfigMap of ``kept``, owned by the TrainJob."""
    job = trainjob["metadata"]["name"]
    data = {
        "failure.json": json.dumps(asdict(kept.failure)),
        "fingerprint": kept.fingerprint,
        "time": kept.time,
        **{f"node-{n}.log": "\n".join(texts) for n, texts in bounded(kept.lines).items()},
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name_of(job),
            "labels": {KEPT_LABEL: job},
            "ownerReferences": [owner_of(trainjob)],
        },
        "data": data,
    }


def parse(configmap) -> Kept | None:
    """A Kept from its ConfigMap (the kubernetes client's), or None if it is not one."""
    data = configmap.data or {}
    try:
        failure = Failure.from_dict(json.loads(data.get("failure.json", "")))
    except (TypeError, ValueError):
        return None
    if failure is None:
        return None
    lines = {}
    for key, text in data.items():
        if key.startswith("node-") and key.endswith(".log") and key[5:-4].isdigit():
            lines[int(key[5:-4])] = text.split("\n") if text else []
    return Kept(failure, lines, data.get("time", ""), data.get("fingerprint", ""))


def read(cluster: Cluster, job: str) -> Kept | None:
    """The job's kept failure; None when nothing was kept (or it cannot be read)."""
    what = f"read ConfigMap {cluster.namespace}/{name_of(job)} (the failure kept)"
    try:
        found = cluster.call(
            what, cluster.core.read_namespaced_config_map, name_of(job), cluster.namespace
        )
    except NotFound:
        return None
    except BackendError as e:
        log.warning("%s", e)
        return None
    return parse(found)


def listed(cluster: Cluster) -> dict[str, Kept]:
    """Every kept failure in the namespace, by job name (one call)."""
    what = f"list the kept failures in {cluster.namespace}"
    try:
        items = cluster.call(
            what,
            cluster.core.list_namespaced_config_map,
            cluster.namespace,
            label_selector=KEPT_LABEL,
        ).items
    except BackendError as e:
        log.warning("%s", e)
        return {}
    out = {}
    for item in items:
        kept = parse(item)
        job = (item.metadata.labels or {}).get(KEPT_LABEL)
        if kept is not None and job:
            out[job] = kept
    return out


def save(cluster: Cluster, trainjob: dict, kept: Kept) -> None:
    """Create or replace the job's kept failure. A failure to save is logged, never raised:
    the look at the job goes on."""
    kept.time = kept.time or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = body(trainjob, kept)
    name, ns, core = manifest["metadata"]["name"], cluster.namespace, cluster.core
    try:
        try:
            cluster.call(f"create ConfigMap {ns}/{name}", core.create_namespaced_config_map, ns,
                         manifest)  # fmt: skip
        except BackendError as e:
            if e.status != 409:
                raise
            change = [{"op": "replace", "path": "/data", "value": manifest["data"]}]
            cluster.call(f"update ConfigMap {ns}/{name}", core.patch_namespaced_config_map,
                         name, ns, change)  # fmt: skip
    except BackendError as e:
        log.warning("could not keep the failure of job %s: %s", trainjob["metadata"]["name"], e)
