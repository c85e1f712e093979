"""The emulated Kueue (kubernetes-sigs/kueue with its TrainJob integration, Workloads as
``kueue.x-k8s.io/v1beta2``), off unless a test turns it on (``EmulatedCluster(kueue=True)``).

What it does for a TrainJob with the label ``kueue.x-k8s.io/queue-name``, as Kueue does:

- its webhook suspends the TrainJob when it is created (``spec.suspend: true``);
- its job reconciler (``pkg/controller/jobframework/reconciler.go``) makes the job's Workload,
  named as ``workload_names.go`` names it (``trainjob-<name>-<first 5 hex of sha1(kind, group,
  name, uid)>``), labelled ``kueue.x-k8s.io/job-uid`` and controlled by the TrainJob (it goes
  with it); ``spec.active`` true, the queue, one pod set of ``numNodes`` pods; the event
  ``CreatedWorkload`` on the TrainJob;
- admission: while fewer than ``quota`` Workloads are admitted (None: no limit), a queued one
  gets ``QuotaReserved`` and ``Admitted`` (events ``QuotaReserved``, ``Admitted``);
- "handle job is suspended": the suspended job of an admitted, active Workload is started
  (``spec.suspend: false``, event ``Started``). So a TrainJob that someone merely suspends
  runs again;
- ``spec.active: false`` (the workload controller): the Workload is evicted (``Evicted``,
  reason ``Deactivated``, "The workload is deactivated"; event ``EvictedDueToDeactivated``),
  its job suspended (event ``Stopped``) and, once the job has no active pod, its quota
  released (``QuotaReserved`` and ``Admitted`` False, ``Requeued`` False with reason
  ``Deactivated``); it is never started while inactive. Active again: ``Requeued`` True
  (``Reactivated``), ``Evicted`` False, and it queues for admission again;
- a finished TrainJob: its Workload ``Finished`` and its quota released;
- the visibility API (``visibility.kueue.x-k8s.io/v1beta2``, served by Kueue's visibility
  server): ``localqueues/NAME/pendingworkloads`` lists the Workloads of that LocalQueue waiting
  for quota in the order they were made (the order quota released goes to them: first in, first
  admitted, as Kueue's StrictFIFO without priorities), each with its position in the
  ClusterQueue and in the LocalQueue, from 0; ``offset`` and ``limit`` as Kueue reads them.

Not emulated: ClusterQueue and ResourceFlavor objects (every queue name is served, admitted to
the ClusterQueue ``cluster-queue``; LocalQueue objects are only stored, for a client to read),
resource quotas (``quota`` counts Workloads), priorities, preemption, admission checks,
waitForPodsReady, pod set templates.
"""

from __future__ import annotations

import asyncio
import hashlib

from tests.harness.cluster.objects import now

QUEUE = "kueue.x-k8s.io/queue-name"
JOB_UID = "kueue.x-k8s.io/job-uid"
WORKLOADS = "kueue.x-k8s.io/v1beta2/workloads"
TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"
PODS, JOBSET = "v1/pods", "jobset.sigs.k8s.io/jobset-name"
CLUSTER_QUEUE = "cluster-queue"
MAX_NAME, HASH = 253, 5  # workload_names.go: longMaxWorkloadNameLength, hashLength
SOURCE = "kueue-admission"


def workload_name(owner: str, uid: str, kind: str = "TrainJob",
                  group: str = "trainer.kubeflow.org") -> str:  # fmt: skip
    """The name Kueue gives an owner's Workload (GetWorkloadNameForOwnerWithGVK)."""
    digest = hashlib.sha1(f"{kind}\n{group}\n{owner}\n{uid}".encode()).hexdigest()
    return f"{kind.lower()}-{owner}"[: MAX_NAME - 1 - HASH] + "-" + digest[:HASH]


def condition(obj: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])  # fmt: skip


def _set(wl: dict, kind: str, status: str, reason: str, message: str) -> None:
    conditions = [c for c in (wl.get("status") or {}).get("conditions") or [] if c["type"] != kind]
    conditions.append({"type": kind, "status": status, "reason": reason, "message": message,
                       "lastTransitionTime": now()})  # fmt: skip
    wl.setdefault("status", {})["conditions"] = conditions


class Kueue:
    """Kueue's webhook, job reconciler and workload controller for TrainJobs (see above)."""

    def __init__(self, api, admission, quota: int | None = None):
        self.api, self.quota = api, quota
        self.queue: asyncio.Queue = asyncio.Queue()
        self.seen: dict[tuple[str, str], tuple] = {}  # what a reconcile found nothing to do on
        self.made: dict[str, int] = {}  # Workload uid → the order Kueue made it in (its queue)
        self.busy = False
        self.worker = asyncio.get_running_loop().create_task(self._work())
        api.watchers.append(self.heard)
        admission.webhooks.append(self.default)

    # ----- the webhook and the watch ----------------------------------------------------------

    @staticmethod
    def default(operation: str, kind: str | None, obj: dict) -> None:
        """Kueue's TrainJob webhook: a queued TrainJob is created suspended."""
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if operation == "CREATE" and kind == "TrainJob" and labels.get(QUEUE):
            obj.setdefault("spec", {})["suspend"] = True

    def heard(self, event: str, resource, obj: dict) -> None:
        meta = obj["metadata"]
        if resource.plural == "trainjobs" and (meta.get("labels") or {}).get(QUEUE):
            self.queue.put_nowait((meta.get("namespace"), meta["name"]))
        elif resource.plural == "pods" and (meta.get("labels") or {}).get(JOBSET):
            self.queue.put_nowait((meta.get("namespace"), meta["labels"][JOBSET]))
        elif resource.plural == "workloads":
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "TrainJob":
                    self.queue.put_nowait((meta.get("namespace"), ref["name"]))

    def settled(self, namespace: str, name: str) -> bool:
        """Whether Kueue has looked at the TrainJob and its Workload as they are now, and had
        nothing left to do (the test's thread may ask: it only reads)."""
        seen = self.seen.get((namespace, name))
        return not self.busy and self.queue.empty() and seen == self._versions(namespace, name)

    def _versions(self, namespace: str, name: str) -> tuple:
        tj = self.api.get(TRAINJOBS, namespace, name)
        wl = self.workload_of(tj) if tj is not None else None
        return tuple((o or {}).get("metadata", {}).get("resourceVersion") for o in (tj, wl))

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            self.busy = True
            try:
                if not await self.reconcile(*key):
                    self.seen[key] = self._versions(*key)
            except Exception as e:  # the harness must go on; the event says what went wrong
                tj = self.api.get(TRAINJOBS, *key)
                if tj is not None:
                    await self._event(tj, "Warning", "EmulatorError", f"{type(e).__name__}: {e}")
            finally:
                self.busy = False

    async def _event(self, involved: dict, kind: str, reason: str, message: str) -> None:
        await self.api.record_event(involved, kind, reason, message, SOURCE)

    # ----- the job reconciler -------------------------------------------------------------------

    def workload_of(self, tj: dict) -> dict | None:
        """The Workload labelled with the TrainJob's uid and controlled by it."""
        uid = tj["metadata"]["uid"]
        for wl in self.api.items(WORKLOADS, tj["metadata"]["namespace"]):
            meta = wl["metadata"]
            owned = any(r.get("uid") == uid and r.get("controller")
                        for r in meta.get("ownerReferences") or [])  # fmt: skip
            if owned and (meta.get("labels") or {}).get(JOB_UID) == uid:
                return wl
        return None

    async def reconcile(self, namespace: str, name: str) -> bool:
        """One look at a queued TrainJob; whether anything was changed."""
        tj = self.api.get(TRAINJOBS, namespace, name)
        if tj is None or tj["metadata"].get("deletionTimestamp"):
            return False  # its Workload goes with it (the garbage collector)
        queue = (tj["metadata"].get("labels") or {}).get(QUEUE)
        if not queue:
            return False
        wl = self.workload_of(tj)
        if wl is None:
            await self._create(tj, queue)
            return True
        if condition(wl, "Finished"):
            return False
        if condition(tj, "Complete") or condition(tj, "Failed"):
            _set(wl, "Finished", "True", "Succeeded" if condition(tj, "Complete") else "Failed",
                 "the job finished")  # fmt: skip
            await self._release(wl)
            return True
        if not (wl.get("spec") or {}).get("active", True):
            return await self._deactivated(tj, wl)
        if condition(wl, "Evicted"):  # reactivated
            _set(wl, "Requeued", "True", "Reactivated", "The workload was reactivated")
            _set(wl, "Evicted", "False", "Reactivated", "The workload was reactivated")
            await self.api.put(WORKLOADS, namespace, wl)
            return True
        if not condition(wl, "Admitted"):
            return await self._admit(wl)
        if (tj.get("spec") or {}).get("suspend"):  # "Job admitted, unsuspending"
            tj["spec"]["suspend"] = False
            await self.api.put(TRAINJOBS, namespace, tj)
            await self._event(tj, "Normal", "Started", f"Admitted by clusterQueue {CLUSTER_QUEUE}")
            return True
        return False

    async def _create(self, tj: dict, queue: str) -> None:
        meta = tj["metadata"]
        owner = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                 "name": meta["name"], "uid": meta["uid"], "controller": True,
                 "blockOwnerDeletion": True}  # fmt: skip
        nodes = ((tj.get("spec") or {}).get("trainer") or {}).get("numNodes") or 1
        wl = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": workload_name(meta["name"], meta["uid"]),
                         "labels": {JOB_UID: meta["uid"], QUEUE: queue},
                         "ownerReferences": [owner]},
            "spec": {"active": True, "queueName": queue,
                     "podSets": [{"name": "node", "count": nodes}]},
        }  # fmt: skip
        made = await self.api.create(WORKLOADS, meta["namespace"], wl)
        self.made[made["metadata"]["uid"]] = len(self.made)
        said = f"Created Workload: {meta['namespace']}/{made['metadata']['name']}"
        await self._event(tj, "Normal", "CreatedWorkload", said)

    # ----- the visibility API -------------------------------------------------------------------

    def _place(self, wl: dict) -> int:
        """A Workload's place in the queue: the order Kueue made them in (first in, first
        admitted)."""
        return self.made.get(wl["metadata"].get("uid", ""), len(self.made))

    def pending(self, request) -> dict:
        """A LocalQueue's pending Workloads (a ``PendingWorkloadsSummary``; see above)."""
        waiting = [w for w in self.api.items(WORKLOADS, None)
                   if not condition(w, "Admitted") and not condition(w, "Finished")
                   and (w.get("spec") or {}).get("active", True)]  # fmt: skip
        waiting.sort(key=self._place)
        items: list[dict] = []
        for place, wl in enumerate(waiting):
            meta = wl["metadata"]
            if (meta.get("namespace"), wl["spec"].get("queueName")) != (request.namespace,
                                                                         request.name):  # fmt: skip
                continue
            items.append({
                "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                             "creationTimestamp": meta.get("creationTimestamp")},
                "priority": 0, "localQueueName": request.name,
                "positionInClusterQueue": place, "positionInLocalQueue": len(items),
            })  # fmt: skip
        offset = int(request.params.get("offset") or 0)
        limit = int(request.params.get("limit") or 1000)
        return {"kind": "PendingWorkloadsSummary", "apiVersion": "visibility.kueue.x-k8s.io/v1beta2",
                "metadata": {}, "items": items[offset:offset + limit]}  # fmt: skip

    # ----- admission and the workload controller ------------------------------------------------

    def _admitted(self) -> int:
        return sum(condition(w, "Admitted") for w in self.api.items(WORKLOADS, None))

    async def _admit(self, wl: dict) -> bool:
        if self.quota is not None and self._admitted() >= self.quota:
            why = (f"couldn't assign flavors to pod set node: the ClusterQueue {CLUSTER_QUEUE} "
                   f"admits {self.quota} workloads at once")  # fmt: skip
            said = [c for c in (wl.get("status") or {}).get("conditions") or []
                    if c["type"] == "QuotaReserved" and c["message"] == why]  # fmt: skip
            if said:
                return False
            _set(wl, "QuotaReserved", "False", "Pending", why)
            wl = await self.api.put(WORKLOADS, wl["metadata"]["namespace"], wl)
            await self._event(wl, "Normal", "Pending", why)
            return True
        message = f"Quota reserved in ClusterQueue {CLUSTER_QUEUE}"
        _set(wl, "QuotaReserved", "True", "QuotaReserved", message)
        _set(wl, "Admitted", "True", "Admitted", "The workload is admitted")
        wl["status"]["admission"] = {"clusterQueue": CLUSTER_QUEUE, "podSetAssignments": [
            {"name": "node", "count": wl["spec"]["podSets"][0]["count"]}]}  # fmt: skip
        wl = await self.api.put(WORKLOADS, wl["metadata"]["namespace"], wl)
        await self._event(wl, "Normal", "QuotaReserved", message)
        await self._event(wl, "Normal", "Admitted",
                          f"Admitted by ClusterQueue {CLUSTER_QUEUE}")  # fmt: skip
        return True

    async def _deactivated(self, tj: dict, wl: dict) -> bool:
        """Evict, suspend the job, release the quota once its pods are gone; never start it."""
        namespace = tj["metadata"]["namespace"]
        if not condition(wl, "Evicted"):
            _set(wl, "Evicted", "True", "Deactivated", "The workload is deactivated")
            wl = await self.api.put(WORKLOADS, namespace, wl)
            await self._event(wl, "Normal", "EvictedDueToDeactivated",
                              "The workload is deactivated")  # fmt: skip
            return True
        if not (tj.get("spec") or {}).get("suspend"):  # stopJob
            tj["spec"]["suspend"] = True
            await self.api.put(TRAINJOBS, namespace, tj)
            await self._event(tj, "Normal", "Stopped", "The workload is deactivated")
            return True
        pods = [
            p
            for p in self.api.items(PODS, namespace)
            if (p["metadata"].get("labels") or {}).get(JOBSET) == tj["metadata"]["name"]
        ]
        if condition(wl, "QuotaReserved") and not pods:  # the job is no longer active
            _set(wl, "Requeued", "False", "Deactivated", "The workload is deactivated")
            await self._release(wl)
            return True
        return False

    async def _release(self, wl: dict) -> None:
        """Store ``wl`` without its quota; the Workloads waiting for quota are looked at again."""
        for kind in ("QuotaReserved", "Admitted"):
            if condition(wl, kind):
                _set(wl, kind, "False", "Pending", "The workload has no reservation")
        (wl.get("status") or {}).pop("admission", None)
        await self.api.put(WORKLOADS, wl["metadata"]["namespace"], wl)
        for other in sorted(self.api.items(WORKLOADS, None), key=self._place):
            if not condition(other, "Admitted"):
                for ref in other["metadata"].get("ownerReferences") or []:
                    self.queue.put_nowait((other["metadata"]["namespace"], ref["name"]))
