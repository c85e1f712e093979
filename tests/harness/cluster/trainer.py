"""The emulated Kubeflow Trainer v2.3 controller, with what JobSet and the Job controller do
for it: a TrainJob's pods (``render.py``), its conditions, its events.

- A new TrainJob gets its trainer job's pods at once (as the Trainer makes the JobSet, and
  JobSet the Jobs), unless it is suspended (``Suspended=True``; resuming makes them,
  ``Suspended=False``/``Resumed``). A pod name longer than 63 characters fails the JobSet
  webhook: the TrainJob then stays without status, with a ``TrainJobResourcesCreationFailed``
  Warning.
- All trainer pods succeeded: ``Complete`` (``AllJobsCompleted``). A container that fails is
  restarted in place while the Job's ``backoffLimit`` (default 6) allows; past it the Job fails
  (``BackoffLimitExceeded``), its running pods are deleted and the TrainJob is ``Failed``
  (``FailedJobs``, naming the first failed Job), as JobSet copies it; ``activeDeadlineSeconds``
  running out fails it with ``DeadlineExceeded`` and deletes its pods.
- With the feature gate ``TrainJobStatus`` on (``status``), the trainer pods get the status
  server's URL, CA and token, and the ConfigMap ``<name>-tls-config`` is made
  (``trainer_status.py``).
- Deleting a TrainJob deletes its pods (the garbage collector, through JobSet and the Jobs);
  with Foreground propagation the TrainJob goes once they are gone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tests.harness.cluster.objects import now
from tests.harness.cluster.render import JOBSET, Rendered, api_defaults, render
from tests.harness.cluster.store import random_suffix
from tests.harness.cluster.trainer_status import inject, tls_config_map
from tests.harness.trainer_rules import POD_NAME_MAX

TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"
PODS = "v1/pods"
BACKOFF_LIMIT = 6  # batch/v1 Job's default


@dataclass
class JobRun:
    """One TrainJob's trainer Job, as the controller keeps it."""

    rendered: Rendered
    uid: str
    backoff_limit: int
    failures: int = 0
    failed: bool = False
    pods: list[str] = field(default_factory=list)
    deadline: asyncio.TimerHandle | None = None


class Trainer:
    """``status``: the status server (``trainer_status.py``) when the feature gate
    ``TrainJobStatus`` is on."""

    def __init__(self, api, admission, kubelet, status=None):
        self.api, self.admission, self.kubelet, self.status = api, admission, kubelet, status
        self.jobs: dict[tuple[str, str], JobRun] = {}
        self.queue: asyncio.Queue = asyncio.Queue()
        self.worker = asyncio.get_running_loop().create_task(self._work())
        api.watchers.append(self.heard)
        kubelet.trainer = self

    def heard(self, event: str, resource, obj: dict) -> None:
        meta = obj["metadata"]
        if resource.plural == "trainjobs":
            self.queue.put_nowait((meta.get("namespace"), meta["name"]))
        elif resource.plural == "pods":
            job = (meta.get("labels") or {}).get(JOBSET + "jobset-name")
            if job:
                self.queue.put_nowait((meta.get("namespace"), job))

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self.reconcile(*key)
            except Exception as e:  # the harness must go on; the event says what went wrong
                tj = self.api.get(TRAINJOBS, *key)
                if tj is not None:
                    await self._event(tj, "Warning", "EmulatorError", f"{type(e).__name__}: {e}")

    async def _event(self, involved: dict, kind: str, reason: str, message: str) -> None:
        await self.api.record_event(involved, kind, reason, message, "trainjob-controller")

    def _pods(self, namespace: str, name: str) -> list[dict]:
        return [p for p in self.api.items(PODS, namespace)
                if (p["metadata"].get("labels") or {}).get(JOBSET + "jobset-name") == name]  # fmt: skip

    async def reconcile(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        tj = self.api.get(TRAINJOBS, namespace, name)
        run = self.jobs.get(key)
        if tj is None or tj["metadata"].get("deletionTimestamp"):
            await self._delete_pods(namespace, name)
            if tj is not None and not self._pods(namespace, name):
                await self.api.finalize(TRAINJOBS, namespace, name, "foregroundDeletion")
            if tj is None or not self._pods(namespace, name):
                self._forget(key)
            return
        if _condition(tj, "Complete") or _condition(tj, "Failed"):
            return
        if (tj.get("spec") or {}).get("suspend"):
            if not _condition(tj, "Suspended"):
                await self._set_condition(
                    tj, "Suspended", "True", "Suspended", "TrainJob is suspended"
                )
            await self._delete_pods(namespace, name)
            self._forget(key)
            return
        if _condition(tj, "Suspended"):
            tj = await self._set_condition(
                tj, "Suspended", "False", "Resumed", "TrainJob is resumed"
            )
        if run is None:
            await self._start(tj)
        else:
            await self._account(tj, run)

    async def _start(self, tj: dict) -> None:
        namespace, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
        runtime = self.admission.runtime_of(tj, namespace)
        if runtime is None:
            return
        rendered = render(tj, runtime)
        long = [p["metadata"]["generateName"] + "abcde" for p in rendered.pods]
        long = [p for p in long if len(p) > POD_NAME_MAX]
        if long:
            message = (f'JobSet.jobset.x-k8s.io "{name}" is invalid: spec.replicatedJobs: Invalid '
                       f"value: pod name {long[0]} would be {len(long[0])} characters: must be no "
                       f"more than {POD_NAME_MAX}")  # fmt: skip
            await self._event(tj, "Warning", "TrainJobResourcesCreationFailed", message)
            return
        if self.status is not None:  # the trainjobstatus plugin
            config_map = tls_config_map(tj, self.status.ca_pem)
            if self.api.get("v1/configmaps", namespace, config_map["metadata"]["name"]) is None:
                await self.api.create("v1/configmaps", namespace, config_map)
            for pod in rendered.pods:
                inject(pod, tj, self.status.base)
        job_spec = rendered.replicated_job["template"].get("spec") or {}
        limit = job_spec.get("backoffLimit", BACKOFF_LIMIT)
        run = JobRun(rendered, rendered.uid, limit)
        self.jobs[(namespace, name)] = run
        if rendered.skipped:
            await self._event(tj, "Normal", "NotEmulated", "the emulated cluster runs the trainer "
                              f"job only; not run: {', '.join(rendered.skipped)}")  # fmt: skip
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": rendered.job, "uid": run.uid,
                 "controller": True, "blockOwnerDeletion": True}  # fmt: skip
        job = {"kind": "Job", "apiVersion": "batch/v1", "name": rendered.job, "namespace": namespace,
               "uid": run.uid}  # fmt: skip
        for pod in rendered.pods:
            pod["metadata"]["ownerReferences"] = [owner]
            pod["metadata"]["name"] = pod["metadata"]["generateName"] + random_suffix()
            api_defaults(pod)
            made = await self.api.create(PODS, namespace, pod)
            run.pods.append(made["metadata"]["name"])
            await self._event(
                job, "Normal", "SuccessfulCreate", f"Created pod: {made['metadata']['name']}"
            )
        deadline = (tj.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline:
            loop = asyncio.get_running_loop()
            run.deadline = loop.call_later(
                deadline, lambda: loop.create_task(self._expire(namespace, name))
            )
        await self._account(tj, run)

    async def _account(self, tj: dict, run: JobRun) -> None:
        """jobsStatus from the pods, counting Jobs as JobSet does (one here: the trainer's):
        succeeded once all its pods have, else active while one of its pods is, and ready when
        every pod is running or succeeded; Complete when every trainer pod succeeded."""
        namespace, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
        phases = [(p.get("status") or {}).get("phase") for p in self._pods(namespace, name)]
        done = bool(phases) and phases.count("Succeeded") == len(run.rendered.pods) == len(phases)
        going = not done and not run.failed
        ready = phases.count("Running") + phases.count("Succeeded") >= len(run.rendered.pods)
        status = {"name": run.rendered.replicated_job["name"], "ready": int(going and ready),
                  "succeeded": int(done), "failed": int(run.failed),
                  "active": int(going and any(p in ("Pending", "Running", None) for p in phases)),
                  "suspended": 0}  # fmt: skip
        if (tj.get("status") or {}).get("jobsStatus") != [status]:
            tj.setdefault("status", {})["jobsStatus"] = [status]
            tj = await self.api.put(TRAINJOBS, namespace, tj)
        if done:
            job = {"kind": "Job", "name": run.rendered.job, "namespace": namespace, "uid": run.uid}
            await self._event(job, "Normal", "Completed", "Job completed")
            await self._set_condition(tj, "Complete", "True", "AllJobsCompleted",
                                      "jobset completed successfully")  # fmt: skip
            self._forget((namespace, name), keep_ports=False)

    def may_restart(self, pod: dict) -> bool:
        """A trainer pod's container failed: whether the Job's backoff limit allows another run
        (if not, the Job fails: see ``_fail``)."""
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get(JOBSET + "jobset-name")
        run = self.jobs.get((meta.get("namespace"), job))
        if run is None or run.failed:
            return False
        run.failures += 1
        if run.failures <= run.backoff_limit:
            return True
        run.failed = True
        asyncio.get_running_loop().create_task(self._fail(meta["namespace"], job))
        return False

    def pod_ended(self, pod: dict) -> None:
        """A pod succeeded, or failed for good (restartPolicy Never: the Job replaces it while
        its backoff limit allows)."""
        if (pod.get("status") or {}).get("phase") == "Failed" and self.may_restart(pod):
            asyncio.get_running_loop().create_task(self._replace(pod))

    async def _replace(self, pod: dict) -> None:
        meta = pod["metadata"]
        keep = ("labels", "annotations", "generateName", "ownerReferences")
        new_meta = {k: meta[k] for k in keep if k in meta}
        new_meta["name"] = meta["generateName"] + random_suffix()
        spec = {k: v for k, v in pod["spec"].items() if k != "nodeName"}
        await self.api.create(PODS, meta["namespace"], {"apiVersion": "v1", "kind": "Pod",
                                                        "metadata": new_meta, "spec": spec})  # fmt: skip

    async def _fail(self, namespace: str, name: str) -> None:
        run = self.jobs.get((namespace, name))
        tj = self.api.get(TRAINJOBS, namespace, name)
        if run is None or tj is None or _condition(tj, "Failed"):
            return
        job = {"kind": "Job", "name": run.rendered.job, "namespace": namespace, "uid": run.uid}
        await self._event(job, "Warning", "BackoffLimitExceeded", "Job has reached the specified "
                          "backoff limit")  # fmt: skip
        message = (
            f"jobset failed due to one or more job failures (first failed job: {run.rendered.job})"
        )
        await self._event({"kind": "JobSet", "name": name, "namespace": namespace}, "Warning",
                          "FailedJobs", message)  # fmt: skip
        await self._delete_pods(namespace, name, active_only=True)  # the Job controller's
        await self._account(tj, run)  # the Job failed: jobsStatus says so
        await self._set_condition(tj, "Failed", "True", "FailedJobs", message)
        self._forget((namespace, name), keep_ports=False)

    async def _expire(self, namespace: str, name: str) -> None:
        tj = self.api.get(TRAINJOBS, namespace, name)
        if tj is None or _condition(tj, "Complete") or _condition(tj, "Failed"):
            return
        await self._delete_pods(namespace, name)
        await self._set_condition(tj, "Failed", "True", "DeadlineExceeded",
                                  "TrainJob exceeded its activeDeadlineSeconds")  # fmt: skip
        self._forget((namespace, name))

    async def _delete_pods(self, namespace: str, name: str, active_only: bool = False) -> None:
        for pod in self._pods(namespace, name):
            done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if not (active_only and done):
                await self.api.delete(PODS, namespace, pod["metadata"]["name"])

    def _forget(self, key: tuple[str, str], keep_ports: bool = False) -> None:
        run = self.jobs.pop(key, None)
        if run is not None and run.deadline is not None:
            run.deadline.cancel()
        if not keep_ports and not self._pods(*key):
            self.kubelet.release(*key)

    async def _set_condition(self, tj: dict, kind: str, status: str, reason: str, message: str):
        tj = self.api.get(TRAINJOBS, tj["metadata"]["namespace"], tj["metadata"]["name"]) or tj
        conditions = [
            c for c in (tj.get("status") or {}).get("conditions") or [] if c["type"] != kind
        ]
        conditions.append({"type": kind, "status": status, "reason": reason, "message": message,
                           "lastTransitionTime": now()})  # fmt: skip
        tj.setdefault("status", {})["conditions"] = conditions
        kind_of = "Warning" if kind == "Failed" else "Normal"
        tj = await self.api.put(TRAINJOBS, tj["metadata"]["namespace"], tj)
        await self._event(tj, kind_of, reason, message)
        return tj


def _condition(tj: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (tj.get("status") or {}).get("conditions") or [])  # fmt: skip
