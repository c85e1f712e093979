"""A compiled notebook for Kubeflow SDK users: the SDK's ``CustomTrainer``, and a ``train``
through their own ``TrainerClient``.

    from kale_ext.sdk import custom_trainer, train
    trainer = custom_trainer("digits_ddp.ipynb", nodes=2, parameters={"epochs": 3})
    client.train(trainer=trainer)                       # or, in one step:
    train("digits_ddp.ipynb", client=TrainerClient(), nodes=2)

In a notebook written for the SDK, its own ``client.train(...)`` goes through kale_ext with
``use_kale_ext(client)`` (or ``%kale_sdk``: every TrainerClient of the kernel), unedited
(kale_ext/ipython/sdkbackend.py).

The SDK ships a function by its source (``inspect.getsource``): its Kubernetes backend writes
it into an unquoted bash heredoc, where ``$``, backticks and backslashes are rewritten and a
line ``EOM`` ends the script; its local backend writes a file and passes the arguments
positionally. So the function kale_ext hands over is a stub whose source holds only names,
plain punctuation and base64: the compiled module, compressed, with the job's arguments. It
writes the module to a file and runs it as ``python module.py ARGS`` does: the same module,
byte for byte, that kale_ext's local and Kubernetes backends run.

The SDK (``pip install 'kale-ext[sdk]'``) is imported on first use, never with this module.
"""

from __future__ import annotations

import base64
import json
import linecache
import zlib
from collections.abc import Callable
from typing import Any

from .errors import ConfigError

INSTALL = "the Kubeflow SDK is not installed: pip install 'kale-ext[sdk]' (or kubeflow==0.5.0)"
#: What bash rewrites in an unquoted heredoc (and what else a stub never holds).
UNSAFE = frozenset("$`\\")
STUB = '''\
def {name}(parameters=None, /, **more):
    """A notebook compiled by kale_ext: its module travels base64-encoded (kale_ext.sdk)."""
    import base64
    import json
    import os
    import runpy
    import sys
    import tempfile
    import zlib

    def unpack(text):
        return zlib.decompress(base64.b64decode(text))

    folder = tempfile.mkdtemp(prefix="kale_ext-")
    path = os.path.join(folder, "{module}")
    with open(path, "wb") as f:
        f.write(unpack(
{module_b64}
        ))
    args = json.loads(unpack(
{args_b64}
    ))
    args.update(parameters or {{}}, **more)
    sys.argv = [path, json.dumps(args)]
    runpy.run_path(path, run_name="__main__")
'''
#: Settings a CustomTrainer cannot carry (the SDK's options, in train(options=...), may).
_NOT_CARRIED = {
    "env_from": "env_from",
    "annotations": "annotations",
    "labels": "labels",
    "node_selector": "node_selector",
    "affinity": "affinity",
    "tolerations": "tolerations",
    "run_policy": "run_policy",
    "volumes": "volumes",
    "service_account_name": "service_account",
    "image_pull_secrets": "image_pull_secrets",
    "security_context": "security_context",
    "shm_size": "shm_size",
}

#: kale_ext's job options the SDK's CustomTrainer has no place for, and what to do instead. A
#: checkpoint folder that outlives a pod needs a volume in the TrainJob the SDK makes: the
#: SDK's own body, left as it is (README: "Checkpoints"), so this path gives none.
_OPTIONS_NOT_CARRIED = {
    "dataset_uri": "give the SDK's train(initializer=Initializer(dataset=...))",
    "model_uri": "give the SDK's train(initializer=Initializer(model=...))",
    "workspace": "the SDK ships the function only",
    "outputs": "mount a volume with the SDK's RuntimePatch in train(options=...)",
    "max_restarts": "the JobSet's failure policy is the runtime's",
    **dict.fromkeys(
        ("checkpoints", "keep_checkpoints", "lineage", "parent", "resume_step"),
        "a job of the SDK's own client gets no checkpoint folder",
    ),
}
#: The values of those options that ask for nothing (what runs anyway): not refused.
_ASKS_NOTHING = {"max_restarts": 0}


def _b64_lines(data: bytes, indent: int) -> str:
    text = base64.b64encode(zlib.compress(data, 9)).decode("ascii")
    pad = " " * indent
    return "\n".join(f'{pad}"{text[i : i + 76]}"' for i in range(0, len(text), 76)) or f'{pad}""'


def stub_source(name: str, module: str, source: str, args: dict) -> str:
    """The stub's source: safe in an unquoted heredoc (ValueError if it could not be)."""
    text = STUB.format(
        name=name,
        module=module,
        module_b64=_b64_lines(source.encode("utf-8"), 12),
        args_b64=_b64_lines(json.dumps(args, sort_keys=True).encode("utf-8"), 8),
    )
    unsafe = sorted(UNSAFE & set(text))
    if unsafe or any(line.strip() == "EOM" for line in text.splitlines()):
        raise ValueError(f"the stub for {name} is not shell-safe: {unsafe}")
    return text


def stub_function(name: str, module: str, source: str, args: dict) -> Callable:
    """The stub as a function whose source ``inspect.getsource`` finds (kept in linecache, under
    a file name that exists nowhere, so no file of the same name is read instead)."""
    text = stub_source(name, module, source, args)
    filename = f"<kale_ext>/{module}"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    scope: dict[str, Any] = {"__name__": f"kale_ext_sdk_{name}"}
    exec(compile(text, filename, "exec"), scope)  # noqa: S102 (our own generated source)
    return scope[name]


def _sdk():
    try:
        import kubeflow.trainer as sdk
    except ImportError as e:
        raise ImportError(f"{INSTALL} ({e})") from None
    return sdk


def _resources(spec) -> dict | None:
    """The SDK's resources_per_node: one value per resource (it asks requests = limits)."""
    requests, limits = spec.config.requests, spec.config.limits
    differ = sorted(k for k in set(requests) & set(limits) if requests[k] != limits[k])
    if differ:
        raise ConfigError(
            "resources",
            f"the Kubeflow SDK's CustomTrainer asks requests equal to limits: {differ[0]} has "
            f"request {requests[differ[0]]} and limit {limits[differ[0]]}",
        )
    merged = {**requests, **limits}
    return merged or None


def _env(spec) -> dict[str, str] | None:
    out = {}
    for var in spec.config.env:
        if var.value_from is not None:
            raise ConfigError(
                "env",
                f"{var.name} comes from valueFrom, but the Kubeflow SDK's "
                "CustomTrainer takes literal values only: submit it with kale_ext",
            )
        out[var.name] = var.value or ""
    return out or None


def build_spec(notebook, options: dict):
    """The notebook compiled and resolved with kale_ext's options (no workspace: the SDK ships
    the function only)."""
    from .backends.submit import prepare
    from .job.runtimes import Runtime
    from .job.spec import build_job_spec

    for option, instead in _OPTIONS_NOT_CARRIED.items():
        if options.get(option) not in (None, _ASKS_NOTHING.get(option)):
            raise ConfigError(
                option,
                f"the Kubeflow SDK's CustomTrainer cannot carry it ({instead}): use "
                "kale_ext's own submit, or use_kale_ext(client)",
            )
    wanted = {**options, "no_workspace": True}
    job, _ = prepare(notebook, wanted)
    runtime = Runtime(name=options.get("runtime") or "torch-distributed", framework="torch")
    spec = build_job_spec(job, wanted, runtime)
    if job.local_modules:
        raise ConfigError(
            "workspace",
            "the notebook imports modules beside it "
            f"({', '.join(sorted(job.local_modules))}), but the Kubeflow SDK ships "
            "the function only: use kale_ext's own submit",
        )
    for field, option in _NOT_CARRIED.items():
        if getattr(spec.config, field, None):
            raise ConfigError(
                option,
                "the Kubeflow SDK's CustomTrainer cannot carry it: set it "
                "through the SDK's options (Labels, RuntimePatch, ...) in "
                "train(options=...), or use kale_ext's own submit",
            )
    if spec.procs.asked:  # the SDK leaves numProcPerNode to the runtime, as kale_ext unasked
        why = "the Trainer starts a process per CPU (`auto` with GPUs) it is given"
        raise ConfigError(
            "procs_per_node", f"the SDK's CustomTrainer cannot set it: {why}; leave it out"
        )
    return spec


def custom_trainer(notebook, **options):
    """The SDK's ``CustomTrainer`` for a notebook (a path, nbformat JSON or a Notebook), with
    kale_ext's job options (``nodes``, ``cpu``, ``memory``, ``gpu``, ``env``, ``packages``,
    ``parameters``, ``image``, ``pip_index_urls``, ...). Bad input is a ConfigError naming the
    option, or a CompileError naming the cell and line."""
    sdk = _sdk()
    return _trainer(sdk, build_spec(notebook, options), options)


def _trainer(sdk, spec, options: dict):
    job = spec.job
    func = stub_function(job.function_name, job.module_filename, job.source, spec.func_args)
    extra = {"pip_index_urls": list(spec.pip_index_urls)} if spec.pip_index_urls else {}
    return sdk.CustomTrainer(
        func=func,
        packages_to_install=spec.requirements or None,
        num_nodes=spec.nodes,
        resources_per_node=_resources(spec),
        env=_env(spec),
        image=options.get("image"),
        **extra,
    )


def train(notebook, client=None, options: list | None = None, **job_options) -> str:
    """Submit the notebook through ``client`` (a ``TrainerClient``; default: a new one, as the
    SDK configures it) as a CustomTrainer named as kale_ext names jobs; ``options`` are the
    SDK's own (``Labels``, ``RuntimePatch``, ...). Returns the job's name.

    On the SDK's LocalProcessBackend, whose venv has only what the trainer installs, the
    packages always include this environment's torch (its torchrun starts the function)."""
    sdk = _sdk()
    from kubeflow.trainer.options import Name

    spec = build_spec(notebook, job_options)
    check_patches(options)
    trainer = _trainer(sdk, spec, job_options)
    client = client if client is not None else sdk.TrainerClient()
    runtime = job_options.get("runtime")
    backend = getattr(client, "backend", None)
    if type(backend).__name__ == "LocalProcessBackend":
        trainer.packages_to_install = _with_torch(trainer.packages_to_install)
        runtime = runtime or "torch-distributed"  # the local backend needs one named
    return client.train(
        runtime=runtime, trainer=trainer, options=[Name(spec.name), *(options or [])]
    )


def check_patches(options: list | None) -> None:
    """The volumes of the SDK's ``RuntimePatch`` options pass the same allow-list as a job's own
    (job/volumes.py: no hostPath); ConfigError naming the option and the volume."""
    import dataclasses

    from .job.volumes import check_source

    def walk(value, where: str):
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                yield from walk(getattr(value, f.name), f"{where}.{f.name}")
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from walk(item, f"{where}.{key}")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield from walk(item, f"{where}[{i}]")
        if where.endswith(".volumes") and isinstance(value, list):
            yield from ((item, f"{where}[{i}]") for i, item in enumerate(value))

    for i, option in enumerate(options or []):
        if type(option).__name__ == "RuntimePatch":
            for volume, where in walk(option, f"options[{i}] (RuntimePatch)"):
                check_source(volume, where)


def _with_torch(packages: list[str] | None) -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    packages = list(packages or [])
    if any(canonicalize_name(Requirement(p).name) == "torch" for p in packages):
        return packages
    try:
        return [*packages, f"torch=={version('torch')}"]
    except PackageNotFoundError:
        raise ConfigError(
            "packages",
            "the SDK's local backend runs the function with torchrun: "
            "install torch here, or name a torch version in the packages",
        ) from None


def use_kale_ext(client=None, backend=None, notebook=None):
    """Give ``client`` (a ``TrainerClient``; None: every one of this kernel, made before or
    after) a kale_ext backend: its ``train()`` then compiles the kernel's notebook with the
    trainer's function as the job and runs it on kale_ext's ``backend`` (None: local, or the
    cluster, as the defaults choose); its job calls see kale_ext's jobs."""
    _sdk()
    from .ipython.sdkmagic import use_kale_ext as use

    return use(client, backend, notebook=notebook)
