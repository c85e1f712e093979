"""A job with restarts on a cluster: the JobSet's failure policy, through a TrainingRuntime of
the job's own.

Kubeflow Trainer v2.3.0's runtime patches reach only the replicated jobs' pod templates (the
Kubeflow SDK 0.5.0's RuntimePatch alike): a TrainJob whose patch sets the JobSet's
`failurePolicy` is refused ("unknown field ...template.spec.failurePolicy"). A job with restarts
runs on a TrainingRuntime of its own instead: its runtime's, with the failure policy set (the
Kubernetes backend makes it: backends/kubernetes/restarts.py).
"""

from __future__ import annotations

from .restarts import RESTART_ENV

#: The label JobSet (v0.12) gives every Job and pod of a JobSet: its restart attempt.
RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
#: On a job with restarts (its TrainJob and its TrainingRuntime): the runtime it was asked to run
#: on (`ClusterTrainingRuntime/torch-distributed`), which views show as its runtime.
RUNTIME_OF = "kale-ext.io/runtime"


def runtime_ref(spec) -> tuple[str, str]:
    """The (name, kind) of the runtime the TrainJob names: a job with restarts names its own
    TrainingRuntime (:func:`restart_runtime`), named as the job."""
    if spec.max_restarts:
        return spec.name, "TrainingRuntime"
    return spec.runtime.name, spec.runtime.kind


def asked_runtime(annotations: dict) -> str | None:
    """The name of the runtime a job with restarts was asked to run on (its RUNTIME_OF
    annotation; None for another job, whose runtimeRef names it)."""
    value = annotations.get(RUNTIME_OF)
    return value.rpartition("/")[2] or None if isinstance(value, str) else None


def restart_runtime(spec, manifest: dict) -> dict:
    """The TrainingRuntime a job with ``spec.max_restarts`` runs on: its runtime's ``manifest``
    with the JobSet's ``failurePolicy.maxRestarts``, a failed node failing its Job at once
    (``backoffLimit: 0``: the JobSet then starts every node again, not the one container), and
    every node's KALE_EXT_RESTART the JobSet's restart attempt (its label, by the downward API).
    The job owns it once both are made (the Kubernetes backend)."""
    import copy

    from ..errors import ConfigError
    from .mpi import patched_jobs
    from .podpatch import CONTAINER

    body = copy.deepcopy(manifest.get("spec") or {})
    template = body.setdefault("template", {}).setdefault("spec", {})
    policy = template.get("failurePolicy") or {}
    template["failurePolicy"] = {**policy, "maxRestarts": spec.max_restarts}
    env = {"name": RESTART_ENV, "valueFrom": {"fieldRef": {
        "fieldPath": f"metadata.labels['{RESTART_ATTEMPT_LABEL}']"}}}  # fmt: skip
    runs = patched_jobs(spec.runtime)
    found = False
    for job in template.get("replicatedJobs") or []:
        if job.get("name") not in runs:
            continue
        job_spec = job.setdefault("template", {}).setdefault("spec", {})
        job_spec["backoffLimit"] = 0
        pod = job_spec.setdefault("template", {}).setdefault("spec", {})
        for container in pod.get("containers") or []:
            if container.get("name") == CONTAINER:
                kept = [e for e in container.get("env") or [] if e.get("name") != RESTART_ENV]
                container["env"] = [*kept, env]
                found = True
    if not found:
        raise ConfigError(
            "max_restarts",
            f"{spec.runtime.name}'s trainer job {spec.runtime.trainer_job!r} has no container "
            f"named {CONTAINER!r}, so its nodes cannot be told their restart attempt",
        )
    labels = (manifest.get("metadata") or {}).get("labels") or {}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {
            "name": spec.name,
            "labels": dict(labels),
            "annotations": {RUNTIME_OF: f"{spec.runtime.kind}/{spec.runtime.name}"},
        },
        "spec": body,
    }
