"""The process kubelet: a real kubelet's stand-in against the real API server, with no container
runtime. It registers a Node (its allocatable cpu/memory/pods, 127.0.0.1 as its address, its
HTTPS endpoint's port), runs the pods the scheduler binds to it as local processes, reports
their status, and serves their logs where the API server proxies ``pods/log``.

It reuses the emulated cluster's pieces (``tests/harness/cluster``), which already run a pod
spec as processes:

- volumes as folders and the container's environment (``volumes.py``: configMap, secret,
  projected with service-account tokens, emptyDir, downwardAPI, PVCs as a folder per claim),
  the mounts seen by Python through ``shim/sitecustomize.py``;
- the image is this interpreter: ``python`` runs ``sys.executable``, its folder is first on
  ``PATH`` (``torchrun``), and pip installs nothing (``PIP_NO_INDEX``);
- the network (``Kubelet._network``): a pod hostname under the pod's subdomain is 127.0.0.1, and
  each container port is a port claimed for that subdomain, so two jobs never meet; a Service
  URL ``https://NAME.NAMESPACE.svc:PORT`` (the Trainer's status server) is 127.0.0.1:PORT;
- the logs (``podlogs.Log``) and termination messages (``termination_message``).

A program that is not Python has no shim: the arguments and variables that name a path under a
mount name the mount's folder instead (``image.native``: ``mpirun --hostfile /etc/mpi/hostfile``).
The pods of an MPI runtime (those mounting a Secret of type ``kubernetes.io/ssh-auth``) run the
real Open MPI ``mpirun`` and the real OpenSSH ``sshd``: what their image and the pod network
give them (the ssh client's and the sshd's config, each worker's sshd on a port claimed for its
pod hostname, the pod's own hostname and ``/etc/hosts`` in UTS and mount namespaces, which need
root; Open MPI's leave to run as root where the runtime runs as uid 1000) is ``image.py``'s.

What the objects these need come from the API server: the ConfigMaps, Secrets and tokens a pod
refers to are read before its volumes and environment are made (``Objects``).

Each container runs in its own process group (stopped as a group: SIGTERM, SIGKILL after the
pod's grace period, capped at GRACE_CAP), with PR_SET_PDEATHSIG, so nothing outlives the
harness. Restarts under ``OnFailure``/``Always`` back off from BACKOFF seconds, doubling.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from kale_ext.backends.local.ports import claim_port
from tests.harness.cluster.kubelet import NO_COMMAND, prepare_process, termination_message
from tests.harness.cluster.kubelet import Kubelet as EmulatedKubelet
from tests.harness.cluster.podlogs import Log
from tests.harness.cluster.volumes import (
    Waiting,
    environment,
    materialise,
    mounts,
    nest,
    process_env,
)
from tests.harness.controlplane import image
from tests.harness.controlplane.kube import ApiError, Kube
from tests.harness.controlplane.processes import die_with_parent

TERMINATION = "/dev/termination-log"
BACKOFF = 1.0  # seconds before the first restart of a failed container (a kubelet: 10)
BACKOFF_CAP = 20.0
GRACE_CAP = 10.0  # the longest a stopped container gets before SIGKILL
RETRY = 0.5  # seconds between tries of a pod whose volumes or env cannot be made yet
SERVICE_URL = re.compile(r"^(https?://)([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?(:\d+)?")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Objects:
    """The ConfigMaps and Secrets a pod refers to, and the tokens its projected volumes ask
    for, read from the API server first: what ``volumes.py`` asks of its ``api`` (``get``,
    ``tokens.issue``), answered without a blocking call."""

    def __init__(self):
        self.objects: dict[tuple[str, str, str], dict | None] = {}
        self.issued: dict[tuple[str, int], str] = {}
        self.tokens = self

    def get(self, resource: str, namespace: str, name: str):
        return self.objects.get((resource, namespace, name))

    def issue(self, pod: dict, audience: str, expiration: int = 3600) -> str:
        return self.issued[(audience, int(expiration))]

    @classmethod
    async def read(cls, kube: Kube, pod: dict) -> Objects:
        out = cls()
        ns = pod["metadata"]["namespace"]
        refs: set[tuple[str, str]] = set()
        tokens: set[tuple[str, int]] = set()
        for volume in pod["spec"].get("volumes") or []:
            if "configMap" in volume:
                refs.add(("configmaps", volume["configMap"].get("name", "")))
            if "secret" in volume:
                refs.add(("secrets", volume["secret"].get("secretName", "")))
            for source in (volume.get("projected") or {}).get("sources") or []:
                if "configMap" in source:
                    refs.add(("configmaps", source["configMap"].get("name", "")))
                if "secret" in source:
                    refs.add(("secrets", source["secret"].get("name", "")))
                if "serviceAccountToken" in source:
                    t = source["serviceAccountToken"]
                    tokens.add((t.get("audience", ""), int(t.get("expirationSeconds", 3600))))
        for container in _all_containers(pod):
            for source in container.get("envFrom") or []:
                if "configMapRef" in source:
                    refs.add(("configmaps", source["configMapRef"].get("name", "")))
                if "secretRef" in source:
                    refs.add(("secrets", source["secretRef"].get("name", "")))
            for var in container.get("env") or []:
                source = var.get("valueFrom") or {}
                if "configMapKeyRef" in source:
                    refs.add(("configmaps", source["configMapKeyRef"].get("name", "")))
                if "secretKeyRef" in source:
                    refs.add(("secrets", source["secretKeyRef"].get("name", "")))
        for plural, name in refs:
            if name:
                found = await kube.get_or_none(f"/api/v1/namespaces/{ns}/{plural}/{name}")
                out.objects[(f"v1/{plural}", ns, name)] = found
        account = pod["spec"].get("serviceAccountName") or "default"
        for audience, expiration in tokens:
            request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"audiences": [audience] if audience else [],
                                "expirationSeconds": max(expiration, 600),
                                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1",
                                                   "name": pod["metadata"]["name"],
                                                   "uid": pod["metadata"]["uid"]}}}  # fmt: skip
            made = await kube.request(
                "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{account}/token", request
            )
            out.issued[(audience, expiration)] = made["status"]["token"]
        return out


def _all_containers(pod: dict) -> list[dict]:
    return list(pod["spec"].get("initContainers") or []) + list(pod["spec"]["containers"])


@dataclass
class ContainerRun:
    spec: dict
    logs: list[Log] = field(default_factory=list)
    process: asyncio.subprocess.Process | None = None
    state: dict = field(default_factory=lambda: {"waiting": {"reason": "ContainerCreating"}})
    last: dict = field(default_factory=dict)
    restarts: int = 0
    started: str = ""
    termination: Path | None = None


@dataclass
class PodRun:
    pod: dict
    folder: Path
    containers: dict[str, ContainerRun] = field(default_factory=dict)
    task: asyncio.Task | None = None
    stopping: bool = False
    volumes: dict = field(default_factory=dict)
    objects: Objects | None = None
    phase: str = "Pending"
    start_time: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.pod["metadata"]["namespace"], self.pod["metadata"]["name"]

    @property
    def path(self) -> str:
        ns, name = self.key
        return f"/api/v1/namespaces/{ns}/pods/{name}"


class ProcessKubelet:
    """One node's kubelet: ``await start()``, then it follows the pods bound to ``node``."""

    def __init__(self, kube: Kube, root: Path, node: str, port: int, cpu: str = "32",
                 memory: str = "128Gi", pods: str = "110", version: str = ""):  # fmt: skip
        self.kube, self.root, self.node, self.port = kube, root, node, port
        api = kube.server.rsplit(":", 1)[1]
        #: what a kubelet gives every container of the `kubernetes` Service (here: this machine)
        self.service_env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": api,
                            "KUBERNETES_SERVICE_PORT_HTTPS": api,
                            "KUBERNETES_PORT": f"tcp://127.0.0.1:{api}"}  # fmt: skip
        self.cpu, self.memory, self.max_pods, self.version = cpu, memory, pods, version
        self.runs: dict[tuple[str, str], PodRun] = {}
        self.ports: dict[tuple[str, str], dict[int, object]] = {}  # for Kubelet._network
        #: (namespace, subdomain) → pod hostname → (the port its sshd listens on, the pod)
        self.sshd_ports: dict[tuple[str, str], dict[str, tuple]] = {}
        self.tasks: set[asyncio.Task] = set()

    # ----- the node -------------------------------------------------------------------------

    def node_object(self) -> dict:
        stamp = now()
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "the kale_ext process kubelet is posting ready status",
                 "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}  # fmt: skip
        resources = {"cpu": self.cpu, "memory": self.memory, "pods": self.max_pods,
                     "ephemeral-storage": "100Gi"}  # fmt: skip
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.node, "labels": {
                "kubernetes.io/hostname": self.node, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "process"}},
            "status": {
                "capacity": resources, "allocatable": resources, "conditions": [ready],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                              {"type": "Hostname", "address": self.node}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
                "nodeInfo": {"kubeletVersion": self.version, "kubeProxyVersion": "",
                             "operatingSystem": "linux", "architecture": "amd64",
                             "containerRuntimeVersion": "process://kale-ext",
                             "osImage": "local processes", "kernelVersion": os.uname().release,
                             "machineID": "", "systemUUID": "", "bootID": ""},
            },
        }  # fmt: skip

    async def register(self) -> None:
        node = self.node_object()
        try:
            await self.kube.request("POST", "/api/v1/nodes", node)
        except ApiError as e:
            if e.status != 409:
                raise
        await self.kube.patch_status(f"/api/v1/nodes/{self.node}", node["status"])
        # The API server taints a new node not-ready (TaintNodesByCondition); the node lifecycle
        # controller lifts it once the node reports Ready. That controller also evicts pods of
        # nodes whose heartbeats stop, which this harness has no use for: the kubelet lifts it.
        await self.kube.request("PATCH", f"/api/v1/nodes/{self.node}", {"spec": {"taints": None}},
                                content_type="application/merge-patch+json")  # fmt: skip

    async def start(self) -> None:
        await self.register()
        self._spawn(self._follow())
        self._spawn(self._heartbeat())

    def _spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(20)
            with contextlib.suppress(Exception):
                await self.kube.patch_status(f"/api/v1/nodes/{self.node}",
                                             {"conditions": self.node_object()["status"]["conditions"]})  # fmt: skip

    async def _follow(self) -> None:
        params = {"fieldSelector": f"spec.nodeName={self.node}"}
        async for kind, pod in self.kube.watch("/api/v1/pods", params):
            key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
            run = self.runs.get(key)
            if run is not None and run.pod["metadata"]["uid"] != pod["metadata"]["uid"]:
                run = None  # a new pod of the same name: the old one's stop is under way
            if kind == "DELETED":
                if run is not None and not run.stopping:
                    run.stopping = True
                    self._spawn(self._stop(run, remove=False))
                continue
            if run is None:
                if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    if pod["metadata"].get("deletionTimestamp"):
                        self._spawn(self._finalize(pod))
                    continue
                run = PodRun(pod, self.root / key[0] / f"{key[1]}-{pod['metadata']['uid'][:8]}")
                self.runs[key] = run
                run.task = self._spawn(self._life(run))
            else:
                run.pod["metadata"] = pod["metadata"]
            if pod["metadata"].get("deletionTimestamp") and not run.stopping:
                run.stopping = True
                self._spawn(self._stop(run))

    async def close(self) -> None:
        """Stop every process (the control plane shuts down)."""
        for run in list(self.runs.values()):
            run.stopping = True
            await self._stop(run, remove=False)
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for key in set(self.ports) | set(self.sshd_ports):
            self.release(*key)

    def release(self, namespace: str, subdomain: str) -> None:
        for holder in self.ports.pop((namespace, subdomain), {}).values():
            holder.close()
        for holder, _ in self.sshd_ports.pop((namespace, subdomain), {}).values():
            holder.close()

    # ----- a pod's life -------------------------------------------------------------------------

    def _status(self, run: PodRun) -> dict:
        pod = run.pod
        init = [c["name"] for c in pod["spec"].get("initContainers") or []]
        regular = [c["name"] for c in pod["spec"]["containers"]]

        def one(name: str) -> dict:
            c = run.containers.get(name) or ContainerRun(self._spec(pod, name))
            out = {"name": name, "image": c.spec.get("image", ""), "imageID": "",
                   "ready": "running" in c.state, "started": "running" in c.state,
                   "restartCount": c.restarts, "state": c.state, "lastState": c.last}  # fmt: skip
            if c.logs:
                out["containerID"] = f"process://{pod['metadata']['uid']}/{name}/{len(c.logs)}"
            return out

        stamp = now()
        inits_done = all("terminated" in (run.containers.get(n) or ContainerRun({})).state
                         and run.containers[n].state["terminated"]["exitCode"] == 0
                         for n in init)  # fmt: skip
        ready = run.phase == "Running" and all(
            "running" in (run.containers.get(n) or ContainerRun({})).state for n in regular
        )

        def condition(kind: str, ok: bool, reason: str | None = None) -> dict:
            out = {"type": kind, "status": "True" if ok else "False",
                   "lastProbeTime": None, "lastTransitionTime": stamp}  # fmt: skip
            if not ok and reason:
                out["reason"] = reason
            return out

        old = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}
        conditions = [
            condition("PodReadyToStartContainers", bool(run.volumes) or run.phase != "Pending"),
            condition("Initialized", inits_done, "ContainersNotInitialized"),
            condition("Ready", ready, "PodCompleted" if run.phase in ("Succeeded", "Failed")
                      else "ContainersNotReady"),
            condition("ContainersReady", ready, "PodCompleted" if run.phase in
                      ("Succeeded", "Failed") else "ContainersNotReady"),
        ]  # fmt: skip
        if "PodScheduled" in old:
            conditions.append(old["PodScheduled"])
        for c in conditions:  # a transition time moves only when the status does
            if c["type"] in old and old[c["type"]].get("status") == c["status"]:
                c["lastTransitionTime"] = old[c["type"]].get("lastTransitionTime", stamp)
        status = {"phase": run.phase, "conditions": conditions, "hostIP": "127.0.0.1",
                  "hostIPs": [{"ip": "127.0.0.1"}], "podIP": "127.0.0.1",
                  "podIPs": [{"ip": "127.0.0.1"}], "startTime": run.start_time or stamp,
                  "containerStatuses": [one(n) for n in regular]}  # fmt: skip
        if init:
            status["initContainerStatuses"] = [one(n) for n in init]
        return status

    @staticmethod
    def _spec(pod: dict, name: str) -> dict:
        return next((c for c in _all_containers(pod) if c["name"] == name), {"name": name})

    async def _report(self, run: PodRun) -> None:
        try:
            run.pod = await self.kube.patch_status(run.path, self._status(run))
        except ApiError as e:
            if e.status not in (404, 409):
                raise

    async def _event(self, run: PodRun, kind: str, reason: str, message: str) -> None:
        ns, name = run.key
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"generateName": f"{name}.", "namespace": ns},
                 "involvedObject": {"kind": "Pod", "namespace": ns, "name": name,
                                    "uid": run.pod["metadata"]["uid"], "apiVersion": "v1"},
                 "type": kind, "reason": reason, "message": message,
                 "source": {"component": "kubelet", "host": self.node},
                 "firstTimestamp": now(), "lastTimestamp": now(), "count": 1,
                 "reportingComponent": "kubelet", "reportingInstance": self.node}  # fmt: skip
        with contextlib.suppress(ApiError):
            await self.kube.request("POST", f"/api/v1/namespaces/{ns}/events", event)

    async def _life(self, run: PodRun) -> None:
        try:
            run.start_time = now()
            await self._prepare(run)
            for spec in run.pod["spec"].get("initContainers") or []:
                code = await self._container(run, spec, init=True)
                if code != 0:
                    run.phase = "Failed"
                    await self._report(run)
                    return
            codes = await asyncio.gather(
                *(self._container(run, spec) for spec in run.pod["spec"]["containers"])
            )
            run.phase = "Succeeded" if all(c == 0 for c in codes) else "Failed"
            await self._report(run)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # a harness bug: said where a test looks (the pod's events)
            await self._event(run, "Warning", "ProcessKubeletError", f"{type(e).__name__}: {e}")
            raise

    async def _prepare(self, run: PodRun) -> None:
        """Mount the volumes and resolve the env: wait while one cannot be done."""
        said = None
        while True:
            try:
                run.objects = await Objects.read(self.kube, run.pod)
                run.volumes = materialise(run.objects, run.pod, run.folder,
                                          self.root / "claims")  # fmt: skip
                for spec in _all_containers(run.pod):
                    environment(run.objects, run.pod, spec)
                return
            except Waiting as e:
                if (e.reason, e.message) != said:
                    said = (e.reason, e.message)
                    for spec in _all_containers(run.pod):
                        self._run_of(run, spec).state = {
                            "waiting": {"reason": e.reason, "message": e.message}
                        }
                    await self._report(run)
                    await self._event(run, "Warning", e.event or "Failed", e.message)
                await asyncio.sleep(RETRY)

    def _run_of(self, run: PodRun, spec: dict) -> ContainerRun:
        return run.containers.setdefault(spec["name"], ContainerRun(spec))

    async def _container(self, run: PodRun, spec: dict, init: bool = False) -> int:
        """Run a container until it is done (restarted while its policy says so): exit code."""
        c = self._run_of(run, spec)
        policy = run.pod["spec"].get("restartPolicy", "Always")
        delay = BACKOFF
        while True:
            code, reason = await self._attempt(run, c)
            # c.last stays the run before's ending: a real kubelet's lastState is the previous
            # instance's termination, also once the container ended for good
            c.state = {"terminated": {"exitCode": code, "reason": reason, "startedAt": c.started,
                                      "finishedAt": now(),
                                      "containerID": f"process://{run.pod['metadata']['uid']}/"
                                                     f"{spec['name']}/{len(c.logs)}"}}  # fmt: skip
            message = termination_message(spec, c.termination, c.logs[-1], code)
            if message:
                c.state["terminated"]["message"] = message
            if not c.started:  # it never started: an empty time is refused (422) by the API server
                del c.state["terminated"]["startedAt"]
            again = policy == "Always" or (policy == "OnFailure" and code != 0)
            if run.stopping or not again:
                if not init and any(
                    "terminated" not in o.state for n, o in run.containers.items()
                    if n != spec["name"] and n in {x["name"] for x in run.pod["spec"]["containers"]}
                ):  # fmt: skip
                    await self._report(run)
                return code
            c.last = c.state
            name, ns = run.key[1], run.key[0]
            c.state = {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off "
                       f"{delay:g}s restarting failed container={spec['name']} pod={name}_{ns}"}}  # fmt: skip
            await self._report(run)
            await self._event(run, "Warning", "BackOff", "Back-off restarting failed container "
                              f"{spec['name']} in pod {name}_{ns}")  # fmt: skip
            await asyncio.sleep(delay)
            if run.stopping:
                return code
            c.restarts += 1
            delay = min(delay * 2, BACKOFF_CAP)

    def _network(self, pod: dict, env: dict[str, str]) -> dict[str, str]:
        """The emulator's pod network (hostnames and ports of the subdomain), plus Service URLs
        (``https://name.ns.svc:port``) on this machine."""
        out = EmulatedKubelet._network(self, pod, env)  # type: ignore[arg-type]
        return {k: SERVICE_URL.sub(lambda m: f"{m[1]}127.0.0.1{m[4] or ''}", v)
                for k, v in out.items()}  # fmt: skip

    async def _attempt(self, run: PodRun, c: ContainerRun) -> tuple[int, str]:
        spec = c.spec
        log = Log(run.folder / "logs" / f"{spec['name']}-{len(c.logs)}.log")
        c.logs.append(log)
        try:
            env = self._network(run.pod, {**self.service_env,
                                          **environment(run.objects, run.pod, spec)})  # fmt: skip
        except Waiting as e:
            await log.write(f"{e.message}\n".encode())
            await log.end()
            return 128, "CreateContainerConfigError"
        prepared = prepare_process(spec, env, run.folder)
        if prepared is None:
            await log.write(NO_COMMAND)
            await log.end()
            return 128, "StartError"
        argv, work, home, path = prepared
        c.started = now()
        c.termination = run.folder / "termination" / f"{spec['name']}-{len(c.logs)}"
        c.termination.parent.mkdir(parents=True, exist_ok=True)
        c.termination.write_bytes(b"")
        mounted = mounts(spec, run.volumes)
        nest(mounted)
        mounted[spec.get("terminationMessagePath") or TERMINATION] = str(c.termination)
        cwd = work
        if spec.get("workingDir"):
            cwd = Path(mounted.get(spec["workingDir"], str(work)))
        start = die_with_parent
        key = image.ssh_key(run.pod, run.objects, run.volumes)
        if key is not None:  # an MPI runtime's pod: the image's ssh, its own hostname
            why = image.cannot_enter_pod() or image.have(argv[0])
            if why:
                await log.write(f"{why}\n".encode())
                await log.end()
                await self._event(run, "Warning", "Failed", f"Error: {why}")
                return 128, "StartError"
            path, env = self._ssh_pod(run, spec, argv, env, home, path, mounted, key)
            hosts = run.folder / "image" / "hosts"
            hosts.write_text(image.hosts_file(run.pod))
            host = image.hostname(run.pod)

            def start() -> None:
                die_with_parent()
                image.enter_pod(host, hosts)

        argv, penv = image.native(argv, process_env(env, home, mounted, path), mounted)
        try:
            c.process = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL, env=penv, start_new_session=True,
                preexec_fn=start,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as e:
            await log.write(f"{e}\n".encode())
            await log.end()
            await self._event(run, "Warning", "Failed", f"Error: failed to start container: {e}")
            return 128, "StartError"
        await self._event(run, "Normal", "Started", f"Started container {spec['name']}")
        c.state = {"running": {"startedAt": c.started}}
        if run.phase == "Pending" and not any(
            x["name"] == spec["name"] for x in run.pod["spec"].get("initContainers") or []
        ):
            run.phase = "Running"
        await self._report(run)
        while chunk := await c.process.stdout.read(1 << 16):
            await log.write(chunk)
        await log.end()
        code = await c.process.wait()
        c.process = None
        if code < 0:
            return 128 - code, "Error"
        return code, "Completed" if code == 0 else "Error"

    def _ssh_pod(self, run: PodRun, spec: dict, argv: list[str], env: dict[str, str], home: Path,
                 path: str, mounted: dict[str, str], key: Path) -> tuple[str, dict[str, str]]:  # fmt: skip
        """The image's ssh for a pod holding an SSH key (``image.py``): the client first on PATH,
        and for the runtime's sshd its config file (at the path ``-f`` names), listening on a
        port claimed for this pod's hostname. Returns (PATH, env)."""
        ns, subdomain = run.key[0], run.pod["spec"].get("subdomain") or ""
        own = run.folder / "image"
        private = image.private_key(key, own / "id_rsa")
        config = self._ssh_config(ns, subdomain)
        path = os.pathsep.join((str(image.ssh_wrapper(own / "bin", config, private)), path))
        sshd = image.sshd_file(argv)
        if sshd is not None:
            host = image.hostname(run.pod)
            held = self.sshd_ports.setdefault((ns, subdomain), {})
            if host not in held:
                held[host] = (claim_port(), run.pod)
                self._ssh_config(ns, subdomain)
            mounted[sshd] = str(own / "sshd_config")
            session = image.mounts_env(process_env({}, home, mounted, path))
            (own / "sshd_config").write_text(image.sshd_config(
                held[host][0].port, private, key / "authorized_keys", home / "sshd.pid", session))  # fmt: skip
            image.privilege_separation()
        elif os.geteuid() == 0 and image.runs_as_non_root(run.pod, spec):
            env = {**env, **image.AS_ROOT}
        return path, env

    def _ssh_config(self, namespace: str, subdomain: str) -> Path:
        """The ssh client's config for a subdomain's pods (written again as sshds start)."""
        held = self.sshd_ports.get((namespace, subdomain), {})
        config = self.root / "ssh" / namespace / f"{subdomain or '-'}.config"
        config.parent.mkdir(parents=True, exist_ok=True)
        ports = {host: claim.port for host, (claim, _) in held.items()}
        config.write_text(image.ssh_config(ports, {h: pod for h, (_, pod) in held.items()}))
        return config

    async def _stop(self, run: PodRun, remove: bool = True) -> None:
        """Stop the pod's processes (SIGTERM, SIGKILL after its grace period), report it ended,
        then (``remove``) let the API server delete it."""
        grace = run.pod["metadata"].get("deletionGracePeriodSeconds")
        if grace is None:
            grace = run.pod["spec"].get("terminationGracePeriodSeconds", 30)
        grace = min(float(grace), GRACE_CAP)
        processes = [c.process for c in run.containers.values() if c.process is not None]
        for process in processes:
            if remove:
                await self._event(run, "Normal", "Killing", "Stopping container")
            _signal(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), grace)
            except asyncio.TimeoutError:
                _signal(process.pid, signal.SIGKILL)
                await process.wait()
        if run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        for c in run.containers.values():
            for log in c.logs:
                await log.end()
        if remove:
            if run.phase not in ("Succeeded", "Failed"):
                run.phase = "Failed"
                for c in run.containers.values():
                    if "terminated" not in c.state:
                        c.state = {"terminated": {"exitCode": 137, "reason": "Error",
                                                  "startedAt": c.started or now(),
                                                  "finishedAt": now()}}  # fmt: skip
                await self._report(run)
            await self._finalize(run.pod)
        if self.runs.get(run.key) is run:
            self.runs.pop(run.key)
        subdomain = run.pod["spec"].get("subdomain")
        if subdomain and not any(r.pod["spec"].get("subdomain") == subdomain
                                 and r.key[0] == run.key[0] for r in self.runs.values()):  # fmt: skip
            self.release(run.key[0], subdomain)

    async def _finalize(self, pod: dict) -> None:
        """The kubelet's last word on a deleted pod: delete it now (grace 0, this uid)."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                "preconditions": {"uid": pod["metadata"]["uid"]}}  # fmt: skip
        with contextlib.suppress(ApiError):
            await self.kube.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", body)

    # ----- logs -------------------------------------------------------------------------------

    def logs_of(self, namespace: str, pod: str, container: str) -> list[Log] | None:
        run = self.runs.get((namespace, pod))
        if run is None:
            return None
        c = run.containers.get(container)
        return c.logs if c is not None else []


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
