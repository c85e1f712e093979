"""Kubernetes backend: jobs as Kubeflow Trainer v2.3.0 TrainJobs on a cluster.

Which library does what, and why:

- The TrainJob body is :func:`kale_ext.job.trainjob.trainjob_dict`, built from the Kubeflow SDK's
  own models (``kubeflow_trainer_api``). The SDK's ``train()`` cannot express requests ≠ limits,
  ``numProcPerNode``, ``suspend``, env ``valueFrom`` or our byte-exact command, and it posts
  without ``fieldValidation=Strict``, so the server would prune unknown fields silently.
- Every call goes through the kubernetes client directly rather than through ``TrainerClient``.
  The SDK 0.5.0's KubernetesBackend does the following, each of which is wrong for us:

  * it hides the API server's message behind ``RuntimeError("Failed to ...")`` and lets a
    ``ConfigException`` escape when there is no kubeconfig;
  * it loads the kubeconfig into the process-wide default configuration, takes the namespace
    from the default kubeconfig even when given another ``config_file``, and reads a ConfigMap
    in ``kubeflow-system`` at start-up (a 403 warning in multi-tenant clusters);
  * it tolerates only a 404 on the namespaced runtime list (not a 403), and its Runtime type
    lacks the replicated job names that the job-name length check needs;
  * it never reports Running for a Kueue-resumed job (sdk#803), has no Queued state, and looks
    up the runtime once per job (N+1 calls in ``list_jobs``);
  * it returns no logs for a Pending pod (sdk#182), one node per call, with no tail and no resume;
  * it misses the events of the Jobs (named ``<job>-node-0``).

  The SDK's constants (group, plurals, labels) are mirrored in ``config``; a test checks them.

The package's modules: ``config`` (kubeconfig, namespace, API errors), ``status`` (states and
reasons from a TrainJob and its pods), ``kueue`` (what a queued job's Kueue Workload says, the
namespace's LocalQueues), ``logs`` (pod logs), ``stop`` (stopping a job, one that Kueue queues
too) and this one (the Backend verbs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

from ...job.checkpoints import check_cluster, cluster_warnings
from ...job.definition import queue_of
from ...job.embed import check_embeddable
from ...job.runtimes import FRAMEWORK_LABEL, Runtime
from ...job.spec import JobSpec
from ...job.trainjob import OUTPUTS, source_of, trainjob_dict
from ..base import (
    Backend,
    BackendError,
    Event,
    JobInfo,
    JobOutputs,
    LogLine,
    LogQuery,
    NotFound,
    Queue,
    Status,
    Submitted,
    not_finished,
)
from ..snapshots import forget
from ..torchrun_report import fold_by_node
from . import kept as kept_failure
from . import restarts, workspace
from .config import (
    BACKEND,
    CLEAN_POD_POLICY,
    CLUSTER_RUNTIMES,
    JOBSET_LABEL,
    RUNTIMES,
    TRAINJOBS,
    TTL,
    Cluster,
)
from .diagnose import closer_look
from .kueue import queue_warnings, queues_or_why, states_of
from .logs import job_logs
from .room import check_room
from .status import (
    TRAINING_PODS,
    belongs_to,
    iso,
    job_info,
    parse_time,
    recall,
    said,
    training_pods,
)
from .stop import stop as stop_trainjob

log = logging.getLogger(__name__)


class KubernetesBackend(Cluster, Backend):
    """TrainJobs on a Kubernetes cluster with Kubeflow Trainer v2.3.0 (see ``Cluster`` for the
    kubeconfig and the namespace).

    Run policy: TrainJob v2.3.0 has no TTL and no clean-pod policy, so whenever ``get_job`` or
    ``list_jobs`` sees a finished job it applies the job's ``kale-ext.io/`` annotations itself:
    ``ttl-seconds-after-finished`` deletes the TrainJob once that many seconds have passed since
    it finished (that call still reports the final state, once), and ``clean-pod-policy: All``
    deletes its remaining pods (logs go with them) while the TrainJob stays listed.
    """

    name = BACKEND

    def __init__(
        self,
        namespace: str | None = None,
        config_file: str | None = None,
        context: str | None = None,
        poll_interval: float = 2.0,
    ):
        super().__init__(namespace, config_file, context)
        self.poll_interval = poll_interval

    # -- runtimes --

    def runtime_packages(self, name: str) -> dict[str, str] | None:
        """The packages of a runtime's image, once probed (`kale-ext runtimes --packages`)."""
        from ..runtime_packages import cached

        return cached(self, name)

    def list_runtimes(self) -> list[Runtime]:
        """ClusterTrainingRuntimes and the namespace's TrainingRuntimes (which win on a clash);
        runtimes without the framework label are skipped, as the Kubeflow SDK does."""
        listed = self.trainer_objects("list ClusterTrainingRuntimes", "list", CLUSTER_RUNTIMES)
        found = {m["metadata"]["name"]: m for m in listed["items"]}
        try:
            what = f"list TrainingRuntimes in {self.namespace}"
            namespaced = self.trainer_objects(what, "list", RUNTIMES)["items"]
        except BackendError as e:
            if e.status not in (403, 404):
                raise
            log.debug("namespaced runtimes skipped: %s", e)
            namespaced = []
        found.update({m["metadata"]["name"]: m for m in namespaced})
        out = []
        for name in sorted(found):
            if restarts.a_jobs_own(found[name]):
                continue  # a job's own, for its restarts (restarts.py): not one to choose
            if FRAMEWORK_LABEL in (found[name]["metadata"].get("labels") or {}):
                out.append(Runtime.from_manifest(found[name]))
            else:
                log.warning("runtime %s has no %s label: skipped", name, FRAMEWORK_LABEL)
        return out

    def get_runtime(self, name: str) -> Runtime:
        """The namespace's TrainingRuntime of that name, else the ClusterTrainingRuntime."""
        manifest = self._runtime_manifest("TrainingRuntime", name) or self._runtime_manifest(
            "ClusterTrainingRuntime", name
        )
        if manifest is None:
            raise self._missing_runtime(name)
        if FRAMEWORK_LABEL not in (manifest["metadata"].get("labels") or {}):
            raise BackendError(
                f"runtime {name} has no {FRAMEWORK_LABEL} label, so kale_ext cannot tell how to "
                "launch it",
                422,
                "Invalid",
            )
        return Runtime.from_manifest(manifest)

    def _runtime_manifest(self, kind: str, name: str) -> dict | None:
        """The runtime object of that kind and name; None when it is missing (or, namespaced,
        forbidden)."""
        plural = RUNTIMES if kind == "TrainingRuntime" else CLUSTER_RUNTIMES
        try:
            return self.trainer_objects(f"get {kind} {name}", "get", plural, name)
        except BackendError as e:
            if e.status == 404 or (kind == "TrainingRuntime" and e.status == 403):
                return None
            raise

    def _missing_runtime(self, name: str) -> NotFound:
        try:
            known = ", ".join(r.name for r in self.list_runtimes()) or "none"
        except BackendError:
            known = "unknown"
        return NotFound(
            f"runtime {name!r} not found in the cluster or namespace {self.namespace} "
            f"(available: {known})"
        )

    # -- queues --

    def list_queues(self) -> tuple[list[Queue], str | None]:
        """The namespace's Kueue LocalQueues, or why none (kueue.queues_or_why)."""
        return queues_or_why(self)

    # -- submit --

    def submit(self, spec: JobSpec, notebook_path: str | None = None) -> Submitted:
        """Check what the SDK does not (the runtime exists, one node has room), then create the
        TrainJob with strict field validation. Checks that cannot run become warnings."""
        manifest = self._runtime_manifest(spec.runtime.kind, spec.runtime.name)
        if manifest is None:
            raise self._missing_runtime(spec.runtime.name)
        check_cluster(spec)  # a claim, not a folder of this machine
        warnings = self._check_room(spec)
        if queue := queue_of(spec.config):
            warnings += queue_warnings(self, queue)  # no Kueue, no such LocalQueue
        body = trainjob_dict(spec, notebook_path, self._env_from_keys)
        check_embeddable(spec, body["spec"]["trainer"]["command"])  # before anything is made
        warnings += cluster_warnings(spec)  # checkpoints that go with the pods
        what = f"create TrainJob {self.namespace}/{spec.name}"
        packed = spec.workspace.packed() if spec.workspace is not None else None
        made = workspace.upload(self, packed) if packed is not None else []  # see workspace.py
        own_runtime = None
        try:
            own_runtime = restarts.make(self, spec, manifest)  # a job with restarts: its own
            # Strict: the server rejects unknown fields instead of pruning them silently
            strict = {"field_validation": "Strict"}
            created = self.trainer_objects(what, "create", TRAINJOBS, body, **strict)
            try:
                if packed is not None:
                    workspace.adopt(self, packed, created)
                if own_runtime is not None:
                    restarts.adopt(self, own_runtime, created)
            except BackendError:
                self._tidy(self._delete_trainjob, f"delete TrainJob {spec.name}", spec.name)
                raise
        except BackendError:
            workspace.remove(self, made)
            if own_runtime is not None:
                self._tidy(restarts.remove, self, own_runtime)
            raise
        return Submitted(spec.name, tuple(warnings))  # each front end shows them, once

    def _check_room(self, spec: JobSpec) -> list[str]:
        """Raise when no node could ever hold one training node; warnings when unsure."""
        return check_room(self, spec)

    def _env_from_keys(self, kind: str, name: str) -> list[str]:
        """The keys of a Secret or ConfigMap (KeyError when it does not exist); never values."""
        secret = kind == "Secret"
        read = self.core.read_namespaced_secret if secret else self.core.read_namespaced_config_map
        try:
            obj = self.call(f"read {kind} {self.namespace}/{name}", read, name, self.namespace)
        except NotFound:
            raise KeyError(name) from None
        keys = list(obj.data or {})
        if not secret:
            keys += list(obj.binary_data or {})
        return keys

    # -- jobs --

    def _delete_trainjob(self, what: str, name: str) -> None:
        """Foreground: the TrainJob goes once its JobSet and pods are gone, so a new job of the
        same name cannot start while the old pods still run."""
        self.trainer_objects(what, "delete", TRAINJOBS, name, propagation_policy="Foreground")

    def get_job(self, name: str) -> JobInfo:
        obj = self.trainjob(name)
        pods = self.pods(training_pods(name))
        info = closer_look(self, obj, pods)  # events, the failing rank's lines, a stall
        self._apply_run_policy(obj, info)
        return info

    def list_jobs(self) -> list[JobInfo]:
        """Every TrainJob in the namespace, newest first: two calls, however many jobs (three
        when a failed job's pods are gone: its kept failure; two to six more while a job waits
        in a Kueue queue: kueue.states_of)."""
        what = f"list TrainJobs in {self.namespace}"
        items = self.trainer_objects(what, "list", TRAINJOBS)["items"]
        pods_of: dict[str, list] = {}
        for pod in self.pods(TRAINING_PODS):
            pods_of.setdefault((pod.metadata.labels or {}).get(JOBSET_LABEL), []).append(pod)
        waits = states_of(self, items, pods_of)  # a queued job's Kueue state (kueue.py)
        infos = [job_info(obj, pods_of.get(obj["metadata"]["name"], []),
                          kueue=waits.get(obj["metadata"]["name"]))
                 for obj in items]  # fmt: skip
        if any(i.status is Status.FAILED and not pods_of.get(i.name) for i in infos):
            kept = kept_failure.listed(self)  # one more call: the failures kept (kept.py)
            infos = [recall(i, kept.get(i.name), pods_of.get(i.name, [])) for i in infos]
        for obj, info in zip(items, infos, strict=True):
            self._apply_run_policy(obj, info)
        return sorted(infos, key=lambda i: i.created or "", reverse=True)

    def _apply_run_policy(self, obj: dict, info: JobInfo) -> None:
        """ttl-seconds-after-finished and clean-pod-policy All (see the class docstring)."""
        if info.finished is None or obj["metadata"].get("deletionTimestamp"):
            return
        notes = obj["metadata"].get("annotations") or {}
        age = (datetime.now(timezone.utc) - parse_time(info.finished)).total_seconds()
        ttl = notes.get(TTL)
        if ttl is not None and ttl.isdigit() and age >= int(ttl):
            what = f"delete TrainJob {self.namespace}/{info.name} after its TTL"
            self._tidy(self._delete_trainjob, what, info.name)
            ended = f"deleted {ttl} s after it finished (ttl_seconds_after_finished)"
            info.reason = f"{info.reason}; {ended}" if info.reason else ended
        elif notes.get(CLEAN_POD_POLICY) == "All" and info.nodes:
            self._tidy(
                self.call,
                f"delete the pods of job {info.name} (clean_pod_policy All)",
                self.core.delete_collection_namespaced_pod,
                self.namespace,
                label_selector=f"{JOBSET_LABEL}={info.name}",
            )

    @staticmethod
    def _tidy(call: Callable, *args, **kwargs) -> None:
        """A clean-up that must not fail the look at the job: failures are logged."""
        try:
            call(*args, **kwargs)
        except NotFound:
            pass
        except BackendError as e:
            log.warning("%s", e)

    # -- events --

    def events(self, name: str) -> list[Event]:
        """Events of the TrainJob, its JobSet, Jobs, pods and Kueue Workload, oldest first."""
        self.trainjob(name)
        return self._events(name)

    def _events(self, name: str) -> list[Event]:
        belongs = belongs_to(name)
        out = []
        for e in self.call(
            f"list the events in {self.namespace}", self.core.list_namespaced_event, self.namespace
        ).items:
            thing = e.involved_object
            if not belongs(thing.kind, thing.name):
                continue
            moment = e.last_timestamp or e.event_time or e.first_timestamp
            out.append(
                Event(
                    time=iso(moment or e.metadata.creation_timestamp),
                    type=e.type or "Normal",
                    reason=e.reason or "",
                    message=e.message or "",
                    object=f"{thing.kind}/{thing.name}",
                )
            )
        return sorted(out, key=lambda e: e.time or "")

    def _latest_warning(self, name: str) -> str | None:
        try:
            warnings = [e for e in self._events(name) if e.type == "Warning"]
        except BackendError:
            return None
        return said(warnings[-1].reason, warnings[-1].message) if warnings else None

    # -- delete --

    def delete(self, name: str, outputs: bool = False) -> str | None:
        """Delete the TrainJob, its JobSet and pods (see ``_delete_trainjob``); the files on
        its outputs volume stay (kale_ext never deletes a volume's files)."""
        try:
            kept = self.outputs(name)
            self._delete_trainjob(f"delete TrainJob {self.namespace}/{name}", name)
            forget(self, name)  # its notebook snapshot, kept for a rerun
        except NotFound as e:
            raise NotFound(
                f"job {name} does not exist in namespace {self.namespace}: it was already "
                f"deleted, or never created ({e})"
            ) from None
        if not kept.location:
            return None
        if outputs:
            return f"its outputs stay in {kept.location}: delete them from a pod that mounts it"
        return f"kept its outputs in {kept.location}"

    def prune_job(self, name: str, outputs: bool = False) -> str | None:
        """Delete the TrainJob if its conditions (or a stop's note) still say it finished: one
        read, not the closer look of ``get_job``; a 409 for one that runs or waits."""
        info = job_info(self.trainjob(name), [])
        if not info.status.finished:
            raise not_finished(name, info.status_text)
        return self.delete(name, outputs)

    def stop(self, name: str, reason: str) -> None:
        """Suspend the TrainJob and keep it, saying ``reason``; a job in a Kueue queue has its
        Workload deactivated first, or the stop is refused (``stop.py``)."""
        stop_trainjob(self, name, reason)

    def job_source(self, name: str) -> str | None:
        return source_of(self.trainjob(name).get("spec", {}).get("trainer", {}).get("command", []))

    def outputs(self, name: str) -> JobOutputs:
        """Where the job's outputs last: the volume it names (its files are not listed: only
        a pod that mounts the claim can read them)."""
        notes = self.trainjob(name)["metadata"].get("annotations") or {}
        location = notes.get(OUTPUTS)
        if location is None:
            why = "no outputs volume: what it wrote to KALE_EXT_OUTPUT_DIR went with its pods"
            return JobOutputs("", [], f"{why} (name one with --outputs pvc:NAME)")
        how = "on a PersistentVolumeClaim: mount it in a pod (or a notebook server) to read them"
        return JobOutputs(location, [], how, listed=False)

    # -- logs --

    def read_logs(self, name: str, query: LogQuery) -> Iterator[LogLine]:
        """Lines of the ``node`` container of one node, or of all (one after another, or as
        they come with ``follow``, which waits for pending pods and ends with the job).

        ``LogLine.offset`` counts the lines of the node's container log up to that line;
        ``offsets`` resumes after them, so no line comes twice. A restarted container (or a
        replaced pod) starts a new log, counted from 1 again. ``tail`` keeps the last lines of
        each node: the log streams through a window of that size, so memory stays bounded and
        offsets stay exact (the kubelet's own tail cannot tell where its lines are).
        """
        lines = job_logs(self, self.poll_interval, name, query)
        return fold_by_node(lines)  # torchrun's report of a failed rank: one line
