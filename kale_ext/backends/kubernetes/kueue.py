"""What Kueue says of a job, and the namespace's queues (``kueue.x-k8s.io/v1beta2``).

A TrainJob with the label ``kueue.x-k8s.io/queue-name`` waits suspended until Kueue admits its
Workload (named ``trainjob-<name>-<hash>``, labelled with the TrainJob's uid, controlled by it).
The Workload's conditions tell the waits apart (kubernetes-sigs/kueue,
apis/kueue/v1beta2/workload_types.go; pkg/workload/workload.go resets Evicted and Preempted to
False when quota is reserved again):

- ``QuotaReserved`` not True: waiting for quota; its message says why (``couldn't assign
  flavors to pod set node: insufficient quota ...``, ``LocalQueue x doesn't exist``);
- ``QuotaReserved`` True, ``Admitted`` not: quota held, admission checks pending;
- ``Admitted`` True: admitted (Kueue starts the job);
- ``Evicted`` True (reason ``Preempted``, ``PodsReadyTimeout``, ``ClusterQueueStopped``, ...),
  with ``Preempted`` True and its reason (``InClusterQueue``, ``InCohortReclamation``, ...)
  when preempted: stopped by Kueue, and waiting for quota again;
- ``spec.active`` false: deactivated (kale_ext's stop does it; so does ``kueuectl stop``):
  suspended by the user, holding no quota; unless Kueue deactivated it itself (``Evicted``
  reason ``DeactivatedDueTo<cause>``: too many requeues, its maximum execution time, a
  rejected admission check: pkg/workload/workload.go ``Evict``);
- ``Finished`` True: the TrainJob's own conditions say how it ended.

The ClusterQueue of a waiting Workload is its LocalQueue's ``spec.clusterQueue`` (an admitted
one names it in ``status.admission``). Its position comes from Kueue's visibility API
(``visibility.kueue.x-k8s.io/v1beta2``, ``localqueues/NAME/pendingworkloads``), served only
where Kueue's visibility server is installed and the user may read it; elsewhere it is left out,
and the backend does not ask again for VISIBILITY_RETRY seconds (one failed call per listing of a
waiting job otherwise), nor for VISIBILITY_DOWN_RETRY while its server is down (a 503) or does
not answer in time (a 504): each call would wait for it.

Permissions (the user's Role in the namespace): ``list`` on ``workloads`` and ``list`` and
``get`` on ``localqueues`` (``kueue.x-k8s.io``); ``get`` on ``localqueues/pendingworkloads``
(``visibility.kueue.x-k8s.io``) for the position. Without them a job still reads Queued, with
its queue named.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from time import monotonic

from ...job.trainjob import KUEUE_QUEUE, STOPPED
from ..base import BackendError, NotFound, Queue
from .config import Cluster

log = logging.getLogger(__name__)

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
WORKLOADS, LOCAL_QUEUES = "workloads", "localqueues"
VISIBILITY = "visibility.kueue.x-k8s.io"
JOB_UID = "kueue.x-k8s.io/job-uid"
#: The most pending Workloads of one LocalQueue read for a position; beyond, none is shown.
MAX_PENDING = 500
#: Seconds to connect to, and between bytes of, the visibility API (an aggregated API server that
#: may be down): a position is a detail, not worth the wait of an ordinary call.
VISIBILITY_TIMEOUT = (5, 10)
#: Seconds a backend does not ask the visibility API again after the cluster did not serve it
#: (a 404 on its group) or the user may not read it (a 403).
VISIBILITY_RETRY = 300
#: Seconds it does not ask again after a 503 (the API is registered but its server is down or
#: unreachable) or a 504 (no answer in VISIBILITY_TIMEOUT): it may be back soon, and each call
#: meanwhile waits for the aggregator's answer or the timeout.
VISIBILITY_DOWN_RETRY = 60
#: The most LocalQueues whose pending Workloads one listing of jobs reads.
MAX_QUEUES_ASKED = 4
#: The most LocalQueues `GET queues` lists (a namespace holds a handful).
MAX_QUEUES = 200

#: A Workload's states (``Waiting.state``).
WAITING, RESERVED, ADMITTED, EVICTED, PREEMPTED, DEACTIVATED, FINISHED, INADMISSIBLE = (
    "waiting", "reserved", "admitted", "evicted", "preempted", "deactivated", "finished",
    "inadmissible",
)  # fmt: skip
#: The states of a Workload that waits for quota: its ClusterQueue is worth naming.
FOR_QUOTA = frozenset({WAITING, RESERVED, EVICTED, PREEMPTED})


@dataclass(frozen=True)
class Waiting:
    """Kueue's word on one job: its state (above) and the words every view shows."""

    state: str
    text: str


def _conditions(obj: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}


def _true(conditions: dict[str, dict], kind: str) -> dict | None:
    found = conditions.get(kind)
    return found if found is not None and found.get("status") == "True" else None


def _said(condition: dict) -> str:
    reason, message = condition.get("reason") or "", condition.get("message") or ""
    return f"{reason}: {message}" if reason and message else reason or message


def workload_state(
    workload: dict, cluster_queue: str | None = None, position: int | None = None
) -> Waiting:
    """A Workload's state in words (a pure function of the object as the API server returns
    it). ``cluster_queue``: its LocalQueue's, when the Workload does not name it (it names it
    once admitted); ``position``: its place in that ClusterQueue, from 1, when known."""
    spec, conditions = workload.get("spec") or {}, _conditions(workload)
    local = spec.get("queueName")
    admitted_by = ((workload.get("status") or {}).get("admission") or {}).get("clusterQueue")
    cq = admitted_by or cluster_queue
    where = [f"ClusterQueue {cq}" if cq else f"LocalQueue {local}"]
    if _true(conditions, "Finished"):
        return Waiting(FINISHED, "finished (Kueue)")
    if spec.get("active") is False:
        evicted = _true(conditions, "Evicted") or {}
        if (evicted.get("reason") or "").startswith("DeactivatedDueTo"):  # Kueue's own doing
            return Waiting(DEACTIVATED, f"deactivated by Kueue ({_said(evicted)}), holding no "
                           f"quota: Kueue runs it only once its spec.active is true again "
                           f"(LocalQueue {local})")  # fmt: skip
        return Waiting(DEACTIVATED, f"suspended by the user: its Kueue Workload is deactivated, "
                       f"holding no quota, and Kueue runs it only once its spec.active is true "
                       f"again (LocalQueue {local})")  # fmt: skip
    if _true(conditions, "Admitted"):
        return Waiting(ADMITTED, f"admitted (Kueue: {where[0]})")
    evicted = _true(conditions, "Evicted")
    if evicted is not None:
        preempted = _true(conditions, "Preempted")
        kind, why = (PREEMPTED, preempted) if preempted is not None else (EVICTED, evicted)
        return Waiting(kind, f"{kind} by Kueue ({_said(why)}); waiting for quota again "
                       f"(Kueue: {where[0]})")  # fmt: skip
    if _true(conditions, "QuotaReserved"):
        return Waiting(RESERVED, f"quota reserved, waiting for admission checks (Kueue: "
                       f"{where[0]})")  # fmt: skip
    pending = conditions.get("QuotaReserved") or {}
    if pending.get("reason") == "Inadmissible":  # no such LocalQueue, an inactive ClusterQueue
        return Waiting(INADMISSIBLE, f"not admissible (Kueue: {where[0]}): "
                       f"{pending.get('message') or 'Inadmissible'}; it waits until that is "
                       "fixed")  # fmt: skip
    if position is not None:
        where.append(f"position {position}")
    why = f": {pending['message']}" if pending.get("message") else ""
    return Waiting(WAITING, f"waiting for quota (Kueue: {', '.join(where)}){why}")


def owned_by(workload: dict, uid: str) -> bool:
    """Whether ``workload`` is the Workload Kueue made for the TrainJob of ``uid``: labelled
    with its uid, and it is the controller owner."""
    meta = workload.get("metadata") or {}
    if (meta.get("labels") or {}).get(JOB_UID) != uid:
        return False
    refs = meta.get("ownerReferences") or []
    return any(r.get("uid") == uid and r.get("kind") == "TrainJob" and r.get("controller")
               for r in refs)  # fmt: skip


def workloads_of(cluster: Cluster, trainjob: dict) -> list[dict]:
    """The Workloads Kueue made for ``trainjob``: labelled with its uid, controlled by it."""
    uid = trainjob["metadata"]["uid"]
    listed = cluster.call(
        f"list the Kueue Workloads in {cluster.namespace}",
        cluster.custom.list_namespaced_custom_object,
        GROUP,
        VERSION,
        cluster.namespace,
        WORKLOADS,
        label_selector=f"{JOB_UID}={uid}",
    )
    return [w for w in listed.get("items") or [] if owned_by(w, uid)]


def queued(trainjob: dict, pods: Iterable) -> str | None:
    """The LocalQueue of a TrainJob whose Workload is worth a look: in a queue, not finished,
    not stopped by kale_ext (its annotation says so), and suspended or not every pod running
    (a suspended job's pods may still be stopping, Running until they are gone)."""
    meta = trainjob["metadata"]
    queue = (meta.get("labels") or {}).get(KUEUE_QUEUE)
    if not queue or (meta.get("annotations") or {}).get(STOPPED):
        return None
    conditions = _conditions(trainjob)
    if _true(conditions, "Complete") or _true(conditions, "Failed"):
        return None
    pods = list(pods)
    suspended = (trainjob.get("spec") or {}).get("suspend") is True
    if not suspended and pods and all(p.status.phase in ("Running", "Succeeded") for p in pods):
        return None
    return queue


def positions(summary: dict) -> dict[str, int]:
    """Workload name → its position in its ClusterQueue, from 1, from a visibility API
    answer (``PendingWorkloadsSummary``; Kueue counts from 0)."""
    out = {}
    for item in summary.get("items") or []:
        name = (item.get("metadata") or {}).get("name")
        place = item.get("positionInClusterQueue")
        if isinstance(name, str) and isinstance(place, int) and not isinstance(place, bool):
            out[name] = place + 1
    return out


def pending_summary(cluster: Cluster, queue: str) -> dict:
    """The visibility API's pending Workloads of LocalQueue ``queue`` (a BackendError where
    it is not served or not allowed)."""
    path = f"/apis/{VISIBILITY}/{VERSION}/namespaces/{{namespace}}/{LOCAL_QUEUES}/{{name}}"
    path += "/pendingworkloads"
    return cluster.call(
        f"read the pending Workloads of Kueue LocalQueue {cluster.namespace}/{queue}",
        cluster.custom.api_client.call_api,
        path,
        "GET",
        path_params={"namespace": cluster.namespace, "name": queue},
        query_params=[("limit", MAX_PENDING)],
        header_params={"Accept": "application/json"},
        response_type="object",
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
        _request_timeout=VISIBILITY_TIMEOUT,
    )


def places_in(cluster: Cluster, queue: str) -> dict[str, int]:
    """The positions of LocalQueue ``queue``'s pending Workloads (positions()); none where the
    visibility API is not served or not allowed, remembered by the backend for
    VISIBILITY_RETRY seconds (VISIBILITY_DOWN_RETRY when its server is down)."""
    if monotonic() < cluster.unserved.get(VISIBILITY, 0):
        return {}
    try:
        return positions(pending_summary(cluster, queue))
    except BackendError as e:
        log.debug("Kueue: %s", e)
        if e.status == 403 or (e.status == 404 and "does not serve this resource" in str(e)):
            cluster.unserved[VISIBILITY] = monotonic() + VISIBILITY_RETRY
        elif e.status in (503, 504):
            cluster.unserved[VISIBILITY] = monotonic() + VISIBILITY_DOWN_RETRY
        return {}


def _quietly(what, *args, default=None):
    """A read whose failure (not served, not allowed) leaves a detail out."""
    try:
        return what(*args)
    except BackendError as e:
        log.debug("Kueue: %s", e)
        return default


def _cluster_queue_of(cluster: Cluster, queue: str) -> str | None:
    found = cluster.call(
        f"get Kueue LocalQueue {cluster.namespace}/{queue}",
        cluster.custom.get_namespaced_custom_object,
        GROUP, VERSION, cluster.namespace, LOCAL_QUEUES, queue,
    )  # fmt: skip
    return (found.get("spec") or {}).get("clusterQueue")


def state_of(cluster: Cluster, trainjob: dict, pods: Iterable) -> Waiting | None:
    """One job's Kueue state (three calls at most: its Workload, its LocalQueue, the
    position); None when it needs no look or its Workload cannot be read (not yet made, or
    not allowed: the job then reads as waiting for its queue)."""
    queue = queued(trainjob, pods)
    if queue is None:
        return None
    found = _quietly(workloads_of, cluster, trainjob, default=[])
    if not found:
        return None
    workload = found[0]
    first = workload_state(workload)
    if first.state not in FOR_QUOTA:
        return first
    local = (workload.get("spec") or {}).get("queueName") or queue
    cluster_queue = _quietly(_cluster_queue_of, cluster, local)
    position = None
    if first.state == WAITING:
        position = places_in(cluster, local).get(workload["metadata"]["name"])
    return workload_state(workload, cluster_queue, position)


def states_of(cluster: Cluster, trainjobs: list[dict], pods_of: dict) -> dict[str, Waiting]:
    """The Kueue states of a listing's jobs (TrainJob name → state), in a bounded number of
    calls: the namespace's Workloads and LocalQueues once, and the pending Workloads of at
    most MAX_QUEUES_ASKED LocalQueues. Nothing when no job needs a look, or on a failure."""
    looked = {t["metadata"]["uid"]: t["metadata"]["name"] for t in trainjobs
              if queued(t, pods_of.get(t["metadata"]["name"], []))}  # fmt: skip
    if not looked:
        return {}
    listed = _quietly(cluster.call, f"list the Kueue Workloads in {cluster.namespace}",
                      cluster.custom.list_namespaced_custom_object, GROUP, VERSION,
                      cluster.namespace, WORKLOADS, default={})  # fmt: skip
    mine: dict[str, dict] = {}
    for workload in listed.get("items") or []:
        uid = ((workload.get("metadata") or {}).get("labels") or {}).get(JOB_UID)
        if uid in looked and owned_by(workload, uid):
            mine[looked[uid]] = workload
    firsts = {name: workload_state(w) for name, w in mine.items()}
    waiting = {n for n, s in firsts.items() if s.state in FOR_QUOTA}
    if not waiting:
        return firsts
    queues = {q.name: q.cluster_queue for q in _quietly(list_queues, cluster, default=[])}
    places: dict[str, int] = {}
    asked = sorted({(mine[n].get("spec") or {}).get("queueName") or "" for n in waiting
                    if firsts[n].state == WAITING} - {""})[:MAX_QUEUES_ASKED]  # fmt: skip
    for queue in asked:
        places.update(places_in(cluster, queue))
    out = dict(firsts)
    for name in waiting:
        workload = mine[name]
        local = (workload.get("spec") or {}).get("queueName")
        place = places.get(workload["metadata"]["name"])
        out[name] = workload_state(workload, queues.get(local), place)
    return out


def queue_warnings(cluster: Cluster, queue: str) -> list[str]:
    """What a submit to LocalQueue ``queue`` should say: that the cluster has no Kueue (the
    label then does nothing: the job runs at once), or no such LocalQueue (the job waits,
    inadmissible, until one is made); nothing when it cannot tell."""
    try:
        _cluster_queue_of(cluster, queue)
    except NotFound as e:
        if "could not find the requested resource" in str(e):
            return [f"queue {queue}: this cluster does not serve {LOCAL_QUEUES}.{GROUP}/"
                    f"{VERSION} (is Kueue installed?), so the job runs without waiting for "
                    "quota"]  # fmt: skip
        return [f"queue {queue}: namespace {cluster.namespace} has no such Kueue LocalQueue, "
                "so the job waits until one is made (`kale-ext queues` lists them)"]  # fmt: skip
    except BackendError as e:
        log.debug("Kueue: %s", e)
    return []


def list_queues(cluster: Cluster) -> list[Queue]:
    """The namespace's LocalQueues, by name (a BackendError naming the server's answer)."""
    listed = cluster.call(
        f"list the Kueue LocalQueues in {cluster.namespace}",
        cluster.custom.list_namespaced_custom_object,
        GROUP, VERSION, cluster.namespace, LOCAL_QUEUES, limit=MAX_QUEUES,
    )  # fmt: skip
    out = []
    for item in listed.get("items") or []:
        status = item.get("status") or {}
        out.append(Queue(
            name=item["metadata"]["name"],
            cluster_queue=(item.get("spec") or {}).get("clusterQueue"),
            pending=status.get("pendingWorkloads"),
            admitted=status.get("admittedWorkloads"),
        ))  # fmt: skip
    return sorted(out, key=lambda q: q.name)


def queues_or_why(cluster: Cluster) -> tuple[list[Queue], str | None]:
    """The namespace's LocalQueues; none, saying why, where Kueue is not installed or the
    user may not list them (another failure is a BackendError)."""
    try:
        queues = list_queues(cluster)
    except NotFound:
        return [], ("this cluster does not serve localqueues.kueue.x-k8s.io/v1beta2: Kueue "
                    "(≥ 0.15) is not installed, so jobs run without a queue")  # fmt: skip
    except BackendError as e:
        if e.status not in (401, 403):
            raise
        return [], (f"{e}; listing queues needs list on localqueues.kueue.x-k8s.io in "
                    f"namespace {cluster.namespace} (its Role)")  # fmt: skip
    if not queues:
        return [], f"namespace {cluster.namespace} has no Kueue LocalQueue"
    return queues, None
