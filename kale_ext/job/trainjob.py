"""JobSpec → TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2.3.0).

One builder, used by every backend, in the shape of the Kubeflow SDK's own models
(``kubeflow_trainer_api``). The container command runs the compiled module byte-exact: the
source travels compressed and base64-encoded as one argument of ``python -c`` (no shell ever
reads it), so `$HOME`, backticks, backslashes or a line `EOM` in the notebook stay as they are.
A source larger than one argument may be (MAX_ARGUMENT) travels in several, joined again.

What a TrainJob may embed is bounded in job/embed.py (the Kubernetes backend checks it); a local
run embeds nothing and has no such bound.
"""

from __future__ import annotations

import base64
import functools
import json
import zlib
from collections.abc import Callable

from .. import __version__
from ..errors import ConfigError
from . import mpi
from .checkpoints import cluster_env
from .definition import definition, priority_class_of, queue_of
from .k8s_values import ENV_NAME
from .podpatch import relative_mounts, runtime_patch
from .procs import Procs, mpi_procs, procs_per_node, resources_per_node
from .redact import redacted
from .restart_runtime import RUNTIME_OF, runtime_ref
from .shipping import plan as workspace_plan
from .spec import JobSpec
from .volumes import WORKDIR

API_VERSION = "trainer.kubeflow.org/v1alpha1"
ANNOTATION = "kale-ext.io/"
OUTPUTS = ANNOTATION + "outputs"
DEFINITION = ANNOTATION + "definition"
SWEEP = ANNOTATION + "sweep"  # a trial's label and annotation: its sweep
#: The runtime's node container's resources at submit (when it states any): what the Trainer
#: counted the processes per node from, for the job's status views (job/procs.py).
RUNTIME_RESOURCES = ANNOTATION + "runtime-resources"
#: An MPI runtime's mlPolicy.mpi.numProcPerNode, as it was at submit (the hostfile's slots).
RUNTIME_MPI_PROCS = ANNOTATION + "runtime-mpi-procs"
STOPPED = ANNOTATION + "stopped"  # a stopped TrainJob's: who stopped it, when (its reason)
MAX_RESTARTS = ANNOTATION + "max-restarts"  # how often its JobSet may start it again
#: Every job's lineage; a resumed job's parent and the step it was resumed from (runs/resume.py)
LINEAGE, PARENT, RESUME_STEP = (ANNOTATION + k for k in ("lineage", "parent", "resume-step"))
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"
#: Linux refuses a single command-line argument longer than this (MAX_ARG_STRLEN): the
#: compressed source is cut into pieces of at most this.
MAX_ARGUMENT = 128 * 1024 - 1
#: Set on a local run's nodes: the local backend installed what the job lacks into this folder
#: (backends/local/installs.py); the bootstrap installs nothing into the user's environment.
LOCAL_PACKAGES_ENV = "KALE_EXT_PACKAGES_DIR"

#: Runs in the training container: install what is missing, write the module, start it.
BOOTSTRAP = """\
import base64, json, os, subprocess, sys, tempfile, zlib
spec = json.loads(sys.argv[1])
if spec.get("home") and os.path.isdir(spec["home"]):  # an MPI runtime's: files go under it
    tempfile.tempdir = spec["home"]
source = "".join(sys.argv[2:])  # one argument, or several for a large source

# what to install, each package as its check says (job/packages.py): "import", only when its
# module cannot be imported; "version", unless the installed distribution is an accepted
# version; "pip", handed to pip (an SDK notebook's list, as the SDK does)
def missing(packages):
    import importlib.util
    try:
        from importlib.metadata import version
        try:
            from packaging.requirements import Requirement
        except ImportError:
            from pip._vendor.packaging.requirements import Requirement
    except ImportError:
        Requirement = None
    out = []
    for p in packages:
        text = p["requirement"]
        try:
            if p["check"] == "import":
                if importlib.util.find_spec(p["module"]) is None:
                    out.append(text)
                continue
            req = Requirement(text)
            if (p["check"] == "pip" or req.url or req.extras
                    or not req.specifier.contains(version(req.name), prereleases=True)):
                out.append(text)
        except Exception:
            out.append(text)
    return out

todo = [] if os.environ.get("KALE_EXT_PACKAGES_DIR") else missing(spec["packages"])
if todo:  # as the Kubeflow SDK installs: per user first, then system-wide
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-warn-script-location"]
    for i, url in enumerate(spec["index_urls"]):
        pip += ["--index-url" if i == 0 else "--extra-index-url", url]
    print("kale_ext: installing " + " ".join(todo), flush=True)
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_BREAK_SYSTEM_PACKAGES="1")
    log = b""
    for extra in (["--user"], []):
        done = subprocess.run(pip + extra + todo, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        log += done.stdout
        if not done.returncode:
            break
    else:
        sys.stdout.write(log.decode("utf-8", "replace"))
        sys.exit("kale_ext: could not install " + " ".join(todo))
ws = spec.get("workspace")
work = os.environ.get("KALE_EXT_WORKDIR") or spec.get("workdir")
if ws:  # the notebook's folder, unpacked as the working directory (and importable)
    import hashlib, io, tarfile
    parts = os.environ.get("KALE_EXT_WORKSPACE_PARTS") or ws["parts"]
    names = sorted(n for n in os.listdir(parts) if n.startswith("part-"))
    data = b"".join(open(os.path.join(parts, n), "rb").read() for n in names)
    if hashlib.sha256(data).hexdigest() != ws["sha256"]:
        sys.exit("kale_ext: the workspace in " + parts + " is not the one submitted")
    work = work or tempfile.mkdtemp(prefix="kale_ext-workspace-")
    os.makedirs(work, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(work, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (work, os.environ.get("PYTHONPATH"))))
if work:
    os.chdir(work)
out = os.environ.get("KALE_EXT_OUTPUT_DIR") or spec.get("outputs")
out = out or tempfile.mkdtemp(prefix="kale_ext-outputs-")  # no volume: goes with the pod
os.makedirs(out, exist_ok=True)
os.environ["KALE_EXT_OUTPUT_DIR"] = out
path = os.path.join(tempfile.mkdtemp(prefix="kale_ext-"), spec["module"])
with open(path, "wb") as f:
    f.write(zlib.decompress(base64.b64decode(source)))
os.environ.setdefault("PYTHONUNBUFFERED", "1")  # live logs
launcher = []
if spec["launcher"] == "torchrun":
    import importlib.util
    if importlib.util.find_spec("torch"):  # --tee 3 prefixes lines with the local rank
        launcher = ["-m", "torch.distributed.run", "--tee", "3"]
    else:  # no torch (a plain Python function): one process per node, torchrun's variables
        pet = {k: os.environ.get("PET_" + k, d) for k, d in (("NNODES", "1"), ("NODE_RANK", "0"),
               ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500"))}
        os.environ.update(RANK=pet["NODE_RANK"], WORLD_SIZE=pet["NNODES"], LOCAL_RANK="0",
                          LOCAL_WORLD_SIZE="1", GROUP_RANK=pet["NODE_RANK"],
                          MASTER_ADDR=pet["MASTER_ADDR"], MASTER_PORT=pet["MASTER_PORT"])
os.execv(sys.executable, [sys.executable, *launcher, path, json.dumps(spec["args"])])
"""


@functools.lru_cache(maxsize=16)
def payload(source: str) -> str:
    """The function's source as the command carries it. Kept for recent sources: a preview
    renders the command twice, and the panel previews one notebook again as options change
    (for the 44 KB source of benchmarks/server.py's notebook: level 9 2.0 ms a time, level 6
    0.49 ms, level 3 0.13 ms and 6% larger than level 6: a preview with every cell changed is
    CPU-bound, and a TrainJob's size is far from its limit)."""
    return base64.b64encode(zlib.compress(source.encode("utf-8"), 3)).decode("ascii")


def install_plan(package) -> dict:
    """What the bootstrap needs of a package (compile/packages.Package): the requirement, how
    to decide whether to install it, and the import that decides it."""
    plan = {"requirement": package.requirement, "check": package.check}
    if package.check == "import":
        plan["module"] = package.module
    return plan


def training_command(spec: JobSpec) -> list[str]:
    """The trainer container's command: the same on the cluster and in local runs. On an MPI
    runtime, mpirun runs it in every process, its files under the MPI user's home (job/mpi.py)."""
    data = payload(spec.job.source)
    plan = json.dumps(
        {
            **({"home": mpi.HOME} if spec.runtime.mpi else {}),
            "module": spec.job.module_filename,
            "packages": [install_plan(p) for p in spec.packages],
            "index_urls": spec.pip_index_urls,
            "launcher": spec.runtime.launcher,
            "args": spec.func_args,
            "workspace": workspace_plan(spec.workspace.packed()) if spec.workspace else None,
            "outputs": spec.outputs.folder(spec.name) if spec.outputs else None,
            "workdir": WORKDIR if relative_mounts(spec) else None,
        },
        sort_keys=True,
    )
    if len(plan.encode()) > MAX_ARGUMENT:
        raise ConfigError(
            "source",
            f"the job's plan (packages, index URLs, arguments) takes {len(plan) // 1024} KiB; "
            f"the command line takes at most {MAX_ARGUMENT // 1024} KiB in one argument",
        )
    pieces = [data[i : i + MAX_ARGUMENT] for i in range(0, len(data), MAX_ARGUMENT)]
    command = ["python", "-c", BOOTSTRAP, plan, *pieces]
    return mpi.launch(command) if spec.runtime.mpi else command


def _ours(command: list[str]) -> bool:
    """Whether ``command`` (after an MPI launch: mpi.unwrap) is a :func:`training_command`."""
    return len(command) >= 5 and command[1:3] == ["-c", BOOTSTRAP]


def source_of(command: list[str]) -> str | None:
    """The compiled module a :func:`training_command` carries (None: not one of ours)."""
    command = mpi.unwrap(command)
    if not _ours(command):
        return None
    try:
        return zlib.decompress(base64.b64decode("".join(command[4:]))).decode("utf-8")
    except (ValueError, zlib.error, UnicodeDecodeError, TypeError):
        return None


def launcher_of(command: list[str] | None) -> str | None:
    """How a :func:`training_command` starts the function (torchrun, python); None: not one
    of ours."""
    command = mpi.unwrap(command or [])
    if not _ours(command):
        return None
    try:
        launcher = json.loads(command[3]).get("launcher")
    except (ValueError, AttributeError):
        return None
    return launcher if isinstance(launcher, str) else None


def trainjob_procs(obj: dict) -> Procs:
    """The processes per node of a TrainJob (Kubernetes JSON form) as the Trainer starts them
    (job/procs.py), from the runtime's facts recorded at submit (RUNTIME_RESOURCES, and an MPI
    runtime's slots: RUNTIME_MPI_PROCS); a TrainJob not made by kale_ext is taken as torch's (as
    MPI's when mpirun starts it), its runtime's facts as unknown."""
    notes = (obj.get("metadata") or {}).get("annotations") or {}
    trainer = (obj.get("spec") or {}).get("trainer") or {}
    try:
        runtime_resources, ours = json.loads(notes.get(RUNTIME_RESOURCES, "null")), True
    except ValueError:
        runtime_resources, ours = None, False
    runtime_resources = runtime_resources if isinstance(runtime_resources, dict) else None
    ours = ours and ANNOTATION + "version" in notes
    asked = trainer.get("numProcPerNode")
    asked = asked if isinstance(asked, int) and not isinstance(asked, bool) else None
    command, resources = trainer.get("command"), trainer.get("resourcesPerNode")
    if mpi.launched(command):
        text = notes.get(RUNTIME_MPI_PROCS, "")
        slots = int(text) if text.isdigit() and int(text) > 0 else None
        return mpi_procs(slots, asked, resources, runtime_resources)
    launcher = launcher_of(command) or "torchrun"
    return procs_per_node(launcher, asked, resources, runtime_resources, runtime_known=ours)


def provenance(spec: JobSpec, notebook_path: str | None = None) -> dict[str, str]:
    job = spec.job
    out = {
        ANNOTATION + "notebook": notebook_path or job.notebook,
        ANNOTATION + "notebook-sha256": job.notebook_sha256,
        ANNOTATION + "source-sha256": job.source_sha256,
        ANNOTATION + "version": __version__,
        ANNOTATION + "function": job.function_name,
        # what a rerun reuses; literal env values left out: anyone who lists jobs reads this
        ANNOTATION + "options": json.dumps(redacted(spec.options), sort_keys=True),
        # what `kale-ext diff` compares
        DEFINITION: json.dumps(definition(spec), sort_keys=True, default=str),
    }
    out[LINEAGE] = spec.lineage
    for key, option in ((PARENT, "parent"), (RESUME_STEP, "resume_step")):
        out.update({key: str(spec.options[option])} if option in spec.options else {})
    if spec.outputs is not None:  # where KALE_EXT_OUTPUT_DIR lasts
        out[OUTPUTS] = f"{spec.outputs}/{spec.name}"
    if spec.runtime.resources is not None:
        out[RUNTIME_RESOURCES] = json.dumps(spec.runtime.resources, sort_keys=True)
    if spec.max_restarts:  # it runs on a TrainingRuntime of its own (job/restarts.py)
        out[RUNTIME_OF] = f"{spec.runtime.kind}/{spec.runtime.name}"
        out[MAX_RESTARTS] = str(spec.max_restarts)
    if spec.runtime.mpi:
        out[RUNTIME_MPI_PROCS] = str(spec.runtime.mpi_procs_per_node)
    if SWEEP in spec.config.labels:  # a sweep's trial: every backend's record names the sweep
        out[SWEEP] = spec.config.labels[SWEEP]
    policy = spec.config.run_policy
    if policy is not None:
        if policy.ttl_seconds_after_finished is not None:
            out[ANNOTATION + "ttl-seconds-after-finished"] = str(policy.ttl_seconds_after_finished)
        if policy.clean_pod_policy is not None:
            out[ANNOTATION + "clean-pod-policy"] = policy.clean_pod_policy
    return out


def expand_env_from(spec: JobSpec, keys_of: Callable[[str, str], list[str]] | None) -> list[dict]:
    """env_from as env entries: TrainJob has no envFrom, so each key of the referenced Secret or
    ConfigMap becomes one entry with a valueFrom reference (keys are read, values never).

    ``keys_of(kind, name)`` lists the keys (KeyError when the object does not exist).
    """
    if not spec.config.env_from:
        return []
    if keys_of is None:
        raise ConfigError("env_from", "needs a cluster to read the Secret or ConfigMap keys from")
    explicit = {e.name for e in spec.config.env}
    out: dict[str, dict] = {}
    for i, source in enumerate(spec.config.env_from):
        secret = source.secret_ref is not None
        ref = source.secret_ref if secret else source.config_map_ref
        kind = "Secret" if secret else "ConfigMap"
        try:
            keys = keys_of(kind, ref.name)
        except KeyError:
            if ref.optional:
                continue
            raise ConfigError(f"env_from[{i}]", f"{kind} {ref.name!r} does not exist") from None
        for key in sorted(keys):
            name = (source.prefix or "") + key
            if name in explicit or not ENV_NAME.match(name):
                continue  # env wins over envFrom; invalid names are skipped, as Kubernetes does
            selector = {"name": ref.name, "key": key}
            if ref.optional is not None:
                selector["optional"] = ref.optional
            ref_key = "secretKeyRef" if secret else "configMapKeyRef"
            out[name] = {"name": name, "valueFrom": {ref_key: selector}}
    return list(out.values())


def build_trainjob(
    spec: JobSpec,
    notebook_path: str | None = None,
    env_from_keys: Callable[[str, str], list[str]] | None = None,
):
    """The TrainJob, built as the Kubeflow SDK's model ``TrainerV1alpha1TrainJob`` would be
    (job/plain_models.py: with its fields, as its to_dict gives them)."""
    from .k8s_objects import k8s_dict
    from .plain_models import MODELS as m  # the Trainer API's models' dicts, without pydantic

    config = spec.config
    env = [k8s_dict(e) for e in config.env] + expand_env_from(spec, env_from_keys)
    env += cluster_env(spec)  # only for a job that uses checkpoints (job/checkpoints.py)
    resources = resources_per_node(config.requests, config.limits)
    trainer = m.TrainerV1alpha1Trainer(
        command=training_command(spec),
        numNodes=spec.nodes,
        # as the Kubeflow SDK: only when asked, else the runtime chooses (job/procs.py)
        numProcPerNode=spec.procs.count if spec.procs.asked else None,
        image=spec.image,
        env=[m.IoK8sApiCoreV1EnvVar.from_dict(e) for e in env] or None,
        resourcesPerNode=m.IoK8sApiCoreV1ResourceRequirements.from_dict(resources)
        if resources
        else None,
    )
    labels = dict(config.labels)
    policy = config.run_policy
    if queue := queue_of(config):
        labels[KUEUE_QUEUE] = queue
    if priority := priority_class_of(config):
        labels[KUEUE_PRIORITY] = priority
    annotations = {**config.annotations, **provenance(spec, notebook_path)}

    ref_name, ref_kind = runtime_ref(spec)  # a job with restarts: its own (job/restarts.py)
    patch = runtime_patch(spec)
    patches = [*spec.runtime_patches, *([patch] if patch else [])]
    initializer = _initializer(spec)
    return m.TrainerV1alpha1TrainJob(
        apiVersion=API_VERSION,
        kind="TrainJob",
        metadata=m.IoK8sApimachineryPkgApisMetaV1ObjectMeta(
            name=spec.name, labels=labels or None, annotations=annotations
        ),
        spec=m.TrainerV1alpha1TrainJobSpec(
            runtimeRef=m.TrainerV1alpha1RuntimeRef(
                name=ref_name, kind=ref_kind, apiGroup="trainer.kubeflow.org"
            ),
            trainer=trainer,
            runtimePatches=[m.TrainerV1alpha1RuntimePatch.from_dict(p) for p in patches] or None,
            initializer=m.TrainerV1alpha1Initializer.from_dict(initializer)
            if initializer
            else None,
            suspend=policy.suspend if policy and policy.suspend is not None else None,
            activeDeadlineSeconds=policy.active_deadline_seconds if policy else None,
        ),
    )


def _initializer(spec: JobSpec) -> dict | None:
    """The train() call's initializer (as the SDK renders it), its storage URIs replaced by
    --dataset-uri and --model-uri."""
    out = {k: dict(v) for k, v in (spec.initializer or {}).items() if v}
    for part, uri in (("dataset", spec.dataset_uri), ("model", spec.model_uri)):
        if uri:
            out[part] = {**out.get(part, {}), "storageUri": uri}
    return out or None


def trainjob_dict(spec: JobSpec, notebook_path: str | None = None, env_from_keys=None) -> dict:
    """The TrainJob in Kubernetes JSON form (camelCase, no empty fields)."""
    # to_dict, not model_dump: pydantic dumps the Quantity oneOf wrapper as an object
    return build_trainjob(spec, notebook_path, env_from_keys).to_dict()


def to_yaml(obj: dict) -> str:
    import yaml

    return yaml.dump(obj, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=100)


@functools.cache
def _dumper() -> type:
    """The YAML dumper, made once (a class made per call cost each preview its making, and the
    cyclic collector its freeing)."""
    import yaml

    class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # the C one is 17× faster
        pass

    def _str(dumper, text):  # multi-line strings (the bootstrap) as readable blocks
        style = "|" if "\n" in text else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    _Dumper.add_representer(str, _str)
    return _Dumper
