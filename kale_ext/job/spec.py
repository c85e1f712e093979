"""JobSpec: a compiled notebook plus every submit-time choice, resolved in one place.

Precedence, highest first: explicit submit options (panel, CLI, magic) > the notebook's
metadata (``metadata.kale_ext``, written by the panel) > the `distributed` cell (and Kale's
resource tags) > the user's and the site's defaults (kale_ext.defaults) > the runtime's.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .arguments import typed_arguments
from .checkpoints import RESERVED_NAMES, chosen_checkpoints
from .configcell import config_of
from .distributed import DistributedConfig
from .k8s_values import check_labels, check_resources, matches, quantity, resource_key
from .options import BY_NAME, JobOptions, check
from .outputs import parse_outputs
from .packages import Pinning, job_packages, pinning, sdk_index_urls
from .procs import Procs, checked_procs
from .restarts import restart_warnings, restarts_of
from .runtimes import DEFAULT_RUNTIME, Runtime
from .spec_checks import check_needs, check_required, check_shm, check_volumes, workspace_warnings
from .volumes import parse_volume

if TYPE_CHECKING:
    from pathlib import Path

    from ..compile.compiler import CompiledJob
    from ..compile.packages import Package
    from .checkpoints import Checkpoints
    from .outputs import OutputsVolume
    from .workspace import Workspace


@dataclass
class JobSpec:
    """Everything the TrainJob builder and every backend need, validated."""

    name: str
    runtime: Runtime
    nodes: int
    procs: Procs  # the processes per node the Trainer starts, and why (job/procs.py)
    job: CompiledJob
    func_args: dict
    packages: list[Package]  # what the job installs, where each came from (job/packages.py)
    pip_index_urls: list[str]
    image: str | None
    config: DistributedConfig
    dataset_uri: str | None = None
    model_uri: str | None = None
    warnings: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # the explicit submit options, for a rerun
    workspace: Workspace | None = None  # the files the job gets as its working directory
    outputs: OutputsVolume | None = None  # where outputs last on a cluster
    folder: Path | None = None  # the notebook's folder (local outputs go beside it)
    local_folders: dict = field(default_factory=dict)  # volume name → the folder standing for it
    initializer: dict | None = None  # the train() call's initializer, as the TrainJob has it
    runtime_patches: list[dict] = field(default_factory=list)  # the train() call's RuntimePatches
    pinning: Pinning | None = None  # whether packages were pinned to the versions here, and why
    max_restarts: int = 0  # the whole job started again after a node fails, at most this often
    restarts_from: str | None = None  # where max_restarts was set (None: nowhere, 0)
    checkpoints: Checkpoints | None = None  # where --checkpoints asked (job/checkpoints.py)
    keep_checkpoints: int | None = None  # how many a job keeps (None: the default)

    @property
    def requirements(self) -> list[str]:
        """The packages as pip gets them."""
        return [p.requirement for p in self.packages]

    @property
    def procs_per_node(self) -> int:
        """The processes each node starts (asked, or the runtime's choice)."""
        return self.procs.count

    @property
    def lineage(self) -> str:
        """The lineage its checkpoints belong to: a resumed job's (its parent's), else its own
        name (runs/resume.py)."""
        return self.options.get("lineage") or self.name

    @property
    def shape(self) -> str:
        """`2 nodes × 4 processes (the runtime's choice: 4 CPUs per node)`."""
        return self.procs.shape(self.nodes)


def name_limit(runtime: Runtime, nodes: int) -> int:
    """The longest TrainJob name whose pods' names stay within 63 characters.

    Pods are named `<job>-<replicated job>-0-<index>-<5 chars>`; the JobSet webhook rejects longer
    ones only after the TrainJob was accepted, and the job then never starts.
    """
    longest = max(len(j) for j in runtime.replicated_jobs)
    return 63 - longest - len(str(max(nodes - 1, 0))) - 10


def check_name(name: str, limit: int) -> str:
    if not matches("job_name", name):
        raise ConfigError(
            "name",
            f"{name!r} is not a valid job name: lowercase letters, digits and '-', starting with a "
            "letter and ending with a letter or digit",
        )
    if name in RESERVED_NAMES:
        raise ConfigError(
            "name",
            f"{name!r} is reserved: it names the folder of {RESERVED_NAMES[name]}; "
            "choose another name",
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
            count = check(BY_NAME["gpu"], o.gpu)
            if count:
                resources["nvidia.com/gpu"] = str(count)
    env = o.env or {}
    if not isinstance(env, dict):
        raise ConfigError("env", "must be a mapping of NAME to value")
    return DistributedConfig(
        requests=resources,
        limits=resources,
        env=[{"name": k, "value": str(v)} for k, v in env.items()],
    )


def _without_gpus(config: DistributedConfig) -> DistributedConfig:
    def keep(resources: dict) -> dict:
        return {k: v for k, v in resources.items() if "gpu" not in k and "mig-" not in k}

    return dataclasses.replace(config, requests=keep(config.requests), limits=keep(config.limits))


def _launcher_warnings(runtime: Runtime, procs: int | None) -> list[str]:
    """A runtime that does not launch with torchrun (jax, xgboost, ...) runs the function once
    per node: more processes per node are refused, and the user is told. An MPI runtime starts
    the processes its hostfile gives each node (job/mpi.py)."""
    if runtime.launcher == "torchrun" or runtime.mpi:
        return []
    if procs is not None and procs > 1:
        raise ConfigError(
            "procs_per_node",
            f"runtime {runtime.name} ({runtime.framework or 'not torch'}) starts one process per "
            "node; more processes per node need a torch runtime (torchrun)",
        )
    return [
        f"runtime {runtime.name} is a {runtime.framework or 'non-torch'} runtime: the function "
        "runs once per node with python, not torchrun (no PET_* rendezvous); it reads the "
        "runtime's own settings from the environment the Trainer gives each node"
    ]


def _check_framework_env(runtime: Runtime, config: DistributedConfig) -> None:
    """The runtime's plugin sets its own variables on each node (xgboost's DMLC_*, jax's JAX_*):
    the Trainer's webhook refuses a TrainJob that sets them too, so say so before it is sent.
    The bound of a job's return value (compile/resultsave.py) is checked here too."""
    from ..compile.resultsave import MAX_BYTES_ENV, check_bound
    from .framework_env import FRAMEWORK_ENV

    own = {name for name, _ in FRAMEWORK_ENV.get(runtime.framework or "", ())}
    for env in config.env:
        why = check_bound(env.value) if env.name == MAX_BYTES_ENV and env.value else None
        if why is not None:
            raise ConfigError(f"env.{MAX_BYTES_ENV}", why)
        if env.name in own:
            raise ConfigError(
                "env",
                f"{env.name} is set on each node by the {runtime.framework} runtime "
                f"{runtime.name}; leave it out",
            )


def runtime_name(
    options: JobOptions | dict | None, kale_metadata, defaults=None, notebook: str | None = None
) -> str:
    """The runtime a job asks for: options > the notebook's metadata (``metadata.kale_ext``) >
    ``notebook`` (the runtime= of its train() call) > the defaults (the precedence of
    build_job_spec). Not validated: the backend looks it up."""
    chosen = options.runtime if isinstance(options, JobOptions) else None
    if isinstance(options, dict):
        chosen = options.get("runtime")
    stored = kale_metadata.get("options") if isinstance(kale_metadata, dict) else None
    stored = stored.get("runtime") if isinstance(stored, dict) else None
    return (
        chosen
        or stored
        or notebook
        or (defaults.runtime if defaults is not None else DEFAULT_RUNTIME)
    )


def train_call_choice(options: JobOptions | dict | None, kale_metadata) -> int | None:
    """Which train() call of the notebook is the job (1-based; None: the last): options > the
    notebook's metadata (``metadata.kale_ext.options``), checked against the option's bounds."""
    chosen = options.train_call if isinstance(options, JobOptions) else None
    if isinstance(options, dict):
        chosen = options.get("train_call")
    stored = kale_metadata.get("options") if isinstance(kale_metadata, dict) else None
    stored = stored.get("train_call") if isinstance(stored, dict) else None
    value = chosen if chosen is not None else stored
    return None if value is None else check(BY_NAME["train_call"], value)


def build_job_spec(
    job: CompiledJob,
    options: JobOptions | dict | None = None,
    runtime: Runtime | None = None,
    defaults=None,
    workspace: Workspace | None = None,
) -> JobSpec:
    """Resolve a compiled notebook and the submit options into one validated JobSpec.
    ``defaults``: a kale_ext.defaults.Defaults (None: the built-in ones); ``workspace``: the
    files the job ships (workspace.choose), checked against its size cap here."""
    explicit = JobOptions.from_dict(options)
    meta = job.notebook_metadata if isinstance(job.notebook_metadata, dict) else {}
    stored = JobOptions.from_dict(meta.get("options"), "metadata.kale_ext.options")
    if stored.config is not None:
        raise ConfigError(
            "metadata.kale_ext.options.config", "put the config in metadata.kale_ext.config"
        )
    o = explicit.over(stored)
    base = defaults.job_options() if defaults is not None else JobOptions()
    settings = job.settings or {}
    asked = runtime_name(o, meta, defaults, settings.get("runtime"))
    runtime = runtime or Runtime(name=asked, framework="torch")
    wanted = o.runtime or settings.get("runtime") or (defaults.runtime if defaults else None)
    if wanted and wanted != runtime.name:
        raise ConfigError("runtime", f"asked for {wanted!r} but was given {runtime.name!r}")

    # DistributedConfig layers, lowest first.
    # Kale tags, and the CustomTrainer(...) settings of a Kubeflow-SDK-style notebook
    tags = DistributedConfig(
        requests=check_resources(settings.get("requests", {}), "CustomTrainer resources_per_node"),
        limits=check_resources(settings.get("limits", {}), "limit: tags"),
        env=[{"name": k, "value": str(v)} for k, v in settings.get("env", {}).items()],
        labels=check_labels(settings.get("labels", {}), "label: tags"),
        annotations=check_labels(
            settings.get("annotations", {}), "annotation: tags", annotations=True
        ),
        # train(options=[ActiveDeadlineSeconds(N)]): the TrainJob's activeDeadlineSeconds
        run_policy={"active_deadline_seconds": deadline}
        if (deadline := settings.get("active_deadline_seconds"))
        else None,
    )
    # Each layer's values are checked where it is read; a request above its limit once, in the
    # config that runs (the panel's request carries the form, its notebook's metadata the same).
    cell = config_of(job)
    layers = [tags, cell]
    named = {"the distributed cell": cell}  # the config layers that may set max_restarts
    if meta.get("config") is not None:
        layers.append(
            DistributedConfig.from_dict(meta["config"], "metadata.kale_ext.config", whole=False)
        )
        named["metadata.kale_ext.config"] = layers[-1]
    if explicit.config is not None:
        layers.append(DistributedConfig.from_dict(explicit.config, "options.config", whole=False))
        named["options.config"] = layers[-1]
    stored_pod, stored_local = options_layer(stored, "metadata.kale_ext.options.")
    explicit_pod, explicit_local = options_layer(explicit)
    layers += [_flag_config(stored), _flag_config(explicit), stored_pod, explicit_pod]
    config = _flag_config(base)
    for layer in layers:
        config = config.merged(layer, whole=layer is layers[-1])
    outputs = parse_outputs(o.outputs)
    checkpoints = chosen_checkpoints(o.checkpoints, config)
    check_volumes(config, workspace, outputs, checkpoints)
    check_shm(config)

    nodes = o.nodes if o.nodes is not None else settings.get("nodes", base.nodes)
    nodes = nodes if nodes is not None else runtime.num_nodes
    nodes = check(BY_NAME["nodes"], nodes)
    if o.gpu == 0:  # 0 GPUs is a choice: it takes away the GPUs the layers below ask for
        config = _without_gpus(config)
    asked_procs = check(BY_NAME["procs_per_node"], o.procs_per_node)  # None: the runtime's
    procs = checked_procs(runtime, asked_procs, config.requests, config.limits)
    limit = name_limit(runtime, nodes)
    asked_name = o.name if o.name is not None else settings.get("name")  # the SDK's Name option
    name = (
        check_name(asked_name, limit)
        if asked_name is not None
        else generate_name(job.function_name, limit)
    )

    pin = pinning(check(BY_NAME["pin_packages"], o.pin_packages), runtime)
    packages = job_packages(job, o.packages, pin)
    urls = o.pip_index_urls
    if urls is None:  # CustomTrainer(pip_index_urls=...) > the notebook's `!pip install -i`
        urls = settings.get("pip_index_urls") or job.pip_index_urls
    urls = check(BY_NAME["pip_index_urls"], list(urls or base.pip_index_urls or []))
    urls = urls or sdk_index_urls(job, packages)
    warnings = _launcher_warnings(runtime, asked_procs)
    _check_framework_env(runtime, config)
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
    warnings += workspace_warnings(job, workspace)
    if runtime.published:  # a preview with no cluster to ask (backends/submit.lookup_runtime)
        warnings.append(f"runtime {runtime.name}: its facts are {runtime.published}")
    function = job.function_name if getattr(job, "entrypoint", False) else None
    func_args = {
        # CustomTrainer(func_args=...) of an SDK-style notebook, under explicit parameters
        **notebook_arguments(job),
        **typed_arguments(job.parameters, o.parameters, function=function),
    }
    check_required(job, func_args)
    check_needs(settings.get("needs") or {}, config)
    max_restarts, restarts_from = restarts_of(explicit, stored, named)
    warnings += restart_warnings(max_restarts, job.source)
    chosen = {k: v for k, v in explicit.chosen().items() if k != "name"}
    if "config" in chosen:
        chosen["config"] = DistributedConfig.from_dict(chosen["config"]).to_dict()
    return JobSpec(
        options=chosen,
        name=name,
        runtime=runtime,
        nodes=nodes,
        procs=procs,
        job=job,
        func_args=func_args,
        packages=packages,
        pip_index_urls=urls,
        image=o.image or settings.get("image") or base.image,
        config=config,
        dataset_uri=o.dataset_uri,
        model_uri=o.model_uri,
        warnings=warnings,
        workspace=workspace,
        outputs=outputs,
        local_folders={**stored_local, **explicit_local},
        initializer=settings.get("initializer"),
        runtime_patches=list(settings.get("runtime_patches") or []),
        pinning=pin,
        max_restarts=max_restarts,
        restarts_from=restarts_from,
        checkpoints=checkpoints,
        keep_checkpoints=o.keep_checkpoints,
    )


def notebook_arguments(job: CompiledJob) -> dict:
    """The arguments the notebook itself gives the function: the func_args of an SDK-style
    notebook's train() call (typed by the function's defaults), or none. ConfigError on an
    argument the function does not have."""
    function = job.function_name if getattr(job, "entrypoint", False) else None
    given = (job.settings or {}).get("func_args")
    return typed_arguments(job.parameters, given, "CustomTrainer func_args", function)


def options_layer(o, where: str = ""):
    """The short forms among options ``o`` (a JobOptions; ``where`` the prefix of their fields)
    as a DistributedConfig layer, and the local folders standing for its volumes (volume name →
    LOCAL_DIR)."""
    shorts = [parse_volume(t, f"{where}volumes[{i}]") for i, t in enumerate(o.volumes or [])]
    layer = DistributedConfig(
        volumes=[s.volume() for s in shorts],
        volume_mounts=[s.volume_mount() for s in shorts],
        env_from=[{"secretRef": {"name": name}} for name in o.env_from_secrets or []],
        service_account_name=o.service_account,
        image_pull_secrets=o.image_pull_secrets or [],
        shm_size=o.shm_size,
        # a queue (--queue) is the run policy's, as the Training Operator's config said it
        run_policy={"scheduling_policy": {"queue": o.queue}} if o.queue else None,
    )
    return layer, {s.volume_name: s.local for s in shorts if s.local}
