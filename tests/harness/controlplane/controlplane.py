"""A real Kubernetes control plane on this machine, with JobSet and Kubeflow Trainer, and the
process kubelet running its pods (see ``__init__.py`` for the whole picture).

``async with ControlPlane(folder) as cp:`` builds what is missing, starts everything, and
leaves ``cp.kubeconfig`` and ``cp.server``; leaving the block stops every process it started.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import time
from pathlib import Path

import yaml

from kale_ext.backends.local.ports import claim_port
from tests.harness.controlplane import kueue, manifests, provisioner
from tests.harness.controlplane.build import build_all
from tests.harness.controlplane.kube import Kube
from tests.harness.controlplane.kubelet import ProcessKubelet
from tests.harness.controlplane.logserver import LogServer
from tests.harness.controlplane.pki import PKI, make_pki
from tests.harness.controlplane.processes import Process
from tests.harness.controlplane.versions import COMPONENTS, KUBERNETES

TRAINER_NS = "kubeflow-system"
TRAINER_SERVICE = "kubeflow-trainer-controller-manager"  # its webhook and status server's name
TRAINER_SECRET = "kubeflow-trainer-webhook-cert"
TRAINER_ACCOUNT = "kubeflow-trainer-controller-manager"
NODE = "process-node-0"
SERVICE_RANGE = "10.96.0.0/16"
#: The kube-controller-manager controllers: Jobs, owners' garbage, namespaces, the service
#: accounts pods run as and the CA bundle they see, finished pods' cleanup, volume claims bound.
CONTROLLERS = ("job-controller", "garbage-collector-controller", "namespace-controller",
               "serviceaccount-controller", "root-ca-certificate-publisher-controller",
               "pod-garbage-collector-controller", "ttl-after-finished-controller",
               "endpointslice-controller", "persistentvolume-binder-controller",
               "persistentvolumeclaim-protection-controller",
               "persistentvolume-protection-controller")  # fmt: skip
STARTUP = 120.0  # seconds a component may take to answer before the start fails


def kubeconfig(server: str, pki: PKI, namespace: str = "default") -> dict:
    b64 = lambda p: base64.b64encode(Path(p).read_bytes()).decode()  # noqa: E731
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "kale-ext-controlplane",
        "clusters": [{"name": "kale-ext-controlplane", "cluster": {
            "server": server, "certificate-authority-data": b64(pki.ca.cert)}}],
        "users": [{"name": "kale-ext-admin", "user": {
            "client-certificate-data": b64(pki.admin.cert),
            "client-key-data": b64(pki.admin.key)}}],
        "contexts": [{"name": "kale-ext-controlplane", "context": {
            "cluster": "kale-ext-controlplane", "user": "kale-ext-admin",
            "namespace": namespace}}],
    }  # fmt: skip


def _write(path: Path, data: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    tmp.chmod(0o600)
    tmp.replace(path)
    return path


async def _until(what: str, check, timeout: float = STARTUP, processes=(), every: float = 0.2):
    """Await ``check()`` until it is truthy; a process of ``processes`` that ends fails it."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        for p in processes:
            p.check()
        try:
            found = await check()
            if found:
                return found
        except Exception as e:  # not up yet
            last = e
        await asyncio.sleep(every)
    tails = "\n".join(f"--- {p.name} ({p.log}):\n{p.tail()}" for p in processes)
    raise TimeoutError(f"{what}: not after {timeout:.0f} s (last: {last})\n{tails}")


class ControlPlane:
    def __init__(self, folder: Path, kubeconfig_path: Path | None = None, say=print,
                 with_kueue: bool = True):  # fmt: skip
        self.folder = Path(folder)
        self.with_kueue = with_kueue
        self.kubeconfig = Path(kubeconfig_path or self.folder / "kubeconfig")
        self.say = say
        self.processes: list[Process] = []
        self.claims: dict[str, object] = {}
        self.kube: Kube | None = None
        self.kubelet: ProcessKubelet | None = None
        self.logserver: LogServer | None = None
        self.server = ""
        self.timings: dict[str, float] = {}

    def port(self, name: str) -> int:
        if name not in self.claims:
            self.claims[name] = claim_port(scope="kale-ext-controlplane")
        return self.claims[name].port

    async def __aenter__(self) -> ControlPlane:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *_) -> None:
        await self.stop()

    # ----- start ------------------------------------------------------------------------------

    async def start(self) -> None:
        started = time.monotonic()
        wanted = [c for c in COMPONENTS if self.with_kueue or c.name != "kueue"]
        bins = await asyncio.get_running_loop().run_in_executor(None, build_all, wanted)
        self.timings["build"] = time.monotonic() - started
        warm = time.monotonic()
        self.folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.folder / "etcd", ignore_errors=True)  # a fresh cluster each start
        self.pki = make_pki(self.folder / "pki", (
            f"{TRAINER_SERVICE}.{TRAINER_NS}.svc", f"{TRAINER_SERVICE}.{TRAINER_NS}.svc.cluster.local",
            "jobset-webhook-service.jobset-system.svc"))  # fmt: skip
        api_port = self.port("apiserver")
        self.server = f"https://127.0.0.1:{api_port}"
        admin = _write(self.folder / "admin.kubeconfig", kubeconfig(self.server, self.pki))
        logs = self.folder / "logs"

        etcd = await self._start("etcd", [str(bins["etcd"]), *self._etcd_flags()], logs)
        await _until("etcd answers", lambda: self._http_ok(self.port("etcd"), "/health"),
                     processes=[etcd])  # fmt: skip
        api = await self._start("kube-apiserver", [str(bins["kube-apiserver"]),
                                                   *self._apiserver_flags()], logs)  # fmt: skip
        self.kube = await Kube.open(self.server, self.pki.ca.cert, self.pki.admin.cert,
                                    self.pki.admin.key)  # fmt: skip
        await _until("the API server is ready", self._readyz, processes=[etcd, api])
        self.timings["apiserver"] = time.monotonic() - warm
        kcm = await self._start("kube-controller-manager", [
            str(bins["kube-controller-manager"]), f"--kubeconfig={admin}",
            f"--controllers={','.join(CONTROLLERS)}", "--leader-elect=false",
            f"--service-account-private-key-file={self.pki.service_account.key}",
            f"--root-ca-file={self.pki.ca.cert}", "--use-service-account-credentials=false",
            "--secure-port=0", f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--concurrent-job-syncs=10", "--v=1"], logs)  # fmt: skip
        scheduler = await self._start("kube-scheduler", [
            str(bins["kube-scheduler"]), f"--kubeconfig={admin}",
            f"--authentication-kubeconfig={admin}", f"--authorization-kubeconfig={admin}",
            "--leader-elect=false", "--bind-address=127.0.0.1",
            f"--secure-port={self.port('scheduler')}", "--v=1"], logs)  # fmt: skip
        await self._install_base()
        jobset = await self._start_jobset(bins["jobset"], admin, logs)
        trainer = await self._start_trainer(bins["trainer-controller-manager"], admin, logs)
        queues = [await self._start_kueue(bins["kueue"], admin, logs)] if self.with_kueue else []
        self.kubelet = ProcessKubelet(self.kube, self.folder / "pods", NODE, self.port("kubelet"),
                                      version=KUBERNETES)  # fmt: skip
        self.logserver = LogServer(self.kubelet, self.port("kubelet"), self.pki.serving.cert,
                                   self.pki.serving.key, self.pki.ca.cert)  # fmt: skip
        await self.logserver.start()
        await self.kubelet.start()
        await self.kube.apply(provisioner.storage_class())
        self.kubelet._spawn(provisioner.provision(self.kube, self.kubelet.root / "claims"))
        everything = [etcd, api, kcm, scheduler, jobset, trainer, *queues]
        await _until("JobSet is ready", lambda: self._http_ok(self.port("jobset-health"),
                                                              "/readyz"), processes=everything)  # fmt: skip
        await _until("the Trainer is ready", lambda: self._http_ok(self.port("trainer-health"),
                                                                   "/readyz"), processes=everything)  # fmt: skip
        hooks = manifests.webhook_configurations(
            self.port("trainer-webhook"), self.port("jobset-webhook"), self.pki.ca.cert.read_bytes()
        )
        if self.with_kueue:
            await _until("Kueue is ready", lambda: self._http_ok(self.port("kueue-health"),
                                                                 "/readyz"), processes=everything)  # fmt: skip
            hooks += kueue.webhook_configurations(self.port("kueue-webhook"),
                                                  self.pki.ca.cert.read_bytes())  # fmt: skip
        for hook in hooks:
            await self.kube.apply(hook)
        for runtime in manifests.runtimes():
            await _until(f"runtime {runtime['metadata']['name']} applied",
                         lambda r=runtime: self.kube.apply(r), processes=everything)  # fmt: skip
        await _until("the default service account", lambda: self.kube.get_or_none(
            "/api/v1/namespaces/default/serviceaccounts/default"), processes=everything)  # fmt: skip
        await _until("a TrainJob is admitted (dry run)", self._dry_run, processes=everything)
        _write(self.kubeconfig, kubeconfig(self.server, self.pki))
        self.timings["start"] = time.monotonic() - warm

    async def _start(self, name: str, argv: list[str], logs: Path, env=None) -> Process:
        process = await Process(name, argv, logs / f"{name}.log", env=env).start()
        self.processes.append(process)
        return process

    def _etcd_flags(self) -> list[str]:
        client, peer = self.port("etcd"), self.port("etcd-peer")
        return [f"--data-dir={self.folder / 'etcd'}", "--name=default",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=default=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync", "--log-level=warn", "--quota-backend-bytes=4294967296"]  # fmt: skip

    def _apiserver_flags(self) -> list[str]:
        pki = self.pki
        return [
            f"--etcd-servers=http://127.0.0.1:{self.port('etcd')}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.port('apiserver')}",
            f"--tls-cert-file={pki.serving.cert}", f"--tls-private-key-file={pki.serving.key}",
            f"--client-ca-file={pki.ca.cert}",
            f"--service-account-issuer={self.server}",
            f"--service-account-key-file={pki.service_account.cert}",
            f"--service-account-signing-key-file={pki.service_account.key}",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--authorization-mode=RBAC", "--allow-privileged=true",
            f"--kubelet-client-certificate={pki.admin.cert}",
            f"--kubelet-client-key={pki.admin.key}",
            f"--kubelet-certificate-authority={pki.ca.cert}",
            "--kubelet-preferred-address-types=InternalIP",
            "--endpoint-reconciler-type=none", "--profiling=false",
            "--enable-priority-and-fairness=false", "--v=1",
            f"--cert-dir={self.folder / 'apiserver-certs'}",
        ]  # fmt: skip

    async def _http_ok(self, port: int, path: str) -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await writer.drain()
        line = await reader.readline()
        writer.close()
        return b" 200 " in line

    async def _readyz(self) -> bool:
        await self.kube.request("GET", "/readyz", timeout=5)
        return True

    async def _install_base(self) -> None:
        """The Trainer's namespace, account and certificate Secret; the CRDs, established."""
        await self.kube.apply({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": TRAINER_NS}})  # fmt: skip
        await self.kube.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                               "metadata": {"name": TRAINER_ACCOUNT, "namespace": TRAINER_NS}})  # fmt: skip
        b64 = lambda p: base64.b64encode(p.read_bytes()).decode()  # noqa: E731
        await self.kube.apply({
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": TRAINER_SECRET, "namespace": TRAINER_NS},
            "data": {"ca.crt": b64(self.pki.ca.cert), "tls.crt": b64(self.pki.serving.cert),
                     "tls.key": b64(self.pki.serving.key)}})  # fmt: skip
        for obj in manifests.trainer_public(TRAINER_NS):
            await self.kube.apply(obj)
        crds = manifests.crds()
        if self.with_kueue:
            crds += kueue.crds(self.port("kueue-webhook"), self.pki.ca.cert.read_bytes())
            await self.kube.apply({"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": kueue.NAMESPACE}})  # fmt: skip
        for crd in crds:
            await self.kube.apply(crd)
        for crd in crds:
            path = (
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
            )

            async def established(path=path):
                got = await self.kube.get(path)
                return any(c["type"] == "Established" and c["status"] == "True"
                           for c in (got.get("status") or {}).get("conditions") or [])  # fmt: skip

            await _until(f"CRD {crd['metadata']['name']} established", established,
                         processes=self.processes)  # fmt: skip

    async def _start_jobset(self, binary: Path, admin: Path, logs: Path) -> Process:
        certs = self.pki.serving_for("jobset-certs")
        config = {
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1", "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"port": self.port("jobset-webhook"), "host": "127.0.0.1",
                        "certDir": str(certs.cert.parent)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.port('jobset-health')}"},
        }  # fmt: skip
        path = _write(self.folder / "jobset-config.yaml", config)
        env = {**os.environ, "KUBECONFIG": str(admin)}
        return await self._start("jobset", [str(binary), f"--config={path}",
                                             f"--kubeconfig={admin}"], logs, env)  # fmt: skip

    async def _start_trainer(self, binary: Path, admin: Path, logs: Path) -> Process:
        """The Trainer reads its namespace and its cluster's token issuer from the service
        account files of a pod (/var/run/secrets/kubernetes.io/serviceaccount), and its status
        server's certificate from /tmp/k8s-webhook-server/serving-certs: it runs in a mount
        namespace of its own where both are folders of this control plane."""
        config = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1", "kind": "Configuration",
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.port('trainer-health')}",
                       "readinessEndpointName": "readyz", "livenessEndpointName": "healthz"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"port": self.port("trainer-webhook"), "host": "127.0.0.1"},
            "leaderElection": {"leaderElect": False},
            "certManagement": {"enable": False, "webhookServiceName": TRAINER_SERVICE,
                               "webhookSecretName": TRAINER_SECRET},
            "statusServer": {"port": self.port("trainer-status")},
            "featureGates": {"TrainJobStatus": True},
        }  # fmt: skip
        path = _write(self.folder / "trainer-config.yaml", config)
        made = await self.kube.request(
            "POST", f"/api/v1/namespaces/{TRAINER_NS}/serviceaccounts/{TRAINER_ACCOUNT}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 86400}})  # fmt: skip
        run = self.folder / "trainer-run"
        account = run / "secrets/kubernetes.io/serviceaccount"
        account.mkdir(parents=True, exist_ok=True)
        (account / "token").write_text(made["status"]["token"])
        (account / "namespace").write_text(TRAINER_NS)
        (account / "ca.crt").write_bytes(self.pki.ca.cert.read_bytes())
        tmp = self.folder / "trainer-tmp"
        certs = tmp / "k8s-webhook-server/serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        for src, dst in ((self.pki.serving.cert, "tls.crt"), (self.pki.serving.key, "tls.key"),
                         (self.pki.ca.cert, "ca.crt")):  # fmt: skip
            (certs / dst).write_bytes(src.read_bytes())
        # Paths under /tmp are gone once /tmp is mounted over: the config and kubeconfig are
        # read relative to the folder it changed into first, the binary from a descriptor.
        script = (
            'cd "$3" && exec 3<"$4" && mount --bind "$1" /run && mount --bind "$2" /tmp '
            '&& shift 4 && exec /proc/self/fd/3 "$@"'
        )
        unshare = ["unshare", "--mount", "--propagation", "private"]
        if os.geteuid() != 0:
            unshare.insert(1, "--map-root-user")
        argv = [*unshare, "sh", "-c", script, "trainer", str(run), str(tmp), str(self.folder),
                str(binary), f"--config={path.relative_to(self.folder)}",
                f"--kubeconfig={admin.relative_to(self.folder)}"]  # fmt: skip
        env = {**os.environ, "KUBECONFIG": str(admin.relative_to(self.folder)), "TMPDIR": "/tmp"}
        return await self._start("trainer", argv, logs, env)

    async def _start_kueue(self, binary: Path, admin: Path, logs: Path) -> Process:
        """Kueue, in a mount namespace whose /etc has its metrics certificate folder."""
        certs = self.pki.serving_for("kueue-certs")
        config = kueue.configuration(self.port("kueue-webhook"), self.port("kueue-health"),
                                     str(certs.cert.parent))  # fmt: skip
        path = _write(self.folder / "kueue-config.yaml", config)
        etc = self.folder / "kueue-etc"
        metrics = etc / "kueue/metrics/certs"
        metrics.mkdir(parents=True, exist_ok=True)
        for name in ("tls.crt", "tls.key"):
            (metrics / name).write_bytes((certs.cert.parent / name).read_bytes())
        script = 'mount -t overlay overlay -o "lowerdir=$1:/etc" /etc && shift && exec "$@"'
        unshare = ["unshare", "--mount", "--propagation", "private"]
        if os.geteuid() != 0:
            unshare.insert(1, "--map-root-user")
        argv = [*unshare, "sh", "-c", script, "kueue", str(etc), str(binary), f"--config={path}",
                f"--kubeconfig={admin}"]  # fmt: skip
        env = {**os.environ, "KUBECONFIG": str(admin)}
        return await self._start("kueue", argv, logs, env)

    async def _dry_run(self) -> bool:
        body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "ready-check", "namespace": "default"},
                "spec": {"runtimeRef": {"name": "torch-distributed"},
                         "trainer": {"command": ["python", "-c", "pass"], "numNodes": 1}}}  # fmt: skip
        await self.kube.request("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/"
                                "trainjobs", body, params={"dryRun": "All"})  # fmt: skip
        job = {"apiVersion": "batch/v1", "kind": "Job",  # what JobSet makes, through the webhooks
               "metadata": {"name": "ready-check", "namespace": "default"},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "node", "image": "python", "command": ["python"]}]}}}}  # fmt: skip
        await self.kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", job,
                                params={"dryRun": "All"})  # fmt: skip
        return True

    # ----- stop -------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop the pods' processes, then the components (last started first); free the ports."""
        if self.kubelet is not None:
            await self.kubelet.close()
        if self.logserver is not None:
            await self.logserver.close()
        if self.kube is not None:
            await self.kube.close()
        order = ["trainer", "jobset", "kube-scheduler", "kube-controller-manager"]
        await asyncio.gather(*(p.stop() for p in self.processes if p.name in order))
        for process in reversed(self.processes):  # then the API server, then etcd
            await process.stop()
        for claim in self.claims.values():
            claim.close()
        self.claims.clear()
