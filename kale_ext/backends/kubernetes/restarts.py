"""A job with restarts (``max_restarts``) on a cluster: the TrainingRuntime of its own that sets
its JobSet's failure policy (job/restarts.py says why a runtime patch cannot), made before its
TrainJob and owned by it once that is made, so the garbage collector takes it with the job."""

from __future__ import annotations

from ...job.restart_runtime import RESTART_ATTEMPT_LABEL, RUNTIME_OF, restart_runtime
from ...job.spec import JobSpec
from ...job.trainjob import MAX_RESTARTS
from .config import GROUP, RUNTIMES, VERSION, Cluster
from .workspace import owner_of

STRICT = {"field_validation": "Strict"}  # unknown fields refused, never pruned


def make(cluster: Cluster, spec: JobSpec, manifest: dict) -> str | None:
    """Create the job's own TrainingRuntime from its runtime's ``manifest``; its name (None: the
    job has no restarts, and runs on its runtime)."""
    if not spec.max_restarts:
        return None
    body = restart_runtime(spec, manifest)
    what = f"create TrainingRuntime {cluster.namespace}/{spec.name} (for its restarts)"
    cluster.trainer_objects(what, "create", RUNTIMES, body, **STRICT)
    return spec.name


def adopt(cluster: Cluster, name: str, trainjob: dict) -> None:
    """Make the TrainJob the owner of its TrainingRuntime ``name``."""
    what = f"make job {name} the owner of TrainingRuntime {cluster.namespace}/{name}"
    patch = {"metadata": {"ownerReferences": [owner_of(trainjob)]}}
    method = cluster.custom.patch_namespaced_custom_object
    cluster.call(what, method, GROUP, VERSION, cluster.namespace, RUNTIMES, name, patch)


def remove(cluster: Cluster, name: str) -> None:
    """Delete the TrainingRuntime made for a job that could not be made."""
    what = f"delete TrainingRuntime {cluster.namespace}/{name}"
    cluster.trainer_objects(what, "delete", RUNTIMES, name)


def a_jobs_own(manifest: dict) -> bool:
    """Whether a runtime is a job's own (listed with the job, not among the runtimes)."""
    return RUNTIME_OF in ((manifest.get("metadata") or {}).get("annotations") or {})


def restart_said(pods, annotations: dict, reason: str | None) -> str | None:
    """``reason`` after the JobSet's restart its pods belong to (`restart 1 of 2`), when the
    job was started again; as it was otherwise."""
    attempts = [(p.metadata.labels or {}).get(RESTART_ATTEMPT_LABEL, "") for p in pods]
    attempt = max((int(a) for a in attempts if a.isdigit()), default=0)
    if not attempt:
        return reason
    note = f"restart {attempt} of {annotations.get(MAX_RESTARTS, '?')}"
    return f"{note}; {reason}" if reason else note
