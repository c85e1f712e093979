"""A job from Python: ``kale_ext.get_job(name)`` finds one, ``kale_ext.run(notebook, ...)``
submits one; both give a :class:`JobHandle` whose ``.result()`` waits and returns what the
job's function returned (rank 0's), and whose ``.outputs`` lists and loads the files it wrote.

``get_job("NAME")`` looks where the Jupyter server looks: the same backend choice (KALE_EXT_BACKEND,
the server configuration and the user's JupyterLab settings) and, for local jobs, the same jobs
folder (KALE_EXT_JOBS_DIR, ``c.KaleExtApp.jobs_dir``, else the Jupyter data folder), so a cell
the panel inserts finds the job it names whatever the kernel's working folder.
"""

from __future__ import annotations

from pathlib import Path

from ..backends.base import Backend, JobInfo, OutputFile
from ..backends.results import (
    hidden,
    listed,
    load_file,
    outputs_folder,
    result_of,
    saved_value,
)
from ..errors import KaleExtError, NotFound


class Outputs:
    """The files a job wrote to ``KALE_EXT_OUTPUT_DIR`` (its saved result aside): iterate for
    :class:`OutputFile` entries, ``load(path)`` to read one (``backends/results.py: LOADERS``),
    ``path(path)`` for where it is."""

    def __init__(self, backend: Backend, name: str):
        self.backend, self.name = backend, name

    @property
    def folder(self) -> Path:
        """Where they are on this machine (NoResult says why they cannot be read here)."""
        return outputs_folder(self.backend, self.name)

    @property
    def files(self) -> list[OutputFile]:
        """As the backend lists them (a local job's while it runs too), else as found in the
        folder here (a cluster job's volume)."""
        found = self.backend.outputs(self.name)
        if found.listed:
            return [f for f in found.files if not hidden(f.path)]
        folder = self.folder
        return listed(folder) if folder.is_dir() else []

    def __iter__(self):
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, path: str) -> bool:
        return any(f.path == path for f in self.files)

    def path(self, path: str) -> Path:
        """The file ``path`` (as listed) on this machine; never outside the outputs."""
        folder = self.folder.resolve()
        target = (folder / path).resolve()
        if not target.is_relative_to(folder):
            raise KaleExtError(f"{path!r} is not among the outputs of {self.name}")
        if not target.is_file():
            names = ", ".join(f.path for f in self.files[:10]) or "none"
            raise KaleExtError(f"{self.name} has no output {path!r} (it has: {names})")
        return target

    def load(self, path: str):
        """The file ``path`` loaded by its ending: torch files with weights_only=True, JSON,
        CSV (a pandas DataFrame, or a list of dicts), NumPy .npy/.npz, text."""
        return load_file(self.path(path), inside=self.folder)

    def __repr__(self) -> str:
        from ..job.workspace import size_text

        try:
            files = self.files
            where = self.folder
        except KaleExtError as e:
            return f"<outputs of {self.name}: {e}>"
        shown = ", ".join(f"{f.path} ({size_text(f.size)})" for f in files[:20])
        more = f", ... ({len(files)} files)" if len(files) > 20 else ""
        return f"<outputs of {self.name} in {where}: {shown or 'no files'}{more}>"


class JobHandle:
    """One job: its ``status``, ``wait()``, ``result()`` and ``outputs``."""

    def __init__(self, backend: Backend, name: str, warnings: list[str] | None = None):
        self.backend, self.name = backend, name
        self.warnings = list(warnings or [])

    def info(self) -> JobInfo:
        return self.backend.get_job(self.name)

    @property
    def status(self) -> str:
        """As every view shows it: `Running`, `Complete`, `Stalled (...)`."""
        return self.info().status_text

    def wait(self, timeout: float | None = None) -> JobInfo:
        """Until the job ends (TimeoutError after ``timeout`` seconds)."""
        interval = 0.5 if self.backend.name == "local" else 2.0
        return self.backend.wait(self.name, timeout=timeout, interval=interval)

    def result(self, timeout: float | None = None):
        """Wait for the job, then what its function returned (rank 0's). Raises JobFailed
        naming the failure's cell and line, NoResult when it returned nothing or its value
        could not be saved or read here, TimeoutError after ``timeout`` seconds."""
        try:
            outputs_folder(self.backend, self.name)  # unreadable here: said now, not at its end
            info = self.wait(timeout)
        except NotFound:  # deleted: a local job's outputs may have stayed
            try:
                return saved_value(self.backend, self.name)
            except NotFound:
                raise NotFound(f"no job named {self.name} ({self.backend.name} backend)") from None
        return result_of(self.backend, info)

    @property
    def outputs(self) -> Outputs:
        return Outputs(self.backend, self.name)

    def __repr__(self) -> str:
        try:
            status = self.status
        except KaleExtError as e:
            status = str(e)
        return f"<job {self.name} ({self.backend.name}): {status}>"


def backend_for(backend: str | None = None) -> Backend:
    """The backend the Jupyter server would use (see the module's docstring)."""
    from ..backends.choose import choose_backend
    from ..job.defaults import load, server_section

    jobs_dir = server_section().get("jobs_dir")
    chosen, _ = choose_backend(backend, load(), jobs_dir=jobs_dir)
    return chosen


def job(name: str, backend: str | None = None) -> JobHandle:
    """The job named ``name`` (NotFound when there is none, or none any more with its outputs)."""
    if not isinstance(name, str) or not name:
        raise KaleExtError(f"a job's name is a non-empty string, not {name!r}")
    chosen = backend_for(backend)
    try:
        chosen.get_job(name)
    except NotFound:
        outputs_folder(chosen, name)  # a deleted local job whose outputs stayed: still found
    return JobHandle(chosen, name)


def run(notebook, backend: str | None = None, **options) -> JobHandle:
    """Submit ``notebook`` (a path) as the CLI's ``run`` does, with job ``options`` (the
    names of the REST API and kale_ext/job/options.py: nodes=2, parameters={...}); returns at
    once. Warnings are in ``.warnings``."""
    from ..backends.submit import submit
    from ..job.defaults import load
    from ..job.options import JobOptions

    JobOptions.from_dict(options)  # each value checked (ConfigError names it) before any work
    chosen = backend_for(backend)
    path = str(notebook)
    submitted = submit(chosen, Path(path), options, load(), notebook_path=path)
    return JobHandle(chosen, submitted.name, submitted.warnings)
