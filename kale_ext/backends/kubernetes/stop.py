"""Stop a TrainJob and keep it: suspended, with who stopped it and when in its STOPPED
annotation. Trainer then suspends its JobSet, whose pods end, and the TrainJob (its record)
stays. Deleting the pods would not do: the JobSet would start them again, or fail the job.

A TrainJob that Kueue manages (it has the label ``kueue.x-k8s.io/queue-name``) needs more.
Kueue's job reconciler (kubernetes-sigs/kueue, pkg/controller/jobframework/reconciler.go,
"handle job is suspended") starts a suspended job again while its Workload is admitted, so the
job would run again behind the user's back. Kueue's own way to stop a workload is to deactivate
its Workload (``spec.active: false``, as ``kueuectl stop workload`` does): Kueue then evicts it
(condition ``Evicted``, reason ``Deactivated``), suspends the job itself, releases its quota,
and never starts it while it stays inactive. So the Workload is deactivated first, then the
TrainJob suspended; when the Workload cannot be deactivated the job is left running and the
BackendError says why.

Kueue names the Workload ``trainjob-<name>-<hash>`` and labels it with the TrainJob's uid
(``kueue.x-k8s.io/job-uid``); it is found by that label and checked by its controller owner
reference (the TrainJob's uid), never by its name alone. Kueue's TrainJob integration needs
Kueue ≥ 0.14; the releases built for Trainer v2.2 and later (0.17+) serve Workloads as
``kueue.x-k8s.io/v1beta2`` (served since 0.15, the stored version since 0.16), used here.

Permissions: ``list`` and ``patch`` on ``workloads.kueue.x-k8s.io`` in the namespace.
"""

from __future__ import annotations

from ...job.trainjob import KUEUE_QUEUE, STOPPED
from ..base import BackendError, NotFound
from .config import TRAINJOBS, Cluster
from .kueue import GROUP, JOB_UID, VERSION, WORKLOADS, workloads_of

__all__ = ["JOB_UID", "deactivate", "stop"]
PERMISSION = f"list and patch {WORKLOADS}.{GROUP}"


def _refused(name: str, queue: str, why: str, status: int, reason: str) -> BackendError:
    return BackendError(
        f"job {name} was not stopped: Kueue (queue {queue}) would start a suspended job again, "
        f"so kale_ext first deactivates the job's Kueue Workload, and {why}",
        status,
        reason,
    )


def _failed(cluster: Cluster, name: str, queue: str, e: BackendError) -> BackendError:
    """The refusal for a failed Workload call: the server's answer, and the permission asked."""
    needs = ""
    if e.status in (401, 403):
        needs = f"; kale_ext needs {PERMISSION} in namespace {cluster.namespace} (its Role)"
    return _refused(name, queue, f"{e}{needs}", e.status, e.reason)


def deactivate(cluster: Cluster, trainjob: dict, queue: str) -> list[str]:
    """Set ``spec.active: false`` on the TrainJob's Workloads; their names. A BackendError
    naming the server's answer (and the permission needed) when that cannot be done: the
    TrainJob must then not be suspended, or Kueue would start it again."""
    name, uid = trainjob["metadata"]["name"], trainjob["metadata"]["uid"]
    try:
        found = workloads_of(cluster, trainjob)
    except NotFound:
        why = (f"this cluster does not serve {WORKLOADS}.{GROUP}/{VERSION} (HTTP 404 NotFound): "
               "is Kueue (≥ 0.15) installed?")  # fmt: skip
        raise _refused(name, queue, why, 409, "Conflict") from None
    except BackendError as e:
        raise _failed(cluster, name, queue, e) from None
    if not found:
        why = (f"Kueue has made no Workload for it yet (none labelled {JOB_UID}={uid} and owned "
               "by it): is Kueue running? Try again in a moment")  # fmt: skip
        raise _refused(name, queue, why, 409, "Conflict")
    for workload in found:
        wl = workload["metadata"]["name"]
        try:
            cluster.call(
                f"deactivate Kueue Workload {cluster.namespace}/{wl}",
                cluster.custom.patch_namespaced_custom_object,
                GROUP, VERSION, cluster.namespace, WORKLOADS, wl, {"spec": {"active": False}},
            )  # fmt: skip
        except NotFound:
            why = f"its Workload {wl} was deleted meanwhile: try again"
            raise _refused(name, queue, why, 409, "Conflict") from None
        except BackendError as e:
            raise _failed(cluster, name, queue, e) from None
    return [w["metadata"]["name"] for w in found]


#: How many times a stop reads the TrainJob again when it changed between the read and the
#: suspend (the controllers write its status as it runs); beyond, a 409 says to try again.
STOP_TRIES = 5


def _stoppable(cluster: Cluster, name: str, trainjob: dict) -> None:
    """A 409 for a TrainJob being deleted or stopped already (by a stop or delete that came
    first, from here or elsewhere)."""
    meta = trainjob["metadata"]
    if meta.get("deletionTimestamp"):
        raise BackendError(f"job {name} is being deleted: there is nothing to stop", 409,
                           "Conflict")  # fmt: skip
    said = (meta.get("annotations") or {}).get(STOPPED)
    if said and (trainjob.get("spec") or {}).get("suspend"):
        raise BackendError(f"job {name} has ended already (Stopped: {said}): there is nothing "
                           "to stop", 409, "Conflict")  # fmt: skip


def stop(cluster: Cluster, name: str, reason: str) -> None:
    """Suspend TrainJob ``name``, saying ``reason`` in its STOPPED annotation; one in a Kueue
    queue has its Workload deactivated first.

    Serialised with every other stop and delete, in any process: the suspend is sent with the
    resourceVersion read (the API server refuses it, 409, when the TrainJob changed since), so
    a stop that meets another stop or a delete that came first answers 409 (stopped already,
    being deleted) or 404 (gone), never stops a job twice nor a deleted one."""
    trainjob = cluster.trainjob(name)
    _stoppable(cluster, name, trainjob)
    queue = (trainjob["metadata"].get("labels") or {}).get(KUEUE_QUEUE)
    deactivated = deactivate(cluster, trainjob, queue) if queue else []
    what = f"stop TrainJob {cluster.namespace}/{name}"
    for tries_left in range(STOP_TRIES - 1, -1, -1):
        version = trainjob["metadata"]["resourceVersion"]
        body = {"metadata": {"annotations": {STOPPED: reason}, "resourceVersion": version},
                "spec": {"suspend": True}}  # fmt: skip
        try:
            cluster.trainer_objects(what, "patch", TRAINJOBS, name, body)
            return
        except NotFound:
            raise NotFound(f"job {name} was deleted while it was being stopped") from None
        except BackendError as e:
            if e.status == 409 and tries_left:  # changed since it was read: look again
                trainjob = cluster.trainjob(name)  # NotFound: deleted meanwhile
                _stoppable(cluster, name, trainjob)
                continue
            if deactivated:  # Kueue suspends it now, but the job does not say who stopped it
                raise BackendError(f"{e}; its Kueue Workload {deactivated[0]} is deactivated, so "
                                   "Kueue stops its pods: stop it again to record who stopped it",
                                   e.status, e.reason) from None  # fmt: skip
            raise
