"""One set of defaults for the panel, the CLI, the magics and the REST API.

Layers, lowest first; each sets only the fields it names:

1. built in: the field defaults of :class:`Defaults` (the JupyterLab settings schema,
   labextension/schema/plugin.json, states the same ones; a test keeps them equal);
2. the server's configuration, ``c.KaleExtApp.<field>`` in a ``jupyter_server_config.py`` or
   ``.json`` on Jupyter's config path: a site's choices (the CLI and the magics read the same
   files);
3. the user's JupyterLab settings (Settings Editor → kale_ext), which JupyterLab stores in
   ``<user settings dir>/kale-ext/plugin.jupyterlab-settings``.

A job's own choices sit above all of these (see jobspec.build_job_spec): the notebook's cells,
its metadata (written by the panel), then the options of one submit (panel, CLI flags, magic).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files import MAX_RECORD_BYTES, read_text
from ..mlflow_api import TrackingError, check_uri
from .k8s_values import matches
from .limits import TRAIT as LIMITS
from .limits import configure as configure_limits
from .limits_held import URLS_TRAIT
from .options import BY_NAME
from .options import check as check_option
from .runtimes import DEFAULT_RUNTIME

PLUGIN_ID = "kale-ext:plugin"
BACKENDS = ("auto", "local", "kubernetes")
SERVER = "server configuration"
LAB = "JupyterLab settings"
BUILT_IN = "built in"
RECORDED = "the job's record (a rerun)"
#: A running job without a log line or a metric for this long shows as stalled.
STALL_SECONDS = 600
MAX_STALL_SECONDS = 7 * 24 * 3600
#: The most processes the local backend may be told to run at once.
MAX_LOCAL_CAPACITY = 4096
#: How much lower than the server local jobs run (the nice value of their processes): 0 to 19.
LOCAL_NICE = 10
MAX_LOCAL_NICE = 19
#: keep_finished_days: the bounds of how long finished jobs are kept (the prune's own bound).
MAX_KEEP_FINISHED_DAYS = 3650


@dataclass(frozen=True)
class Defaults:
    """What a job gets when nothing more specific chooses. ``None``: the runtime's own."""

    backend: str = "auto"  # auto: KALE_EXT_BACKEND, else a configured cluster, else local
    namespace: str | None = None  # None: the kubeconfig context's
    runtime: str = DEFAULT_RUNTIME
    image: str | None = None
    pip_index_urls: tuple[str, ...] = ()
    nodes: int | None = None
    cpu: str | None = None  # per node
    memory: str | None = None  # per node
    gpu: int | str | None = None  # per node: a count, or a MIG profile such as mig-1g.5gb
    # How jobs are watched, not what they are (so here, not in the job options): a running job
    # without output this long shows as Stalled in every view. None: never.
    stall_seconds: int | None = STALL_SECONDS
    # Experiment tracking: each job is a run on this MLflow server (MLFLOW_TRACKING_URI, when
    # set, comes first). None: off.
    mlflow_tracking_uri: str | None = None
    # Local backend: processes running at once (nodes × processes per node, over all jobs);
    # jobs beyond it wait in line. None: this machine's CPU count.
    local_capacity: int | None = None
    # Local backend: the CPU priority of local jobs' processes, as a nice value (0: the
    # server's own; 19: the lowest). Below the server's, so that the server, the panel and the
    # kernels stay responsive while jobs take every core; on an idle machine they get it all.
    local_nice: int = LOCAL_NICE
    # Finished jobs (Complete, Failed, Stopped) older than this many days are pruned at a
    # submit, at most once an hour (backends/prune.py: auto_prune); their outputs stay. None:
    # never (`kale-ext prune` by hand).
    keep_finished_days: int | None = None
    sources: dict = field(default_factory=dict, compare=False)  # field -> the layer that set it

    def to_dict(self) -> dict:
        values = {f: getattr(self, f) for f in FIELDS}
        values["pip_index_urls"] = list(self.pip_index_urls)
        return {
            "defaults": values,
            "sources": {f: self.sources.get(f, BUILT_IN) for f in FIELDS},
        }

    def job_options(self):
        """The job-shaping defaults as a JobOptions layer (backend and namespace choose where a
        job runs, not what it is)."""
        from .options import JobOptions

        return JobOptions(
            runtime=self.runtime,
            image=self.image,
            pip_index_urls=list(self.pip_index_urls) or None,
            nodes=self.nodes,
            cpu=self.cpu,
            memory=self.memory,
            gpu=self.gpu,
        )

    def shaping(self) -> dict:
        """The job-shaping values (what :meth:`job_options` lays under a job), as JSON: what a
        job's record keeps, so a rerun runs with the defaults it ran with."""
        return {f: list(v) if isinstance(v := getattr(self, f), tuple) else v for f in SHAPING}

    def with_recorded(self, recorded: dict) -> Defaults:
        """These defaults with a job's recorded job-shaping values in place of today's (a
        rerun): where and how jobs are watched stay today's."""
        kept = {f: recorded[f] for f in SHAPING if f in recorded}
        if "pip_index_urls" in kept:
            kept["pip_index_urls"] = tuple(kept["pip_index_urls"] or ())
        sources = {**self.sources, **dict.fromkeys(kept, RECORDED)}
        return replace(self, **kept, sources=sources)


FIELDS = tuple(f.name for f in fields(Defaults) if f.name != "sources")
#: The fields that shape what a job is (the rest choose where it runs and how it is watched).
SHAPING = ("runtime", "image", "pip_index_urls", "nodes", "cpu", "memory", "gpu")
#: What an unset (null) field means, for people.
UNSET = {
    "namespace": "the kubeconfig context's",
    "image": "the runtime's",
    "pip_index_urls": "PyPI",
    "nodes": "the runtime's",
    "cpu": "none requested",
    "memory": "none requested",
    "gpu": "none",
    "stall_seconds": "never: a quiet job is not flagged",
    "mlflow_tracking_uri": "off, unless MLFLOW_TRACKING_URI is set",
    "local_capacity": "the CPU count",
    "keep_finished_days": "forever: finished jobs are pruned by hand",
}


def check(name: str, value: Any, where: str) -> Any:
    """One default's value, validated; ConfigError names the field and the layer."""
    label = f"defaults.{name}"

    def bad(why: str) -> ConfigError:
        return ConfigError(label, f"{why} (set in the {where})")

    if name not in FIELDS:
        raise bad(f"unknown setting (known: {', '.join(FIELDS)})")
    if value is None:
        if name in ("backend", "runtime", "local_nice"):
            raise bad("must be set, not null")
        return None
    if name == "backend":
        if value not in BACKENDS:
            raise bad(f"must be one of {', '.join(BACKENDS)}, not {value!r}")
    elif name == "namespace":
        if not matches("dns_label", value):
            raise bad(f"{value!r} is not a Kubernetes namespace name")
    elif name in ("runtime", "image") and (not isinstance(value, str) or value != value.strip()):
        raise bad(f"must be a name without spaces around it, not {value!r}")
    elif name == "stall_seconds":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"must be a whole number of seconds, not {value!r}")
        if not 1 <= value <= MAX_STALL_SECONDS:
            raise bad(f"must be between 1 and {MAX_STALL_SECONDS} seconds, got {value}")
    elif name == "local_nice":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"must be a whole number (a nice value), not {value!r}")
        if not 0 <= value <= MAX_LOCAL_NICE:
            raise bad(
                f"must be between 0 (the server's priority) and {MAX_LOCAL_NICE}, got {value}"
            )
    elif name == "local_capacity":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"must be a whole number of processes, not {value!r}")
        if not 1 <= value <= MAX_LOCAL_CAPACITY:
            raise bad(f"must be between 1 and {MAX_LOCAL_CAPACITY} processes, got {value}")
    elif name == "keep_finished_days":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"must be a whole number of days, not {value!r}")
        if not 1 <= value <= MAX_KEEP_FINISHED_DAYS:
            raise bad(f"must be between 1 and {MAX_KEEP_FINISHED_DAYS} days, got {value}")
    elif name == "mlflow_tracking_uri":
        if not isinstance(value, str):
            raise bad(f"must be the address of an MLflow tracking server, not {value!r}")
        try:
            check_uri(value)
        except TrackingError as e:
            raise bad(str(e)) from None
    else:  # a job option: checked as a submit's own value is
        try:
            value = check_option(BY_NAME[name], value, label)
        except ConfigError as e:
            raise bad(e.message) from None
        return tuple(value) if name == "pip_index_urls" else value
    return value


def resolve(*layers: tuple[str, dict], strict: bool = True) -> Defaults:
    """Defaults from ``(where, {field: value})`` layers, lowest first. An invalid value raises
    ConfigError, or with ``strict=False`` is passed over (the layer below it stands)."""
    values: dict = {}
    sources: dict = {}
    for where, layer in layers:
        for name, value in layer.items():
            try:
                values[name] = check(name, value, where)
            except ConfigError:
                if strict:
                    raise
                continue
            sources[name] = where
    return Defaults(**values, sources=sources)


def load(server: dict | None = None, lab_dir: str | None = None, strict: bool = True) -> Defaults:
    """The effective defaults. ``server``: the server configuration's values when the caller is
    the server (which has them loaded); else they are read from the config files. ``lab_dir``:
    JupyterLab's user settings directory when the server knows it (c.LabApp.user_settings_dir).
    ``strict=False``: pass over invalid values, and unreadable files, instead of raising.

    Read from the files (the CLI, the magics), the server configuration's option limits
    (limits.py) are applied to this process too, as the server applies them to its own."""
    layers = []
    for where, read in (
        (SERVER, lambda: _site(strict) if server is None else server),
        (LAB, lambda: lab_settings(lab_dir)),
    ):
        try:
            layers.append((where, read()))
        except ConfigError:
            if strict:
                raise
    return resolve(*layers, strict=strict)


def _site(strict: bool) -> dict:
    """The server configuration's defaults, its option limits now in force here."""
    section = server_section()
    try:
        configure_limits(section.get(LIMITS), package_urls=section.get(URLS_TRAIT))
    except ConfigError:
        if strict:
            raise
    return {name: section[name] for name in FIELDS if name in section}


def server_config() -> dict:
    """The defaults set as ``c.KaleExtApp.<field>`` in jupyter_server_config files."""
    section = server_section()
    return {name: section[name] for name in FIELDS if name in section}


def server_section() -> dict:
    """Everything set as ``c.KaleExtApp.<name>`` in jupyter_server_config files."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Application, Config

    merged = Config()
    try:  # the files the server reads, lowest priority first, as traitlets loads them
        for config, _ in Application._load_config_files(
            "jupyter_server_config", path=jupyter_config_path(), raise_config_file_errors=True
        ):
            merged.merge(config)
    except Exception as e:  # a broken config file: say which and why, as the server would
        raise ConfigError(
            "defaults", f"cannot read the Jupyter server configuration: {type(e).__name__}: {e}"
        ) from None
    return dict(merged.get("KaleExtApp", {}))


def lab_settings_file(lab_dir: str | None = None) -> Path:
    """Where JupyterLab keeps this extension's user settings: in ``lab_dir``, else where
    JupyterLab's own default puts them (as jupyterlab.commands does)."""
    from jupyter_core.paths import jupyter_config_dir

    base = (
        lab_dir
        or os.environ.get("JUPYTERLAB_SETTINGS_DIR")
        or os.path.join(jupyter_config_dir(), "lab", "user-settings")
    )
    package, _, plugin = PLUGIN_ID.partition(":")
    return Path(base) / package / f"{plugin}.jupyterlab-settings"


_lab_cache: dict = {}


def lab_settings(lab_dir: str | None = None) -> dict:
    """The defaults the user set in JupyterLab (JSON5 with comments, as JupyterLab writes it).
    Reread only when the file changes."""
    path = lab_settings_file(lab_dir)
    try:
        stat = path.stat()
    except OSError:
        return {}
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if _lab_cache.get("key") == key:
        return dict(_lab_cache["value"])
    import json5

    try:
        data = json5.loads(read_text(path, MAX_RECORD_BYTES))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ConfigError("defaults", f"cannot read the {LAB} file {path.name}: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError("defaults", f"the {LAB} file {path.name} must hold an object")
    value = {k: v for k, v in data.items() if k in FIELDS}
    _lab_cache.update(key=key, value=value)
    return dict(value)
