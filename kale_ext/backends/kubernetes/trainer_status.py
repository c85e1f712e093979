"""A TrainJob's ``status.trainerStatus`` (Kubeflow Trainer's TrainJobStatus feature) as the job's
progress and metrics, whoever wrote it: a kale_ext job (kale_ext/trainer_status.py), the Kubeflow
SDK's ``update_trainjob_status``, a transformers callback, ``curl``.

It is read as untrusted input (the CRD bounds it, but a cluster without them, or an older CRD,
may hold anything): a percent that is not a number from 0 to 100, or no valid
``lastUpdatedTime`` (the CRD requires one), gives no progress, an ETA that
is not a whole number of 0 or more gives none, a metric whose name or value is not a string is
left out, and at most :data:`MAX_METRICS` metrics of :data:`MAX_TEXT` characters are kept.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ...progress import Progress

MAX_METRICS = 256  # the CRD's maxItems
MAX_TEXT = 64  # the CRD's maxLength of a metric's name and value


def _updated(value: object) -> str:
    """lastUpdatedTime as ISO 8601 UTC to the second (``2026-11-27T12:00:00Z``), "" if not one."""
    if not isinstance(value, str):
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def trainer_progress(trainjob: dict) -> Progress | None:
    """The progress the Trainer holds for the job (source ``trainer``: a percent, maybe an ETA,
    no step counts), or None when it holds none."""
    status = (trainjob.get("status") or {}).get("trainerStatus")
    if not isinstance(status, dict):
        return None
    percent = status.get("progressPercentage")
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        return None
    if not 0 <= percent <= 100:
        return None
    updated = _updated(status.get("lastUpdatedTime"))  # the CRD requires it: not the Trainer's
    if not updated:
        return None
    eta = status.get("estimatedRemainingSeconds")
    if isinstance(eta, bool) or not isinstance(eta, int) or eta < 0:
        eta = None
    return Progress(float(percent), None, None, "step", eta, "trainer", updated)


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
