"""A TrainJob's ``status.trainerStatus`` (Kubeflow Trainer's TrainJobStatus feature) as the job's
progress and metrics, whoever wrote it: a kale_ext job (kale_ext/trainer_status.py), the Kubeflow
SDK's ``update_trainjob_status``, a transformers callback, ``curl``.

It is read as untrusted input (the CRD bounds it, but a cluster without them, or an older CRD,
may hold anything): the progress is ``kale_ext.progress.of_trainer_status``'s (no progress
without a percent from 0 to 100); a metric whose name or value is not a string is left out, and
at most :data:`MAX_METRICS` metrics of :data:`MAX_TEXT` characters are kept.
"""

from __future__ import annotations

from ...lineage import Checkpoint
from ...lineage import of_trainer_status as checkpoint_of
from ...progress import Progress, of_trainer_status

MAX_METRICS = 256  # the CRD's maxItems
MAX_TEXT = 64  # the CRD's maxLength of a metric's name and value


def trainer_progress(trainjob: dict) -> Progress | None:
    """The progress the Trainer holds for the job (source ``trainer``), or None."""
    return of_trainer_status((trainjob.get("status") or {}).get("trainerStatus"))


def trainer_metrics(trainjob: dict) -> dict[str, str] | None:
    """The metrics the Trainer holds for the job, name → value as written (a string), or None."""
    status = (trainjob.get("status") or {}).get("trainerStatus")
    metrics = status.get("metrics") if isinstance(status, dict) else None
    if not isinstance(metrics, list):
        return None
    out: dict[str, str] = {}
    for metric in metrics[:MAX_METRICS]:
        if not isinstance(metric, dict):
            continue
        name, value = metric.get("name"), metric.get("value")
        if isinstance(name, str) and isinstance(value, str) and name:
            out[name[:MAX_TEXT]] = value[:MAX_TEXT]
    return out or None


def trainer_checkpoint(trainjob: dict) -> Checkpoint | None:
    """The job's last checkpoint (its ``checkpoint_step`` metric), as of the status's
    ``lastUpdatedTime``; None when it reported none."""
    status = (trainjob.get("status") or {}).get("trainerStatus")
    updated = status.get("lastUpdatedTime") if isinstance(status, dict) else None
    return checkpoint_of(trainer_metrics(trainjob), updated)
