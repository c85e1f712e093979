"""A job as an MLflow run, when tracking is on (a tracking URI in the settings, or
``MLFLOW_TRACKING_URI``): the submit creates the run (experiment: the notebook's name; run name:
the job's; params: the job's parameters; tags: notebook and source hashes, backend, runtime,
nodes) and passes its id to the job's nodes, whose ``report()`` sends metrics to it
(kale_ext/tracking_sink.py). The local supervisor ends it when the job ends; on other backends
rank 0 does as it exits.

A server that is down never fails or slows a job: the submit says once that tracking is off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..job.spec import JobSpec
from ..mlflow_api import END_ENV, RUN_ID_ENV, URI_ENV, Tracking, TrackingError

PARENT_TAG = "mlflow.parentRunId"
TAG = "kale_ext."


def tracking_uri(defaults=None) -> str | None:
    """Where runs go: ``MLFLOW_TRACKING_URI``, else the settings' ``mlflow_tracking_uri``;
    None: tracking is off."""
    return os.environ.get(URI_ENV) or getattr(defaults, "mlflow_tracking_uri", None) or None


def experiment_name(spec: JobSpec, notebook_path: str | None = None) -> str:
    """A notebook's runs share an experiment named after it."""
    return Path(notebook_path or spec.job.notebook).stem or spec.job.function_name


def run_tags(spec: JobSpec, backend: str, notebook_path: str | None = None) -> dict[str, str]:
    """What a job's run is tagged with: where it came from and how it ran."""
    job = spec.job
    return {
        TAG + "job": spec.name,
        TAG + "notebook": notebook_path or job.notebook,
        TAG + "notebook_sha256": job.notebook_sha256,
        TAG + "source_sha256": job.source_sha256,
        TAG + "backend": backend,
        TAG + "runtime": spec.runtime.name,
        TAG + "nodes": str(spec.nodes),
        "mlflow.source.name": notebook_path or job.notebook,
    }


@dataclass
class TrackedRun:
    """The run a submit created (None when tracking is off), and what to tell the user."""

    run_id: str | None = None
    uri: str | None = None
    warnings: list[str] = field(default_factory=list)

    def abandon(self) -> None:
        """The job was not submitted after all: end its run as FAILED."""
        if self.run_id and self.uri:
            try:
                Tracking(self.uri).end_run(self.run_id, "FAILED")
            except TrackingError:
                pass


def off(why: TrackingError) -> str:
    return f"MLflow tracking is off for this job: {why}"


def start_run(
    spec: JobSpec,
    backend: str,
    notebook_path: str | None = None,
    defaults=None,
    parent: str | None = None,
) -> TrackedRun:
    """Create the job's run when tracking is on, and give the job's nodes its id (their env).
    ``parent``: the run id of the sweep this job is a trial of."""
    uri = tracking_uri(defaults)
    if not uri:
        return TrackedRun()
    tags = run_tags(spec, backend, notebook_path)
    if parent:
        tags[PARENT_TAG] = parent
    try:
        tracking = Tracking(uri)
        experiment = experiment_name(spec, notebook_path)
        params = {**spec.job.parameters, **spec.func_args}  # the values it runs with
        run_id = tracking.create_run(experiment, spec.name, params, tags)
    except TrackingError as e:
        return TrackedRun(warnings=[off(e)])
    env = {URI_ENV: tracking.uri, RUN_ID_ENV: run_id}
    if backend != "local":  # no supervisor watches it: rank 0 ends the run
        env[END_ENV] = "1"
    add_env(spec, env)
    return TrackedRun(run_id, tracking.uri)


def add_env(spec: JobSpec, env: dict[str, str]) -> None:
    """Variables for every node, unless the job sets them itself."""
    from ..job.k8s_objects import k8s_object

    own = {e.name for e in spec.config.env}
    for name, value in env.items():
        if name not in own:
            spec.config.env.append(k8s_object({"name": name, "value": value}, "V1EnvVar", name))
