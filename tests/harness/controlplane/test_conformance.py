"""The emulator answers to the real thing: the same TrainJobs, built by kale_ext, go to the
emulated cluster (``tests/harness/cluster``) and to the real control plane (kube-apiserver,
kube-controller-manager, kube-scheduler, JobSet v0.12.0, Kubeflow Trainer v2.3.0), and what
matters of what each makes of them is compared, field by field: ``FIELDS`` is the list (what is
compared, and what is normalised because it must differ), ``CASES`` the TrainJobs: the
runtimes, GPUs, kale_ext's runtime patches, env and volumes, initializers (JobSet's dependsOn),
and a job's life past Complete: a failure, a restart (kale_ext's ``max_restarts``) and a
suspension (kale_ext's stop). The cases run at once on both.

Where the emulator is knowingly not conformant (it says so in its docstring), the comparison is
``KNOWN`` below: a strict xfail, so the day the emulator does conform the test says to drop it.
MPI runtimes are not compared at all: the emulator does not emulate the MPI plugin (the
hostfile ConfigMap, the SSH Secret, ``OMPI_*``), so MPI is tested on the real control plane
only (``test_kale_ext.py``), never on the emulator.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.conftest import notebook

NAMESPACE = "default"
GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
JOBSET = "jobset.sigs.k8s.io/"
INDEX = "batch.kubernetes.io/job-completion-index"
SETTINGS, CREDS = "conformance-settings", "conformance-creds"  # the volumes case mounts them
#: A watch's server-side timeout, longer than a run: the emulated API server's watch from a
#: resourceVersion sends the objects as they are now, not each change since (its docstring), so
#: a watch started again could miss a phase.
WATCH_SECONDS = 600
SETTLE_TIMEOUT = 180.0  # seconds for every case to settle on both (a loaded 2-core machine)

NOTEBOOK = notebook(("import os", ["imports"]), "print('node', os.environ.get('RANK'), flush=True)")
#: Node 1 fails (exit 3) on the attempts named; node 0 waits meanwhile (so that it is still
#: running, not finished, when the failure ends its attempt: the same on both, whatever the
#: timing). KALE_EXT_RESTART is the JobSet's restart attempt (kale_ext's max_restarts).
FAILING = """import os, time
attempt = os.environ.get("KALE_EXT_RESTART", "0")
print("node", os.environ.get("RANK"), "attempt", attempt, flush=True)
if attempt in FAIL_ON:
    if os.environ.get("RANK") == "1":
        raise SystemExit(3)
    time.sleep(300)"""
UP = "kale-ext-conformance: up"
SLEEPING = f"import time\nprint({UP!r}, flush=True)\ntime.sleep(300)"


@dataclass(frozen=True)
class Case:
    """A TrainJob kale_ext builds from NOTEBOOK with ``options``. ``built``: made with kale_ext's
    builder (``trainjob_dict``) and created as it is, without kale_ext's submit, whose check
    that a node has room refuses GPUs neither cluster has (the pods must still be made)."""

    id: str
    options: dict
    built: bool = False
    code: str | None = None  # the notebook's code cell, else NOTEBOOK's
    suspend: bool = False  # suspended (spec.suspend) once its pods run

    def notebook(self) -> dict:
        if self.code is None:
            return NOTEBOOK
        return notebook(("import os", ["imports"]), self.code)


#: A ClusterTrainingRuntime made on both: torchtune-llama3.2-1b as the emulator has it, its
#: initializers given a command (their images' entrypoints are nothing a process kubelet runs,
#: and a runtime patch cannot set a command), so that they run and Complete on both.
RUNTIME, RUNTIME_OF = "conformance-torchtune", "torchtune-llama3.2-1b"
INITIALIZERS = {"dataset-initializer": "print('dataset')", "model-initializer": "print('model')"}


def runtime_manifest() -> dict:
    from tests.harness.cluster.cluster import released, with_storage
    from tests.harness.runtimes import runtime_manifest

    manifest = released(with_storage(runtime_manifest(RUNTIME_OF)))
    manifest["metadata"] = {**manifest["metadata"], "name": RUNTIME}
    for step in manifest["spec"]["template"]["spec"]["replicatedJobs"]:
        for container in step["template"]["spec"]["template"]["spec"]["containers"]:
            if container["name"] in INITIALIZERS:
                container["command"] = ["python", "-c", INITIALIZERS[container["name"]]]
    return manifest


CASES = (
    Case("torch-cpu", {"nodes": 2}),
    Case("torch-gpu", {"nodes": 2, "gpu": 1}, built=True),  # unschedulable on both
    Case("xgboost", {"nodes": 2, "runtime": "xgboost-distributed"}),
    Case("jax", {"nodes": 2, "runtime": "jax-distributed"}),
    # kale_ext's own runtime patches (the workspace's ConfigMaps, the volumes), env, resources
    Case(
        "patches-env-volumes",
        {
            "nodes": 1,
            "env": {"LR": "0.1", "MODE": "fast"},
            "cpu": "1",
            "memory": "1Gi",
            "volumes": [f"configmap:{SETTINGS}:/etc/settings", f"secret:{CREDS}:/etc/creds"],
        },
    ),
    # Trainer v2.3.0's only released runtimes with initializers are torchtune's (2 GPUs a node):
    # the initializers run (RUNTIME: a command of their own) and Complete, then JobSet makes
    # the trainer's pods (dependsOn), which no node can take
    Case(
        "initializers",
        {"runtime": RUNTIME, "dataset_uri": "hf://kale/data", "no_workspace": True},
        built=True,
    ),
    # a job's life: node 1 fails on every attempt (the one restart too): Failed
    Case("failure", {"nodes": 2, "max_restarts": 1}, code=FAILING.replace("FAIL_ON", "'01'")),
    # node 1 fails on the first attempt only: the JobSet starts every node again, then Complete
    Case("restart", {"nodes": 2, "max_restarts": 1}, code=FAILING.replace("FAIL_ON", "'0'")),
    # kale_ext's stop on a cluster (spec.suspend) once its pods run: they go, Suspended
    Case("suspend", {"nodes": 2}, code=SLEEPING, suspend=True),
)


# ----- what is compared ------------------------------------------------------------------------

UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-job)?$")
STATUS_HOST = re.compile(r"^https://[^/]+/")  # the Trainer's status server, wherever it listens
SERVICE_ACCOUNT_VOLUME = "kube-api-access-"  # the ServiceAccount admission plugin's
KUEUE_MANAGER = "kueue.x-k8s.io/manager"


def _node(pod: dict) -> dict:
    """The trainer's container (``node``), else the pod's first (an initializer's)."""
    containers = pod["spec"]["containers"]
    return next((c for c in containers if c["name"] == "node"), containers[0])


def _env(pod: dict) -> list:
    out = []
    for e in _node(pod).get("env") or []:
        value = e.get("value", e.get("valueFrom"))
        if e["name"] == "KUBEFLOW_TRAINER_SERVER_URL":
            value = STATUS_HOST.sub("https://<status-server>/", value)
        out.append((e["name"], value))
    return sorted(out, key=lambda e: e[0])  # a name twice stays twice


def _uids(mapping: dict | None) -> dict:
    return {k: "<uid>" if UID.match(str(v)) else v for k, v in (mapping or {}).items()}


def _volumes(pod: dict) -> list:
    return [v for v in pod["spec"].get("volumes") or []
            if not v["name"].startswith(SERVICE_ACCOUNT_VOLUME)]  # fmt: skip


def _mounts(pod: dict) -> list:
    return [m for m in _node(pod).get("volumeMounts") or []
            if not m["name"].startswith(SERVICE_ACCOUNT_VOLUME)]  # fmt: skip


def _scheduled(pod: dict) -> tuple | None:
    found = [c for c in (pod.get("status") or {}).get("conditions") or []
             if c["type"] == "PodScheduled"]  # fmt: skip
    return (found[0]["status"], found[0].get("reason")) if found else None


def _spec(tj: dict) -> dict:
    spec = {k: v for k, v in tj["spec"].items() if k != "trainer"}
    patches = [{**p, "time": "<time>" if p.get("time") else None}
               for p in spec.pop("runtimePatches", []) if p.get("manager") != KUEUE_MANAGER]  # fmt: skip
    return {**spec, **({"runtimePatches": patches} if patches else {})}


@dataclass(frozen=True)
class Field:
    """One thing compared. ``of_pod``: taken from each pod (in the order of ``pod_key``);
    else ``of_job`` from the case's Observed. ``normalised``: what is made equal, and why."""

    name: str
    normalised: str
    of_pod: Callable[[dict], object] | None = None
    of_job: Callable[[Observed], object] | None = None


def pod_key(pod: dict) -> tuple:
    """A pod as JobSet names it: its replicated job, the Job's index, the completion index."""
    labels = pod["metadata"].get("labels") or {}
    return (labels.get(JOBSET + "replicatedjob-name"), labels.get(JOBSET + "job-index"),
            labels.get(INDEX))  # fmt: skip


FIELDS: tuple[Field, ...] = (
    Field(
        "pods",
        "pod names' random suffixes (pods are keyed by replicated job, job index and "
        "completion index)",
        of_job=lambda o: [pod_key(p) for p in o.pods],
    ),
    Field(
        "env",
        "KUBEFLOW_TRAINER_SERVER_URL's host:port (where each status server listens); "
        "the order, by name: the real Trainer's varies from job to job (its plugins' order)",
        of_pod=_env,
    ),
    Field("command", "nothing", of_pod=lambda p: _node(p).get("command")),
    Field("args", "nothing", of_pod=lambda p: _node(p).get("args")),
    Field("image", "nothing", of_pod=lambda p: _node(p).get("image")),
    Field("resources", "nothing", of_pod=lambda p: _node(p).get("resources")),
    Field("ports", "nothing", of_pod=lambda p: _node(p).get("ports")),
    Field(
        "volumes",
        "the ServiceAccount admission plugin's kube-api-access-* volume dropped: "
        "the emulator runs no ServiceAccount admission (not conformant: see its docstring)",
        of_pod=_volumes,
    ),
    Field("volumeMounts", "as volumes: the kube-api-access-* mount dropped", of_pod=_mounts),
    Field(
        "labels",
        "uids (the Job's, the JobSet's) as <uid>",
        of_pod=lambda p: _uids(p["metadata"].get("labels")),
    ),
    Field("annotations", "uids as <uid>", of_pod=lambda p: _uids(p["metadata"].get("annotations"))),
    Field(
        "hostname",
        "nothing",
        of_pod=lambda p: (p["spec"].get("hostname"), p["spec"].get("subdomain")),
    ),
    Field("restartPolicy", "nothing", of_pod=lambda p: p["spec"].get("restartPolicy")),
    Field("serviceAccountName", "nothing", of_pod=lambda p: p["spec"].get("serviceAccountName")),
    Field("nodeSelector", "nothing", of_pod=lambda p: p["spec"].get("nodeSelector")),
    Field(
        "scheduled",
        "the scheduler's message (each says it its way); its node's name",
        of_pod=_scheduled,
    ),
    Field(
        "every pod",
        "names and timestamps: each pod the job ever had (deleted ones too: a restart's, a "
        "failed Job's), by its pod_key and restart attempt, in the order made: its distinct "
        "phases, and its container's terminations (exitCode, reason) in order up to the first "
        "failure (a restart in place after it races the pod's deletion)",
        of_job=lambda o: o.history,
    ),
    Field(
        "pod phases",
        "timestamps: the distinct phases in the order each pod went through them",
        of_job=lambda o: [o.phases.get(p["metadata"]["name"]) for p in o.pods],
    ),
    Field(
        "trainjob conditions",
        "timestamps: the distinct lists of (type, status, reason, "
        "message) in the order the TrainJob went through them",
        of_job=lambda o: o.conditions,
    ),
    Field(
        "jobsStatus",
        "the final one, by replicated job's name: JobSet lists them in its map's order (random)",
        of_job=lambda o: sorted(
            (o.trainjob.get("status") or {}).get("jobsStatus") or [], key=lambda s: s["name"]
        ),  # fmt: skip
    ),
    Field(
        "spec",
        "spec.trainer apart (its own row); a runtime patch's time as <time>; Kueue's "
        f"runtime patch dropped (manager {KUEUE_MANAGER}: the real control plane runs Kueue, "
        "whose webhook adds it to every TrainJob)",
        of_job=lambda o: _spec(o.trainjob),
    ),
    Field(
        "trainer",
        "nothing (spec.trainer as stored)",
        of_job=lambda o: o.trainjob["spec"].get("trainer"),
    ),
)

#: (case, field) → why the emulator differs there: the behaviours it is not conformant for
#: (tests/harness/cluster/__init__.py says so); strict xfails.
KNOWN: dict[tuple[str, str], str] = {}
#: Pod fields are not compared where the pods differ (KNOWN "pods").
POD_FIELDS_SKIPPED: set[str] = set()


# ----- running the cases on both -------------------------------------------------------------


@dataclass
class Observed:
    trainjob: dict
    pods: list[dict]  # by pod_key
    phases: dict[str, list[str]] = field(default_factory=dict)  # pod name → its phases
    conditions: list[list[tuple]] = field(default_factory=list)
    history: list[tuple] = field(default_factory=list)  # Recorder.history


def _to_first_failure(ended: dict) -> list:
    """A pod's terminations up to its first failure: what follows races the pod's deletion (a
    kubelet restarts a failed container in place while the Job controller deletes its pod)."""
    out = []
    for code, reason in ended.values():
        out.append((code, reason))
        if code:
            break
    return out


class Recorder:
    """Watches the namespace's TrainJobs and pods through the kubernetes client and keeps what
    each went through: a TrainJob's condition lists, a pod's phases (each change once)."""

    def __init__(self, kubeconfig):
        from kubernetes import client, config

        self.kubeconfig = kubeconfig
        self.api = config.new_client_from_config(config_file=str(kubeconfig))
        self.core, self.custom = client.CoreV1Api(self.api), client.CustomObjectsApi(self.api)
        self.conditions: dict[str, list[list[tuple]]] = {}
        self.phases: dict[str, list[str]] = {}
        self.made: dict[str, list[tuple[str, tuple]]] = {}  # TrainJob → (pod, its key), as seen
        self.ended: dict[str, dict[str, tuple]] = {}  # pod → container id → (exitCode, reason)
        self.watches: list = []
        self.stopped = False
        self.error: Exception | None = None  # what ended a watch too early
        list_trainjobs = self.custom.list_namespaced_custom_object
        for target, args in ((self._trainjob, (list_trainjobs, GROUP, VERSION, NAMESPACE,
                                                "trainjobs")),
                             (self._pod, (self.core.list_namespaced_pod, NAMESPACE))):  # fmt: skip
            # from the version of a list made now: nothing made after this call is missed
            listed = self.api.sanitize_for_serialization(args[0](*args[1:]))
            version = listed["metadata"]["resourceVersion"]
            threading.Thread(target=self._watch, args=(target, args, version), daemon=True).start()

    def _watch(self, record, args, version: str | None) -> None:
        """Each change once, from ``version`` on (a watch that ends starts again from the last
        version seen; a version too old lists again)."""
        from kubernetes import watch
        from kubernetes.client.exceptions import ApiException

        while not self.stopped:
            w = watch.Watch()
            self.watches.append(w)
            try:
                kwargs = {"resource_version": version} if version else {}
                for event in w.stream(*args, timeout_seconds=WATCH_SECONDS, **kwargs):
                    obj = event["object"]
                    if not isinstance(obj, dict):
                        obj = self.api.sanitize_for_serialization(obj)
                    version = obj["metadata"].get("resourceVersion", version)
                    record(obj)
            except ApiException as e:
                if e.status != 410:  # else: the version is too old; list again
                    self.error = e
                    return
                version = None
            except Exception as e:  # the cluster went away at the end; else observe() says
                if not self.stopped:
                    self.error = e
                return

    def _trainjob(self, tj: dict) -> None:
        found = [(c["type"], c["status"], c.get("reason"), c.get("message"))
                 for c in (tj.get("status") or {}).get("conditions") or []]  # fmt: skip
        seen = self.conditions.setdefault(tj["metadata"]["name"], [[]])
        if seen[-1] != found:
            seen.append(found)

    def _pod(self, pod: dict) -> None:
        name, labels = pod["metadata"]["name"], pod["metadata"].get("labels") or {}
        status = pod.get("status") or {}
        phase = status.get("phase")
        seen = self.phases.setdefault(name, [])
        if phase and (not seen or seen[-1] != phase):
            seen.append(phase)
        made = self.made.setdefault(labels.get(JOBSET + "jobset-name", ""), [])
        if name not in (n for n, _ in made):
            made.append((name, (*pod_key(pod), labels.get(JOBSET + "restart-attempt"))))
        ended = self.ended.setdefault(name, {})
        for c in status.get("containerStatuses") or []:
            for state in (c.get("lastState") or {}, c.get("state") or {}):
                t = state.get("terminated")
                if t:
                    ended.setdefault(t.get("containerID") or t.get("finishedAt"),
                                     (t.get("exitCode"), t.get("reason")))  # fmt: skip

    def history(self, name: str) -> list[tuple]:
        """Each pod TrainJob ``name`` ever had: (its key and restart attempt, its phases, its
        terminations), by key, each key's pods in the order made."""
        made = self.made.get(name, [])
        out = [(key, self.phases.get(pod, []), _to_first_failure(self.ended.get(pod, {})))
               for pod, key in made]  # fmt: skip
        return sorted(out, key=lambda e: tuple(str(k) for k in e[0]))  # stable: order made

    def pods(self, name: str) -> list[dict]:
        listed = self.core.list_namespaced_pod(NAMESPACE,
                                               label_selector=f"{JOBSET}jobset-name={name}")  # fmt: skip
        return sorted((self.api.sanitize_for_serialization(p) for p in listed.items), key=pod_key)

    def trainjob(self, name: str) -> dict:
        return self.custom.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "trainjobs",
                                                        name)  # fmt: skip

    def stop(self) -> None:
        """Its watches end at the next event they get."""
        self.stopped = True
        for w in self.watches:
            w.stop()


def settled(tj: dict, pods: list[dict]) -> bool:
    """Finished; or suspended and its pods gone; or its trainer's pods made and none can be
    scheduled (no GPU), the other pods (initializers') succeeded and their Jobs counted so."""
    status = tj.get("status") or {}
    true = {c["type"] for c in status.get("conditions") or [] if c["status"] == "True"}
    if "Suspended" in true:
        return not pods
    if true & {"Complete", "Failed"}:
        return all((p.get("status") or {}).get("phase") in ("Succeeded", "Failed") for p in pods)
    stuck = [p for p in pods if _scheduled(p) == ("False", "Unschedulable")]
    rest = [pod_key(p)[0] for p in pods if p not in stuck]
    jobs = {s["name"]: s for s in status.get("jobsStatus") or []}
    return bool(stuck) and all((jobs.get(job) or {}).get("succeeded") for job in rest)


def _prepare(core, custom) -> None:
    """What the volumes case mounts; the initializers case's runtime."""
    from kubernetes import client

    custom.create_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes",
                                        runtime_manifest())  # fmt: skip
    core.create_namespaced_config_map(NAMESPACE, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=SETTINGS), data={"lr": "0.1"}))  # fmt: skip
    core.create_namespaced_secret(NAMESPACE, client.V1Secret(
        metadata=client.V1ObjectMeta(name=CREDS), string_data={"token": "s3cret"}))  # fmt: skip


def submit_cases(kubeconfig, folder, prefix: str) -> dict[str, str]:
    """Every case to one cluster, as kale_ext submits it (or builds it): case → TrainJob name."""
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.submit import resolve, submit
    from kale_ext.job.trainjob import trainjob_dict

    k8s = KubernetesBackend(namespace=NAMESPACE, config_file=str(kubeconfig))
    names = {}
    for case in CASES:
        name = f"{prefix}-{case.id}"
        options = {**case.options, "name": name}
        path = folder / case.id / "nb.ipynb"
        if case.built:
            spec = resolve(k8s, path, {**options, "no_workspace": True}).spec
            k8s.custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "trainjobs",
                                                       trainjob_dict(spec),
                                                       field_validation="Strict")  # fmt: skip
        else:
            submit(k8s, path, options)
        names[case.id] = name
    return names


def suspend_running(recorder: Recorder, names: dict[str, str], done: set[str]) -> None:
    """The suspend cases whose pods all run their code (their logs say ``UP``: torchrun has
    started its workers, so SIGTERM ends it as it ends a worker, not before): suspended as
    kale_ext's stop does (spec.suspend)."""
    from kale_ext.backends.kubernetes import KubernetesBackend

    for case in CASES:
        if not case.suspend or case.id in done:
            continue
        pods = recorder.pods(names[case.id])
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        if pods and len(running) == len(pods) == case.options["nodes"] and all(
            UP in recorder.core.read_namespaced_pod_log(p["metadata"]["name"], NAMESPACE,
                                                        container="node") for p in pods):  # fmt: skip
            backend = KubernetesBackend(namespace=NAMESPACE, config_file=str(recorder.kubeconfig))
            backend.stop(names[case.id], "conformance: stopped while it runs")
            done.add(case.id)


def observe(recorder: Recorder, names: dict[str, str], what: str) -> dict[str, Observed]:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    out: dict[str, Observed] = {}
    suspended: set[str] = set()
    for case, name in names.items():
        while True:
            assert recorder.error is None, f"{what}: a watch ended: {recorder.error!r}"
            suspend_running(recorder, names, suspended)
            tj, pods = recorder.trainjob(name), recorder.pods(name)
            if settled(tj, pods):
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{what}: {case} did not settle: {json.dumps(tj.get('status'))}"
                )
            time.sleep(0.3)
        out[case] = Observed(
            tj,
            pods,
            {
                p["metadata"]["name"]: list(recorder.phases.get(p["metadata"]["name"], []))
                for p in pods
            },
            list(recorder.conditions.get(name, [[]])),
            recorder.history(name),
        )
    return out


@pytest.fixture(scope="module")
def observed(control_plane, tmp_path_factory):
    """Each case on the emulated cluster and on the real control plane: {"emulated": {case:
    Observed}, "real": {...}}. Same TrainJob names on both (each cluster its own)."""
    pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (the test extra)")
    from tests.harness.cluster import EmulatedCluster

    folder = tmp_path_factory.mktemp("conformance")
    for case in CASES:  # each case its own notebook folder, its workspace
        (folder / case.id).mkdir()
        (folder / case.id / "nb.ipynb").write_text(json.dumps(case.notebook()))
        (folder / case.id / "notes.txt").write_text("shipped with the workspace")
    with EmulatedCluster(folder / "emulated", namespace=NAMESPACE, trainer_status=True) as emu:
        clusters = {"emulated": emu.kubeconfig, "real": control_plane.kubeconfig}
        recorders = {k: Recorder(v) for k, v in clusters.items()}
        try:
            names = {}
            for where, kubeconfig in clusters.items():
                _prepare(recorders[where].core, recorders[where].custom)
                names[where] = submit_cases(kubeconfig, folder, "conformance")
            yield {where: observe(recorders[where], names[where], where) for where in clusters}
        finally:
            for where, recorder in recorders.items():
                recorder.stop()  # its watches end at the next change: the deletes below
                for name in names.get(where, {}).values():  # the TrainJob at once, the rest
                    recorder.custom.delete_namespaced_custom_object(  # after it (the collector)
                        GROUP, VERSION, NAMESPACE, "trainjobs", name,
                        propagation_policy="Background")  # fmt: skip
            real = recorders["real"]  # the session's control plane goes on
            # gone before the next module: in a foreground delete a restart case's own
            # TrainingRuntime (owned by it) went first, the TrainJob stayed (in a CI run, for
            # minutes), and the Kubeflow SDK's list_jobs then failed for the whole namespace
            # (it reads every job's runtime)
            deadline = time.monotonic() + SETTLE_TIMEOUT
            left = set(names.get("real", {}).values())
            while left and time.monotonic() < deadline:
                listed = real.custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE,
                                                                   "trainjobs")  # fmt: skip
                left &= {t["metadata"]["name"] for t in listed["items"]}
                time.sleep(0.5)
            assert not left, f"TrainJobs not gone after {SETTLE_TIMEOUT:.0f} s: {sorted(left)}"
            for kind in ("config_map", "secret"):
                getattr(real.core, f"delete_namespaced_{kind}")(
                    SETTINGS if kind == "config_map" else CREDS, NAMESPACE
                )
            real.custom.delete_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes",
                                                     RUNTIME)  # fmt: skip
            for recorder in recorders.values():
                recorder.api.close()


def _params():
    out = []
    for case in CASES:
        for f in FIELDS:
            if f.of_pod is not None and case.id in POD_FIELDS_SKIPPED:
                continue
            marks = ()
            if (case.id, f.name) in KNOWN:
                marks = pytest.mark.xfail(strict=True, reason=KNOWN[(case.id, f.name)])
            out.append(pytest.param(case.id, f, id=f"{case.id}-{f.name}", marks=marks))
    return out


@pytest.mark.parametrize("case, compared", _params())
def test_the_emulator_makes_what_the_real_control_plane_makes(observed, case, compared: Field):
    emulated, real = observed["emulated"][case], observed["real"][case]
    if compared.of_job is not None:
        assert compared.of_job(emulated) == compared.of_job(real), compared.normalised
        return
    assert len(emulated.pods) == len(real.pods)
    for mine, theirs in zip(emulated.pods, real.pods, strict=True):
        assert compared.of_pod(mine) == compared.of_pod(theirs), (
            f"pod {pod_key(theirs)}; normalised: {compared.normalised}"
        )


def test_every_case_is_compared_on_every_field_that_applies():
    """The table is what runs: each (case, field) once, the known differences among them."""
    ids = [p.id for p in _params()]
    assert len(ids) == len(set(ids))
    assert {f"{c}-{f}" for c, f in KNOWN} <= set(ids)
