"""Rerun a job: the notebook it ran (its snapshot, kept at submit) and its options, under a new
name, with only the overrides given: a new name, parameter values; in a lineage of its own
(resume.py runs a job again in its parent's). Never what a panel or a
notebook on disk holds now, nor today's defaults where they shape the job (runtime, image,
nodes, resources: the job's record keeps those it ran with)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..backends.base import SWEEP_LABEL, Backend, JobInfo
from ..backends.snapshots import load
from ..backends.submit import Submission, submit
from ..compile.notebook import Notebook, parse_notebook
from ..errors import ConfigError
from ..job.trainjob import ANNOTATION
from ..job.workspace import Place


def overrides(items: list[str]) -> dict[str, str] | None:
    """``--param NAME=VALUE`` items as {name: text} (the notebook types them); None for none."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ConfigError("param", f"{item!r}: expects NAME=VALUE, e.g. epochs=4")
        out[key.strip()] = value
    return out or None


#: The options that tie a job to another's checkpoints: a rerun starts its own lineage (a
#: resume, runs/resume.py, sets them anew).
LINEAGE_OPTIONS = ("lineage", "parent", "resume_step")


def _options(recorded: dict, name: str | None, parameters: dict | None,
             changes: dict | None = None) -> dict:  # fmt: skip
    options = {k: v for k, v in recorded.items() if k not in LINEAGE_OPTIONS}
    config = options.get("config")
    if isinstance(config, dict) and SWEEP_LABEL in (config.get("labels") or {}):
        labels = {k: v for k, v in config["labels"].items() if k != SWEEP_LABEL}
        options["config"] = {**config, "labels": labels}  # a rerun is no trial of the sweep
    if parameters:
        options["parameters"] = {**(options.get("parameters") or {}), **parameters}
    if name is not None:
        options["name"] = name
    return {**options, **(changes or {})}


def _unnamed(notebook: Notebook) -> Notebook:
    """``notebook`` without the job name its metadata keeps (``kale_ext.options.name``: the
    panel's form, saved with the name of the job it submitted): a rerun takes only its own
    name, else a new one, whichever front end submitted the job."""
    meta = notebook.metadata.get("kale_ext")
    stored = meta.get("options") if isinstance(meta, dict) else None
    if not isinstance(stored, dict) or "name" not in stored:
        return notebook
    options = {k: v for k, v in stored.items() if k != "name"}
    return replace(
        notebook, metadata={**notebook.metadata, "kale_ext": {**meta, "options": options}}
    )


def rerun(backend: Backend, name: str, new_name: str | None = None,
          parameters: dict | None = None, defaults=None, root: str | None = None,
          changes: dict | None = None, info: JobInfo | None = None) -> Submission:  # fmt: skip
    """Submit job ``name`` again as recorded, named ``new_name`` (else a new name), with
    ``parameters`` over its own, in a lineage of its own (a resume's ``changes`` are options
    laid over the recorded ones; ``info``: the job's, when read already). NotFound for an
    unknown job; a 409 when no snapshot of it was kept here, or when what was kept does not
    match what was recorded (snapshots.load; the folders it reads must lie under ``root``, the
    server's, when given); a ConfigError naming the field for an override the notebook
    refuses."""
    if parameters is not None and not isinstance(parameters, dict):
        raise ConfigError("parameters", f"must be an object of name: value, not {parameters!r}")
    info = info if info is not None else backend.get_job(name)
    confine = Path(root) if root is not None else None
    kept = load(backend, name, info.provenance.get(ANNOTATION + "notebook-sha256"), confine)
    place = Place(Path(kept.folder), confine=confine) if kept.folder else Place(confine=confine)
    options = _options(kept.options, new_name, parameters, changes)
    file_name = Path(kept.notebook_path).name if kept.notebook_path else "notebook.ipynb"
    notebook = _unnamed(parse_notebook(kept.notebook, file_name))  # its file named as it was
    if kept.defaults is not None:  # the defaults it ran with, not today's
        from ..job.defaults import Defaults

        defaults = (defaults or Defaults()).with_recorded(kept.defaults)
    return submit(backend, notebook, options, defaults, kept.notebook_path, place,
                  snapshot=kept.notebook)  # fmt: skip
