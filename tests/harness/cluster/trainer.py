"""The emulated Kubeflow Trainer v2.3 controller, with what JobSet v0.12 and the Job controller
do for it: a TrainJob's pods (``render.py``), its conditions, its events.

- A new TrainJob gets a Job per replicated job (``Step``), each made once the jobs it depends on
  reached the status named (``dependsOn``: ``Ready`` or ``Complete``), unless it is suspended
  (``Suspended=True``: the pods go, the Jobs count as suspended; resuming makes them,
  ``Suspended=False``/``Resumed``). An MPI runtime runs its trainer job only (``NotEmulated``).
  A pod name longer than 63 characters fails the JobSet webhook: the TrainJob then stays
  without status, with a ``TrainJobResourcesCreationFailed`` Warning. The runtime's
  ``volumeClaimPolicies`` claims are made.
- Every Job succeeded: ``Complete`` (``AllJobsCompleted``). A container that fails is
  restarted in place while its Job's ``backoffLimit`` (default 6) allows; past it the Job fails
  (``BackoffLimitExceeded``): while the JobSet's ``failurePolicy.maxRestarts`` allows, every
  pod is deleted and every Job made again (the next restart attempt), else its running pods
  are deleted and the TrainJob is ``Failed`` (``FailedJobs``, or ``ReachedMaxRestarts`` with a
  failure policy, naming the first failed Job), as JobSet copies it; ``activeDeadlineSeconds``
  running out fails it with ``DeadlineExceeded`` and deletes its pods.
- With the feature gate ``TrainJobStatus`` on (``status``), the trainer pods get the status
  server's URL, CA and token, and the ConfigMap ``<name>-tls-config`` is made
  (``trainer_status.py``).
- Deleting a TrainJob deletes its pods (the garbage collector, through JobSet and the Jobs);
  with Foreground propagation the TrainJob goes once they are gone.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field

from tests.harness.cluster.objects import now
from tests.harness.cluster.render import (
    JOBSET,
    Rendered,
    api_defaults,
    claim_volumes,
    jobset_template,
    render_jobs,
)
from tests.harness.cluster.store import random_suffix
from tests.harness.cluster.trainer_status import inject, tls_config_map
from tests.harness.trainer_rules import POD_NAME_MAX

TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"
PODS = "v1/pods"
CLAIMS = "v1/persistentvolumeclaims"
BACKOFF_LIMIT = 6  # batch/v1 Job's default


@dataclass
class Step:
    """One Job of a TrainJob's JobSet (a replicated job), as JobSet and the Job controller keep
    it: made once the jobs it depends on reached the status named (``after``)."""

    rendered: Rendered
    backoff_limit: int
    after: list[tuple[str, str]]  # dependsOn: (replicated job, Ready or Complete)
    started: bool = False
    failures: int = 0
    failed: bool = False

    @property
    def name(self) -> str:
        return self.rendered.replicated_job["name"]


@dataclass
class JobRun:
    """One TrainJob's JobSet, as the controller keeps it."""

    steps: list[Step]
    max_restarts: int = 0  # the JobSet's failurePolicy.maxRestarts
    runtime: dict = field(default_factory=dict)
    uid: str = ""  # the JobSet's
    restarts: int = 0  # its restart attempt
    failed: bool = False
    deadline: asyncio.TimerHandle | None = None

    def step_of(self, pod: dict) -> Step | None:
        """The Job of this attempt the pod is of (None for a previous attempt's pod)."""
        labels = pod["metadata"].get("labels") or {}
        if labels.get(JOBSET + "restart-attempt", "0") != str(self.restarts):
            return None
        job = labels.get(JOBSET + "replicatedjob-name")
        return next((s for s in self.steps if s.name == job), None)


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
            if run is not None:  # JobSet suspends the Jobs it made (their pods go)
                suspended = [{"name": st.name, "ready": 0, "succeeded": 0, "failed": 0,
                              "active": 0, "suspended": int(st.started)} for st in run.steps]  # fmt: skip
                tj = self.api.get(TRAINJOBS, namespace, name) or tj
                if (tj.get("status") or {}).get("jobsStatus") != suspended:
                    tj.setdefault("status", {})["jobsStatus"] = suspended
                    await self.api.put(TRAINJOBS, namespace, tj)
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
        jobs = render_jobs(tj, runtime)
        long = [p["metadata"]["generateName"] + "abcde" for r in jobs for p in r.pods]
        long = [p for p in long if len(p) > POD_NAME_MAX]
        if long:
            message = (f'JobSet.jobset.x-k8s.io "{name}" is invalid: spec.replicatedJobs: Invalid '
                       f"value: pod name {long[0]} would be {len(long[0])} characters: must be no "
                       f"more than {POD_NAME_MAX}")  # fmt: skip
            await self._event(tj, "Warning", "TrainJobResourcesCreationFailed", message)
            return
        template = jobset_template(tj, runtime)["spec"]
        policy = template.get("failurePolicy") or {}
        run = JobRun([], max_restarts=int(policy.get("maxRestarts") or 0), runtime=runtime)
        run.uid = jobs[0].pods[0]["metadata"]["labels"][JOBSET + "jobset-uid"]
        self.jobs[(namespace, name)] = run
        skipped = await self._steps(tj, run, jobs)
        if skipped:
            await self._event(tj, "Normal", "NotEmulated", "the emulated cluster runs an MPI "
                              f"runtime's trainer job only; not run: {', '.join(skipped)}")  # fmt: skip
        deadline = (tj.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline:
            loop = asyncio.get_running_loop()
            run.deadline = loop.call_later(
                deadline, lambda: loop.create_task(self._expire(namespace, name))
            )
        await self._account(tj, run)

    async def _steps(self, tj: dict, run: JobRun, jobs: list[Rendered]) -> list[str]:
        """The run's Jobs (``run.steps``) from the rendered replicated jobs: the trainer's pods
        with the status server's variables, claims made and mounted; the replicated jobs
        skipped (an MPI runtime's other jobs: the MPI plugin is not emulated)."""
        namespace, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
        skipped = []
        if "mpi" in (run.runtime["spec"].get("mlPolicy") or {}):
            skipped = [r.replicated_job["name"] for r in jobs if not r.trainer]
            jobs = [r for r in jobs if r.trainer]
        if self.status is not None:  # the trainjobstatus plugin: the trainer's pods
            config_map = tls_config_map(tj, self.status.ca_pem)
            if self.api.get("v1/configmaps", namespace, config_map["metadata"]["name"]) is None:
                await self.api.create("v1/configmaps", namespace, config_map)
            for pod in (p for r in jobs if r.trainer for p in r.pods):
                inject(pod, tj, self.status.base)
        policies = jobset_template(tj, run.runtime)["spec"].get("volumeClaimPolicies") or []
        for pod in (p for r in jobs for p in r.pods):
            claim_volumes(pod["spec"], policies, name)
        await self._claims(namespace, name, policies)
        run.steps = []
        for rendered in jobs:
            job_spec = rendered.replicated_job["template"].get("spec") or {}
            after = [(d["name"], d["status"]) for d in rendered.replicated_job.get("dependsOn")
                     or [] if not skipped]  # fmt: skip
            run.steps.append(Step(rendered, job_spec.get("backoffLimit", BACKOFF_LIMIT), after))
        return skipped

    async def _claims(self, namespace: str, name: str, policies: list[dict]) -> None:
        """JobSet's ``volumeClaimPolicies``: a claim ``<template>-<jobset>`` per template."""
        for policy in policies:
            for template in policy.get("templates") or []:
                meta = template.get("metadata") or {}
                claim = f"{meta.get('name')}-{name}"
                if self.api.get(CLAIMS, namespace, claim) is not None:
                    continue
                labels = {**(meta.get("labels") or {}), JOBSET + "jobset-name": name}
                body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": claim, "namespace": namespace, "labels": labels,
                                     **({"annotations": meta["annotations"]}
                                        if meta.get("annotations") else {})},
                        "spec": copy.deepcopy(template.get("spec") or {})}  # fmt: skip
                await self.api.create(CLAIMS, namespace, body)

    async def _make(self, namespace: str, step: Step) -> None:
        """The Job controller: the step's Job's pods."""
        step.started = True
        rendered = step.rendered
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": rendered.job,
                 "uid": rendered.uid, "controller": True, "blockOwnerDeletion": True}  # fmt: skip
        job = {"kind": "Job", "apiVersion": "batch/v1", "name": rendered.job,
               "namespace": namespace, "uid": rendered.uid}  # fmt: skip
        for pod in rendered.pods:
            pod["metadata"]["ownerReferences"] = [owner]
            pod["metadata"]["name"] = pod["metadata"]["generateName"] + random_suffix()
            api_defaults(pod)
            made = await self.api.create(PODS, namespace, pod)
            await self._event(
                job, "Normal", "SuccessfulCreate", f"Created pod: {made['metadata']['name']}"
            )

    async def _account(self, tj: dict, run: JobRun) -> None:
        """jobsStatus from the pods, a Job per replicated job, counted as JobSet does: succeeded
        once all its pods have, else active while one of its pods is, and ready when every pod
        is running or succeeded; a Job not made yet counts nothing. Then the Jobs whose
        dependencies reached their status are made (JobSet's ``dependencyReachedStatus``:
        ``Complete`` when the Job succeeded, ``Ready`` when it is ready, failed or succeeded);
        Complete when every Job succeeded."""
        namespace, name = tj["metadata"]["namespace"], tj["metadata"]["name"]
        pods = self._pods(namespace, name)
        statuses = {}
        for step in run.steps:
            phases = [(p.get("status") or {}).get("phase") for p in pods
                      if run.step_of(p) is step]  # fmt: skip
            count = len(step.rendered.pods)
            done = step.started and phases.count("Succeeded") == count == len(phases)
            going = step.started and not done and not step.failed
            ready = phases.count("Running") + phases.count("Succeeded") >= count
            statuses[step.name] = {
                "name": step.name, "ready": int(going and ready), "succeeded": int(done),
                "failed": int(step.failed),
                "active": int(going and any(p in ("Pending", "Running", None) for p in phases)),
                "suspended": 0,
            }  # fmt: skip
        wanted = list(statuses.values())
        if (tj.get("status") or {}).get("jobsStatus") != wanted:
            tj.setdefault("status", {})["jobsStatus"] = wanted
            tj = await self.api.put(TRAINJOBS, namespace, tj)
        if not run.failed:
            for step in run.steps:
                if not step.started and all(_reached(statuses.get(n), s) for n, s in step.after):
                    await self._make(namespace, step)
        if all(s["succeeded"] for s in wanted):
            for step in run.steps:
                job = {"kind": "Job", "name": step.rendered.job, "namespace": namespace,
                       "uid": step.rendered.uid}  # fmt: skip
                await self._event(job, "Normal", "Completed", "Job completed")
            await self._set_condition(tj, "Complete", "True", "AllJobsCompleted",
                                      "jobset completed successfully")  # fmt: skip
            self._forget((namespace, name), keep_ports=False)

    def may_restart(self, pod: dict) -> bool:
        """A pod's container failed: whether its Job's backoff limit allows another run (if
        not, the Job fails, and the JobSet with it: see ``_fail``)."""
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get(JOBSET + "jobset-name")
        run = self.jobs.get((meta.get("namespace"), job))
        step = run.step_of(pod) if run is not None else None
        if run is None or step is None or run.failed:
            return False
        step.failures += 1
        if step.failures <= step.backoff_limit:
            return True
        step.failed = run.failed = True
        asyncio.get_running_loop().create_task(self._fail(meta["namespace"], job, step))
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

    async def _fail(self, namespace: str, name: str, step: Step) -> None:
        """A Job failed (its backoff limit): the Job controller deletes its running pods; the
        JobSet's failure policy starts every Job again while ``maxRestarts`` allows (restart
        attempt + 1, every pod of the attempt deleted), else the JobSet fails, and the
        TrainJob with it (FailedJobs; ReachedMaxRestarts with a failure policy)."""
        run = self.jobs.get((namespace, name))
        tj = self.api.get(TRAINJOBS, namespace, name)
        if run is None or tj is None or _condition(tj, "Failed"):
            return
        job = {"kind": "Job", "name": step.rendered.job, "namespace": namespace,
               "uid": step.rendered.uid}  # fmt: skip
        await self._event(job, "Warning", "BackoffLimitExceeded", "Job has reached the specified "
                          "backoff limit")  # fmt: skip
        first = f"(first failed job: {step.rendered.job})"
        jobset = {"kind": "JobSet", "name": name, "namespace": namespace}
        if run.restarts < run.max_restarts:
            run.restarts += 1
            message = f"applying RestartJobSet failure policy action {first}"
            await self._event(jobset, "Warning", "RestartJobSetFailurePolicyAction", message)
            await self._delete_pods(namespace, name)  # the previous attempt's Jobs
            jobs = render_jobs(tj, run.runtime, run.uid, attempt=run.restarts)
            await self._steps(tj, run, jobs)
            run.failed = False
            await self._account(tj, run)
            return
        if run.max_restarts:
            reason, message = (
                "ReachedMaxRestarts",
                "jobset failed due to reaching max number of restarts ",
            )
        else:
            reason, message = "FailedJobs", "jobset failed due to one or more job failures "
        message += first
        await self._event(jobset, "Warning", reason, message)
        await self._delete_pods(namespace, name, active_only=True)  # the Job controller's
        await self._account(tj, run)  # the Job failed: jobsStatus says so
        await self._set_condition(tj, "Failed", "True", reason, message)
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


def _reached(status: dict | None, wanted: str) -> bool:
    """JobSet's ``dependencyReachedStatus`` for one Job (one replica)."""
    if status is None:
        return False
    if wanted == "Complete":
        return status["succeeded"] == 1
    return status["ready"] + status["failed"] + status["succeeded"] == 1
