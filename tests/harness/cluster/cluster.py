"""``EmulatedCluster``: the emulated API server, Trainer and kubelet on their own event loop in
a thread, served over HTTP on a loopback port the OS picks, with a kubeconfig that points at it.

It starts with the namespaces ``default`` and the one asked for (the kubeconfig's), nodes with
the resources asked for, and the official ClusterTrainingRuntimes built from the facts in
``tests/harness/runtimes.py``. The test's thread reads and changes it through the methods below
(each runs on the cluster's loop), and injects faults through ``faults``.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp.web
import yaml

from tests.harness.cluster.admission import Admission
from tests.harness.cluster.apiserver import ApiServer
from tests.harness.cluster.faults import Faults
from tests.harness.cluster.kubelet import Kubelet
from tests.harness.cluster.kueue import Kueue
from tests.harness.cluster.podlogs import PodLogs
from tests.harness.cluster.trainer import Trainer
from tests.harness.cluster.trainer_status import StatusServer, Tokens
from tests.harness.runtimes import RUNTIMES, runtime_manifest
from tests.harness.tls import make_certificates

MAX_BODY = 3 << 20  # the API server takes requests of up to 3 MiB (a 1 MiB ConfigMap, base64)
NODE = {"cpu": "8", "memory": "32Gi", "pods": "110"}
TRAINER_IMAGES, TRAINER_RELEASE = "ghcr.io/kubeflow/trainer/", "v2.3.0"


def node_manifest(index: int, allocatable: dict, labels: dict | None = None) -> dict:
    name = f"emulated-node-{index}"
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "kubernetes.io/os": "linux", **(labels or {})}},
        "spec": {},
        "status": {"capacity": dict(allocatable), "allocatable": dict(allocatable),
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def released(manifest: dict) -> dict:
    """A runtime as the Trainer's release overlay installs it: its own images
    (``ghcr.io/kubeflow/trainer/...``) pinned to the release, as the real control plane's are."""
    for step in manifest["spec"]["template"]["spec"]["replicatedJobs"]:
        for container in step["template"]["spec"]["template"]["spec"]["containers"]:
            image = container.get("image") or ""
            if image.startswith(TRAINER_IMAGES) and ":" not in image:
                container["image"] = f"{image}:{TRAINER_RELEASE}"
    return manifest


#: What the runtime facts (kale_ext/job/published_runtimes.py) leave out of the torchtune
#: runtimes and their jobs need: the initializers' default STORAGE_URI (the model's per runtime)
#: and the claim ``initializer`` at /workspace on every job, from the JobSet's
#: volumeClaimPolicies (Trainer v2.3.0's manifests/base/runtimes/torchtune).
STORAGE_URI = {
    "dataset-initializer": "hf://tatsu-lab/alpaca",
    "torchtune-llama3.2-1b": "hf://meta-llama/Llama-3.2-1B-Instruct",
    "torchtune-llama3.2-3b": "hf://meta-llama/Llama-3.2-3B-Instruct",
    "torchtune-qwen2.5-1.5b": "hf://Qwen/Qwen2.5-1.5B-Instruct",
}
CLAIM = {"metadata": {"name": "initializer"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                       "resources": {"requests": {"storage": "20Gi"}}}}  # fmt: skip


def with_storage(manifest: dict) -> dict:
    """A torchtune runtime with its initializers' storage (``STORAGE_URI``, ``CLAIM``)."""
    name = manifest["metadata"]["name"]
    if name not in STORAGE_URI:
        return manifest
    template = manifest["spec"]["template"]["spec"]
    for step in template["replicatedJobs"]:
        for container in step["template"]["spec"]["template"]["spec"]["containers"]:
            uri = STORAGE_URI.get(name if step["name"] == "model-initializer" else step["name"])
            if uri and step["name"].endswith("-initializer"):
                container["env"] = [{"name": "STORAGE_URI", "value": uri}]
            container["volumeMounts"] = [{"mountPath": "/workspace", "name": "initializer"}]
    template["volumeClaimPolicies"] = [{"templates": [copy.deepcopy(CLAIM)]}]
    return manifest


def kubeconfig(url: str, namespace: str) -> str:
    return yaml.safe_dump({
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "emulated",
        "contexts": [{"name": "emulated", "context": {"cluster": "emulated", "user": "tester",
                                                      "namespace": namespace}}],
        "clusters": [{"name": "emulated", "cluster": {"server": url}}],
        "users": [{"name": "tester", "user": {"token": "emulated"}}],
    }, sort_keys=False)  # fmt: skip


class EmulatedCluster:
    """A Kubernetes cluster with Kubeflow Trainer v2.3, emulated (see the package's docstring).

    ``folder`` holds the kubeconfig and each pod's folder (``<namespace>/<pod>/``: ``work/``,
    ``volumes/``, ``logs/``); ``nodes`` gives each node's allocatable resources; ``backoff`` is
    the first crash-loop back-off in seconds (a real kubelet's is 10 s); ``trainer_status``
    turns the Trainer's feature gate ``TrainJobStatus`` on (its HTTPS status server:
    ``status_server``; ``trainer_status.py``); ``kueue`` runs Kueue for TrainJobs with a queue
    label (``kueue.py``; ``kueue_quota``: how many Workloads it admits at once, None: any).
    """

    def __init__(self, folder: Path, namespace: str = "team", nodes: tuple[dict, ...] = (NODE,),
                 backoff: float = 0.05, trainer_status: bool = False, kueue: bool = False,
                 kueue_quota: int | None = None):  # fmt: skip
        self.folder, self.namespace, self.nodes, self.backoff = (
            Path(folder),
            namespace,
            nodes,
            backoff,
        )
        self.kubeconfig = self.folder / "kubeconfig"
        self.trainer_status = trainer_status
        self.status_server = None  # trainer_status.StatusServer, with the feature gate on
        self.kueue: Kueue | None = None  # with kueue on
        self._kueue = (kueue, kueue_quota)
        self.faults = Faults()
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._changed = threading.Event()

    # ----- life -------------------------------------------------------------------------------

    def start(self) -> EmulatedCluster:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._serve, name="emulated-cluster", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._failed is not None or not self.url:
            raise RuntimeError(f"the emulated cluster did not start: {self._failed!r}")
        return self

    def close(self) -> None:
        if self._loop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)

    def __enter__(self) -> EmulatedCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported by start()
            self._failed = e
            self._ready.set()

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        self.api = ApiServer(faults=self.faults)
        self.api.admission = self.admission = Admission(self.api)
        async with self.api:
            self.kubelet = Kubelet(self.api, self.folder, self.faults, self.backoff)
            if self.trainer_status:
                self.api.tokens = Tokens()
                certs = make_certificates(self.folder / "trainer-tls", "kubeflow-trainer")
                self.status_server = StatusServer(self.api, self.api.tokens, certs)
                await self.status_server.start()
            self.trainer = Trainer(self.api, self.admission, self.kubelet, self.status_server)
            if self._kueue[0]:
                self.kueue = Kueue(self.api, self.admission, self._kueue[1])
                self.api.pending_workloads = self.kueue.pending
            self.api.pod_logs = PodLogs(self.api, self.kubelet)
            self.api.watchers.append(self._heard)
            await self._seed()

            def request(message, payload, protocol, writer, task):
                return aiohttp.web.BaseRequest(message, payload, protocol, writer, task,
                                               self._loop, client_max_size=MAX_BODY)  # fmt: skip

            server = aiohttp.web.Server(
                self.api, request_factory=request, handler_cancellation=True
            )
            runner = aiohttp.web.ServerRunner(server)
            await runner.setup()
            site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            host, port = runner.addresses[0][:2]
            self.url = f"http://{host}:{port}"
            self.kubeconfig.write_text(kubeconfig(self.url, self.namespace))
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self.kubelet.close()
                self.trainer.worker.cancel()
                if self.kueue is not None:
                    self.kueue.worker.cancel()
                await runner.cleanup()
                if self.status_server is not None:
                    await self.status_server.close()

    async def _seed(self) -> None:
        for name in dict.fromkeys(("default", "kube-system", self.namespace)):
            await self.api.create("v1/namespaces", None, {"metadata": {"name": name}})
        for i, allocatable in enumerate(self.nodes):
            await self.api.create("v1/nodes", None, node_manifest(i, allocatable))
        for name in RUNTIMES:
            plural = "trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
            await self.api.create(plural, None, released(with_storage(runtime_manifest(name))))

    def _heard(self, *_) -> None:
        self._changed.set()

    # ----- the test's side ----------------------------------------------------------------------

    def call(self, function: Callable, *args, timeout: float = 30):
        """Run ``function(*args)`` (a coroutine function, or a plain one) on the cluster's loop."""

        async def run():
            out = function(*args)
            return await out if asyncio.iscoroutine(out) else out

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def get(self, resource: str, name: str, namespace: str | None = "") -> dict | None:
        """An object (``resource`` as kmock writes it: ``v1/pods``, ``trainer.kubeflow.org/
        v1alpha1/trainjobs``), or None; ``namespace`` defaults to the kubeconfig's."""
        return self.call(self.api.get, resource, self._ns(namespace), name)

    def items(self, resource: str, namespace: str | None = "") -> list[dict]:
        return self.call(self.api.items, resource, self._ns(namespace))

    def create(self, resource: str, obj: dict, namespace: str | None = "") -> dict:
        """Store an object as a client's create would (admission included)."""
        ns = self._ns(namespace)

        async def create():
            self.admission.admit("CREATE", _resource(resource), ns, obj, None, {})
            return await self.api.create(resource, ns, obj)

        return self.call(create)

    def delete(self, resource: str, name: str, namespace: str | None = "") -> None:
        self.call(self.api.delete, resource, self._ns(namespace), name)

    def pods(self, job: str, namespace: str | None = "") -> list[dict]:
        """The pods of a TrainJob, by node index."""
        found = [p for p in self.items("v1/pods", namespace)
                 if p["metadata"]["labels"].get("jobset.sigs.k8s.io/jobset-name") == job]  # fmt: skip
        return sorted(found, key=lambda p: int(p["metadata"]["labels"][
            "batch.kubernetes.io/job-completion-index"]))  # fmt: skip

    def requests(self, method: str | None = None, plural: str | None = None) -> list:
        """The requests the API server got (kmock's records: method, url, params, data)."""

        def matching():
            return [r for r in self.api._requests
                    if (method is None or r.method == method)
                    and (plural is None or (r.resource is not None and r.resource.plural == plural))]  # fmt: skip

        return self.call(matching)

    def events(self, namespace: str | None = "") -> list[dict]:
        return self.items("v1/events", namespace)

    def wait_for(self, check: Callable[[], object], timeout: float = 120, what: str = "") -> object:
        """Wait until ``check()`` is truthy (it runs again after each change in the cluster)."""
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            found = check()
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the emulated cluster never got there: {what or check}")
            self._changed.wait(min(left, 1.0))

    def _ns(self, namespace: str | None) -> str | None:
        return self.namespace if namespace == "" else namespace


def _resource(text: str):
    import kmock

    return kmock.resource(text)
