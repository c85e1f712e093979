"""Experiment tracking for many runs: a sweep is an MLflow parent run, its trials its children.

    parent = start_parent("lr-sweep", "train.ipynb", {"lr": "1e-4,1e-3"}, defaults)
    for params in trials:
        submit(backend, "train.ipynb", {"parameters": params}, defaults,
               parent_run=parent.run_id)          # each trial: a run, child of the parent
    end_parent(parent, "FINISHED")                # or FAILED / KILLED

With tracking off (no tracking URI), ``start_parent`` returns a run with ``run_id`` None, and
``parent_run=None`` makes plain jobs. A single job's run is made by the submit itself
(kale_ext/backends/tracking.py).
"""

from __future__ import annotations

from pathlib import Path

from ..backends.tracking import TAG, TrackedRun, off, tracking_uri
from ..mlflow_api import Tracking, TrackingError

__all__ = ["TrackedRun", "end_parent", "start_parent"]


def start_parent(
    sweep: str, notebook_path: str, params: dict | None = None, defaults=None
) -> TrackedRun:
    """The sweep's parent run, in the notebook's experiment (the trials' one), named after the
    sweep; ``params``: what the sweep searches (e.g. each parameter's values or range). Its
    warnings say when tracking is off because the server cannot be reached."""
    uri = tracking_uri(defaults)
    if not uri:
        return TrackedRun()
    tags = {TAG + "sweep": sweep, TAG + "notebook": notebook_path}
    try:
        tracking = Tracking(uri)
        run_id = tracking.create_run(Path(notebook_path).stem, sweep, params, tags)
    except TrackingError as e:
        return TrackedRun(warnings=[off(e).replace("this job", "this sweep")])
    return TrackedRun(run_id, tracking.uri)


def end_parent(parent: TrackedRun, status: str = "FINISHED") -> str | None:
    """End the sweep's run: FINISHED, FAILED or KILLED. Returns a warning, or None."""
    if not parent.run_id or not parent.uri:
        return None
    try:
        Tracking(parent.uri).end_run(parent.run_id, status)
    except TrackingError as e:
        return str(e)
    return None
