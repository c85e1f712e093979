"""JobSpec: a compiled notebook plus every submit-time choice, resolved in one place.

Precedence, highest first: explicit submit options (panel, CLI, magic) > the notebook's
metadata (``metadata.kale_ext``, written by the panel) > the `distributed` cell (and Kale's
resource tags) > the user's and the site's defaults (kale_ext.defaults) > the runtime's.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field, fields
from typing import Any

from ..compile.compiler import CompiledJob
from ..errors import ConfigError
from .distributed import DistributedConfig, check_labels, check_resources, quantity, resource_key
from .runtimes import DEFAULT_RUNTIME, Runtime

_RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_URI_SCHEMES = ("hf://", "s3://", "cache://")


@dataclass
class JobOptions:
    """Submit-time choices. ``None`` means: not chosen here, take the next layer's value."""

    name: str | None = None
    runtime: str | None = None
    nodes: int | None = None
    procs_per_node: int | None = None
    gpu: int | str | None = None  # a count of whole GPUs, or a MIG profile such as "mig-1g.5gb"
    cpu: str | int | float | None = None
    memory: str | None = None
    image: str | None = None
    parameters: dict | None = None
    packages: list | None = None  # extra packages (override detected pins by name)
    pip_index_urls: list | None = None
    env: dict | None = None  # plain NAME: value pairs
    config: Any = None  # a DistributedConfig (or its dict) laid over the notebook's
    dataset_uri: str | None = None
    model_uri: str | None = None

    @classmethod
    def from_dict(cls, data: Any, where: str = "options") -> JobOptions:
        if isinstance(data, JobOptions):
            return data
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(where, f"must be an object, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}", f"unknown option (known: {', '.join(sorted(known))})"
            )
        return cls(**data)

    def over(self, lower: JobOptions) -> JobOptions:
        """These options, falling back to ``lower`` where not chosen."""
        return JobOptions(
            **{
                f.name: getattr(self, f.name)
                if getattr(self, f.name) is not None
                else getattr(lower, f.name)
                for f in fields(self)
            }
        )


@dataclass
class JobSpec:
    """Everything the TrainJob builder and every backend need, validated."""

    name: str
    runtime: Runtime
    nodes: int
    procs_per_node: int
    job: CompiledJob
    func_args: dict
    packages: list[str]
    pip_index_urls: list[str]
    image: str | None
    config: DistributedConfig
    dataset_uri: str | None = None
    model_uri: str | None = None
    warnings: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # the explicit submit options, for a rerun


def _positive(value: Any, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(where, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise ConfigError(where, f"must be at least {minimum}, got {value}")
    return value


def name_limit(runtime: Runtime, nodes: int) -> int:
    """The longest TrainJob name whose pods' names stay within 63 characters.

    Pods are named `<job>-<replicated job>-0-<index>-<5 chars>`; the JobSet webhook rejects longer
    ones only after the TrainJob was accepted, and the job then never starts.
    """
    longest = max(len(j) for j in runtime.replicated_jobs)
    return 63 - longest - len(str(max(nodes - 1, 0))) - 10


def check_name(name: str, limit: int) -> str:
    if not isinstance(name, str) or not _RFC1035.match(name):
        raise ConfigError(
            "name",
            f"{name!r} is not a valid job name: lowercase letters, digits and '-', starting with a "
            "letter and ending with a letter or digit",
        )
    if len(name) > limit:
        raise ConfigError(
            "name", f"{name!r} is {len(name)} characters; this runtime allows at most {limit}"
        )
    return name


def generate_name(stem: str, limit: int) -> str:
    """`<notebook>-<5 random characters>`, valid and within ``limit``."""
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    if not slug or not slug[0].isalpha():
        slug = f"job-{slug}".rstrip("-")
    suffix = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(5))
    slug = slug[: limit - len(suffix) - 1].rstrip("-")
    return f"{slug}-{suffix}"


def _flag_config(o: JobOptions) -> DistributedConfig:
    """The resource and env flags (--gpu, --cpu, --memory, env) as a config layer."""
    resources: dict[str, Any] = {}
    if o.cpu is not None:
        resources["cpu"] = quantity(o.cpu, "cpu")
    if o.memory is not None:
        resources["memory"] = quantity(o.memory, "memory")
    if o.gpu is not None:
        if isinstance(o.gpu, str) and o.gpu.lower().startswith("mig-"):
            resources[resource_key(o.gpu)] = "1"
        else:
            count = o.gpu
            if isinstance(count, str) and count.isdigit():
                count = int(count)
            if _positive(count, "gpu", 0):
                resources["nvidia.com/gpu"] = str(count)
    env = o.env or {}
    if not isinstance(env, dict):
        raise ConfigError("env", "must be a mapping of NAME to value")
    return DistributedConfig(
        requests=resources,
        limits=resources,
        env=[{"name": k, "value": str(v)} for k, v in env.items()],
    )


def _func_args(job: CompiledJob, parameters: Any) -> dict:
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise ConfigError("parameters", "must be a mapping of parameter names to values")
    for key, value in parameters.items():
        if key not in job.parameters:
            known = ", ".join(job.parameters) or "none"
            raise ConfigError(
                f"parameters.{key}", f"the notebook has no such parameter (it has: {known})"
            )
        try:
            if json.loads(json.dumps(value)) != value:
                raise ValueError
        except (TypeError, ValueError):
            raise ConfigError(
                f"parameters.{key}",
                f"{value!r} must be a JSON value (number, string, bool, null, list or object)",
            ) from None
    return dict(parameters)


def runtime_name(options: JobOptions | dict | None, kale_metadata, defaults=None) -> str:
    """The runtime a job asks for: options > the notebook's metadata (``metadata.kale_ext``) >
    the defaults (the precedence of build_job_spec). Not validated: the backend looks it up."""
    chosen = options.runtime if isinstance(options, JobOptions) else None
    if isinstance(options, dict):
        chosen = options.get("runtime")
    stored = kale_metadata.get("options") if isinstance(kale_metadata, dict) else None
    stored = stored.get("runtime") if isinstance(stored, dict) else None
    return chosen or stored or (defaults.runtime if defaults is not None else DEFAULT_RUNTIME)


def build_job_spec(
    job: CompiledJob,
    options: JobOptions | dict | None = None,
    runtime: Runtime | None = None,
    defaults=None,
) -> JobSpec:
    """Resolve a compiled notebook and the submit options into one validated JobSpec.
    ``defaults``: a kale_ext.defaults.Defaults (None: the built-in ones)."""
    explicit = JobOptions.from_dict(options)
    meta = job.notebook_metadata if isinstance(job.notebook_metadata, dict) else {}
    stored = JobOptions.from_dict(meta.get("options"), "metadata.kale_ext.options")
    if stored.config is not None:
        raise ConfigError(
            "metadata.kale_ext.options.config", "put the config in metadata.kale_ext.config"
        )
    o = explicit.over(stored)
    base = defaults.job_options() if defaults is not None else JobOptions()
    runtime = runtime or Runtime(name=runtime_name(o, meta, defaults), framework="torch")
    wanted = o.runtime or (defaults.runtime if defaults is not None else None)
    if wanted and wanted != runtime.name:
        raise ConfigError("runtime", f"asked for {wanted!r} but was given {runtime.name!r}")
    if runtime.mpi:
        raise ConfigError(
            "runtime", f"{runtime.name} launches through MPI, which kale_ext does not support yet"
        )

    # DistributedConfig layers, lowest first.
    settings = job.settings or {}
    # Kale tags, and the CustomTrainer(...) settings of a Kubeflow-SDK-style notebook
    tags = DistributedConfig(
        requests=check_resources(settings.get("requests", {}), "CustomTrainer resources_per_node"),
        limits=check_resources(settings.get("limits", {}), "limit: tags"),
        env=[{"name": k, "value": str(v)} for k, v in settings.get("env", {}).items()],
        labels=check_labels(settings.get("labels", {}), "label: tags"),
        annotations=check_labels(
            settings.get("annotations", {}), "annotation: tags", annotations=True
        ),
    )
    config = _flag_config(base).merged(tags).merged(job.config)
    if meta.get("config") is not None:
        config = config.merged(
            DistributedConfig.from_dict(meta["config"], "metadata.kale_ext.config")
        )
    if explicit.config is not None:
        config = config.merged(DistributedConfig.from_dict(explicit.config, "options.config"))
    config = config.merged(_flag_config(stored)).merged(_flag_config(explicit))

    nodes = o.nodes if o.nodes is not None else settings.get("nodes", base.nodes)
    nodes = nodes if nodes is not None else runtime.num_nodes
    nodes = _positive(nodes, "nodes")
    gpus = config.limits.get("nvidia.com/gpu") or config.requests.get("nvidia.com/gpu")
    default_procs = int(gpus) if gpus and int(gpus) > 0 else 1
    procs = _positive(
        o.procs_per_node if o.procs_per_node is not None else default_procs, "procs_per_node"
    )
    limit = name_limit(runtime, nodes)
    name = (
        check_name(o.name, limit) if o.name is not None else generate_name(job.function_name, limit)
    )

    packages = list(job.packages)
    for extra in [*settings.get("packages", []), *(o.packages or [])]:
        if not isinstance(extra, str) or not extra.strip():
            raise ConfigError(
                "packages", f"each package must be a requirement string, not {extra!r}"
            )
        from packaging.utils import canonicalize_name

        from ..compile.packages import requirement_name

        key = canonicalize_name(requirement_name(extra))
        packages = [p for p in packages if canonicalize_name(requirement_name(p)) != key] + [extra]
    urls = o.pip_index_urls if o.pip_index_urls is not None else job.pip_index_urls
    urls = list(urls or base.pip_index_urls or [])
    for url in urls:
        if not isinstance(url, str) or not re.match(r"^https?://\S+$", url):
            raise ConfigError("pip_index_urls", f"{url!r} is not an http(s) URL")
    for key, uri in (("dataset_uri", o.dataset_uri), ("model_uri", o.model_uri)):
        if uri is not None and not (isinstance(uri, str) and uri.startswith(_URI_SCHEMES)):
            raise ConfigError(key, f"{uri!r} must start with one of {', '.join(_URI_SCHEMES)}")
    warnings = []
    policy = config.run_policy
    if policy is not None:
        if policy.backoff_limit is not None:
            warnings.append(
                "run_policy.backoff_limit: restarts are governed by the runtime "
                "(its JobSet failurePolicy)"
            )
        sched = policy.scheduling_policy
        if sched is not None and (
            sched.min_available or sched.min_resources or sched.schedule_timeout_seconds
        ):
            warnings.append(
                "run_policy.scheduling_policy: min_available, min_resources and "
                "schedule_timeout_seconds are governed by the runtime's podGroupPolicy"
            )
    chosen = {f.name: getattr(explicit, f.name) for f in fields(explicit)}
    chosen = {k: v for k, v in chosen.items() if v is not None and k != "name"}
    if "config" in chosen:
        chosen["config"] = DistributedConfig.from_dict(chosen["config"]).to_dict()
    return JobSpec(
        options=chosen,
        name=name,
        runtime=runtime,
        nodes=nodes,
        procs_per_node=procs,
        job=job,
        func_args=_func_args(job, o.parameters),
        packages=packages,
        pip_index_urls=urls,
        image=o.image or settings.get("image") or base.image,
        config=config,
        dataset_uri=o.dataset_uri,
        model_uri=o.model_uri,
        warnings=warnings,
    )
