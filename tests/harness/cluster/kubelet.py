"""The emulated scheduler and kubelet: each pod is placed on a node with room for it, then its
containers run as local processes, in the pod's own folder, with the environment and volumes
the pod spec gives them (``volumes.py``), and its status follows what happens.

- Scheduling: a node whose labels match the pod's ``nodeSelector``, that is not cordoned and
  has room for the pod's requests (beside the other running pods); else the pod stays
  ``Pending`` (``PodScheduled=False``, ``Unschedulable``) with a ``FailedScheduling`` event,
  and is tried again when room frees up.
- The image is this interpreter: ``python`` runs ``sys.executable``, and the environment has
  its folder first on ``PATH``; ``pip`` installs nothing (``PIP_NO_INDEX``). The container's
  ``workingDir`` is the pod's own ``work/`` folder.
- The network: one per TrainJob (a pod subdomain). A pod hostname under it resolves to
  127.0.0.1 and each container port to a port the OS picked for that job, held for its life
  (two jobs at once never meet), in the environment the process gets.
- Restarts: ``restartPolicy`` OnFailure (JobSet's default) restarts a failed container in
  place, with a back-off (``CrashLoopBackOff``, compressed to ``backoff`` seconds and doubling),
  while the Job's backoff limit allows it (the Trainer decides: ``may_restart``); Never fails the
  pod.
- Deleting a pod stops its processes (SIGTERM, then SIGKILL after the grace period) first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kale_ext.backends.local.ports import claim_port
from tests.harness.cluster.objects import now, within
from tests.harness.cluster.podlogs import Log
from tests.harness.cluster.scheduler import place
from tests.harness.cluster.volumes import (
    Waiting,
    environment,
    expand,
    materialise,
    mounts,
    nest,
    process_env,
)

PODS = "v1/pods"
TERMINATION = "/dev/termination-log"  # where a container's termination message goes by default
#: The longest a stopped container gets before SIGKILL: its terminationGracePeriodSeconds
#: (default 30), at most this (the real control plane's process kubelet's cap alike).
GRACE_CAP = 10.0
RETRY = 0.2  # seconds between tries of a pod that waits (a volume's ConfigMap, room on a node)


@dataclass
class PodRun:
    """What the kubelet holds of one pod: its task, current process and container logs."""

    pod: dict
    folder: Path
    task: asyncio.Task | None = None
    process: asyncio.subprocess.Process | None = None
    logs: list[Log] = field(default_factory=list)  # the node container's runs, oldest first
    killed: str | None = None  # the reason a fault gave when it killed the process
    started: str = ""  # when the current run started
    volumes: dict = field(default_factory=dict)  # volume name → folder
    env: dict = field(default_factory=dict)  # the container's environment, resolved
    stopping: bool = False
    termination: Path | None = None  # the current run's termination message file


class Kubelet:
    """Every node's kubelet, with the scheduler; ``trainer`` decides restarts (``may_restart``)."""

    def __init__(self, api, root: Path, faults, backoff: float = 0.05):
        self.api, self.root, self.faults, self.backoff = api, root, faults, backoff
        self.trainer = None
        self.runs: dict[tuple[str, str], PodRun] = {}
        self.ports: dict[tuple[str, str], dict[int, object]] = {}  # (ns, subdomain) → held ports
        self.room = asyncio.Event()  # set when a pod ends or a node changes
        api.watchers.append(self.heard)
        api.graceful = self.runs_pod

    def runs_pod(self, resource, obj: dict) -> bool:
        """Whether a kubelet must stop the pod before it goes."""
        key = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
        return resource.plural == "pods" and key in self.runs

    # ----- what the API server says --------------------------------------------------------

    def heard(self, event: str, resource, obj: dict) -> None:
        if resource.plural == "nodes":
            self.room.set()
        if resource.plural != "pods":
            return
        key = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if event == "ADDED" and key not in self.runs:
            run = PodRun(obj, self.root / key[0] / key[1])
            self.runs[key] = run
            run.task = asyncio.get_running_loop().create_task(self._life(run))
        elif event == "MODIFIED" and obj["metadata"].get("deletionTimestamp") and key in self.runs:
            run = self.runs[key]
            if not run.stopping:
                run.stopping = True
                asyncio.get_running_loop().create_task(self._stop(key, run))

    async def close(self) -> None:
        """Stop every process and give back every port (the cluster shuts down)."""
        for key, run in list(self.runs.items()):
            await self._stop(key, run, remove=False)
        for namespace, subdomain in list(self.ports):
            self.release(namespace, subdomain)

    # ----- a pod's life ----------------------------------------------------------------------

    async def _update(self, run: PodRun, **status) -> dict:
        pod = self.api.get(PODS, run.pod["metadata"]["namespace"], run.pod["metadata"]["name"])
        if pod is None:
            raise asyncio.CancelledError
        pod.setdefault("status", {}).update(status)
        run.pod = await self.api.put(PODS, pod["metadata"]["namespace"], pod)
        return run.pod

    async def _event(self, run: PodRun, kind: str, reason: str, message: str, source="kubelet"):
        await self.api.record_event(run.pod, kind, reason, message, source)

    async def _life(self, run: PodRun) -> None:
        try:
            node = await self._schedule(run)
            await self._prepare(run, node)
            await self._run(run)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # a harness bug: said where a test looks (the pod's events)
            await self._event(run, "Warning", "EmulatorError", f"{type(e).__name__}: {e}")

    async def _schedule(self, run: PodRun) -> str:
        said = None
        await self._update(run, phase="Pending", conditions=[])
        while True:
            node, why = place(self.api, self.faults, run.pod, [r.pod for r in self.runs.values()])
            if node:
                break
            if why != said:
                said = why
                unscheduled = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                               "message": why, "lastTransitionTime": now()}  # fmt: skip
                await self._update(run, conditions=[unscheduled])
                await self._event(run, "Warning", "FailedScheduling", why, "default-scheduler")
            self.room.clear()
            await within(self.room.wait(), RETRY * 5)
        pod = self.api.get(PODS, run.pod["metadata"]["namespace"], run.pod["metadata"]["name"])
        pod["spec"]["nodeName"] = node
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": now()}]  # fmt: skip
        run.pod = await self.api.put(PODS, pod["metadata"]["namespace"], pod)
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        await self._event(run, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to "
                          f"{node}", "default-scheduler")  # fmt: skip
        return node

    async def _prepare(self, run: PodRun, node: str) -> None:
        """Pull the image, mount the volumes, resolve the env: wait while one cannot be done."""
        container = _container(run.pod)
        image = container.get("image", "")
        pulled, said = False, None
        while True:
            try:
                if self.faults.pod_fault("image", run.pod) is not None:
                    await self._event(run, "Warning", "Failed", f'Failed to pull image "{image}": '
                                      "rpc error: code = NotFound desc = failed to pull and unpack "
                                      f'image "{image}": not found')  # fmt: skip
                    raise Waiting(
                        "ImagePullBackOff", f'Back-off pulling image "{image}"', "BackOff"
                    )
                if not pulled:
                    pulled = True
                    await self._event(run, "Normal", "Pulled", f'Container image "{image}" '
                                      "already present on machine")  # fmt: skip
                run.volumes = materialise(self.api, run.pod, run.folder, self.root / "claims")
                run.env = environment(self.api, run.pod, container)
                return
            except Waiting as e:
                if (e.reason, e.message) != said:
                    said = (e.reason, e.message)
                    await self._waiting(run, e.reason, e.message)
                if e.event == "BackOff":
                    await self._event(run, "Normal", "BackOff", e.message)
                else:
                    await self._event(run, "Warning", e.event or "Failed", e.message)
                await asyncio.sleep(RETRY * 5 if e.event == "BackOff" else RETRY)

    async def _waiting(self, run: PodRun, reason: str, message: str | None, **extra) -> None:
        state = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
        await self._update(run, phase="Pending" if not run.logs else "Running",
                           containerStatuses=[self._status(run, state, **extra)])  # fmt: skip

    def _status(self, run: PodRun, state: dict, ready=False, last=None) -> dict:
        container = _container(run.pod)
        out = {
            "name": container["name"],
            "image": container.get("image", ""),
            "imageID": "",
            "ready": ready,
            "started": "running" in state,
            "restartCount": max(len(run.logs) - 1, 0),
            "state": state,
            "lastState": last or {},
        }
        if run.logs:
            out["containerID"] = f"emulated://{run.pod['metadata']['uid']}-{len(run.logs)}"
        return out

    async def _run(self, run: PodRun) -> None:
        """Start the container, and again after a failure while restarts are allowed."""
        last = None
        while True:
            code, reason = await self._attempt(run, last)
            uid, attempt = run.pod["metadata"]["uid"], len(run.logs)
            last = {"terminated": {"exitCode": code, "reason": reason, "finishedAt": now(),
                                   "containerID": f"emulated://{uid}-{attempt}"}}  # fmt: skip
            if run.started:  # none when it could not start (StartError): not an empty time
                last["terminated"]["startedAt"] = run.started
            message = termination_message(_container(run.pod), run.termination, run.logs[-1], code)
            if message:
                last["terminated"]["message"] = message
            policy = run.pod["spec"].get("restartPolicy", "Always")
            if policy == "Never" or (policy == "OnFailure" and code == 0):
                phase = "Failed" if code else "Succeeded"
                await self._update(run, phase=phase, containerStatuses=[self._status(run, last)])
                self.room.set()
                self.trainer.pod_ended(run.pod)
                return
            allowed = policy == "Always" or self.trainer.may_restart(run.pod)
            delay = min(self.backoff * 2 ** (attempt - 1), 5.0)
            name, ns = run.pod["metadata"]["name"], run.pod["metadata"]["namespace"]
            node = _container(run.pod)["name"]
            why = f"back-off {delay:g}s restarting failed container={node} pod={name}_{ns}"
            await self._waiting(run, "CrashLoopBackOff", why, last=last)
            await self._event(run, "Warning", "BackOff", f"Back-off restarting failed container "
                              f"{node} in pod {name}_{ns}")  # fmt: skip
            if not allowed:  # the Job failed: its controller deletes this pod
                await asyncio.Event().wait()
            await asyncio.sleep(delay)

    async def _attempt(self, run: PodRun, last: dict | None) -> tuple[int, str]:
        """One run of the container's process: (exit code, reason)."""
        container = _container(run.pod)
        log = Log(run.folder / "logs" / f"{container['name']}-{len(run.logs)}.log")
        run.logs.append(log)
        env = self._network(run.pod, run.env)
        prepared = prepare_process(container, env, run.folder)
        if prepared is None:
            await log.write(NO_COMMAND)
            await log.end()
            return 128, "StartError"
        argv, work, home, path = prepared
        run.killed, run.started = None, now()
        run.termination = run.folder / "termination" / str(len(run.logs))
        run.termination.parent.mkdir(parents=True, exist_ok=True)
        run.termination.write_bytes(b"")  # the kubelet's empty file, mounted at its path
        mounted = mounts(container, run.volumes)
        nest(mounted)
        mounted[container.get("terminationMessagePath") or TERMINATION] = str(run.termination)
        await self._event(run, "Normal", "Created", f"Created container: {container['name']}")
        try:
            run.process = await asyncio.create_subprocess_exec(
                *argv, cwd=work, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                env=process_env(env, home, mounted, path),
                start_new_session=True,
            )  # fmt: skip
        except OSError as e:
            await log.write(f"{e}\n".encode())
            await log.end()
            await self._event(run, "Warning", "Failed", f"Error: failed to start container: {e}")
            return 128, "StartError"
        await self._event(run, "Normal", "Started", f"Started container {container['name']}")
        running = {"running": {"startedAt": run.started}}
        await self._update(run, phase="Running", podIP="127.0.0.1", hostIP="127.0.0.1",
                           startTime=run.pod.get("status", {}).get("startTime") or run.started,
                           containerStatuses=[self._status(run, running, ready=True, last=last)])  # fmt: skip
        await self._pump(run, log)
        code = await run.process.wait()
        run.process = None
        if run.killed:
            return 137, run.killed
        code = 128 - code if code < 0 else code
        return code, "Completed" if code == 0 else "Error"

    async def _pump(self, run: PodRun, log: Log) -> None:
        """The process's output into its log; a fault may kill it after some lines."""
        process, lines = run.process, 0
        while chunk := await process.stdout.read(1 << 16):
            await log.write(chunk)
            lines += chunk.count(b"\n")
            for kind, reason in (("oom", "OOMKilled"), ("crash", "Error")):
                fault = None if run.killed else self.faults.pod_fault(kind, run.pod, lines)
                if fault is not None:
                    run.killed = reason
                    if kind == "oom":  # as node-problem-detector reports it: on the node
                        node = {
                            "kind": "Node",
                            "name": run.pod["spec"]["nodeName"],
                            "namespace": "default",
                        }
                        await self.api.record_event(node, "Warning", "OOMKilling", "Memory cgroup out "
                                                    f"of memory: Killed process {process.pid} (python)",
                                                    "kernel-monitor")  # fmt: skip
                    _signal(process.pid, signal.SIGKILL)
        await log.end()

    def _network(self, pod: dict, env: dict[str, str]) -> dict[str, str]:
        """The pod's env as its process sees it: the job's hostnames and ports mapped."""
        ns, subdomain = pod["metadata"]["namespace"], pod["spec"].get("subdomain")
        if not subdomain:
            return dict(env)
        held = self.ports.setdefault((ns, subdomain), {})
        for port in (
            p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports") or []
        ):
            if port not in held:
                held[port] = claim_port()  # free for the pod's own listener to bind
        ports = {str(p): str(claim.port) for p, claim in held.items()}
        suffixes = (f".{subdomain}", f".{subdomain}.{ns}", f".{subdomain}.{ns}.svc",
                    f".{subdomain}.{ns}.svc.cluster.local")  # fmt: skip

        def local(host: str) -> bool:
            return any(host.endswith(s) and "." not in host[: -len(s)] for s in suffixes)

        out = {}
        for k, v in env.items():
            host, colon, port = v.rpartition(":")
            if v in ports:
                v = ports[v]
            elif local(v):
                v = "127.0.0.1"
            elif colon and port in ports and local(host):  # host:port (JAX_COORDINATOR_ADDRESS)
                v = f"127.0.0.1:{ports[port]}"
            out[k] = v
        return out

    def release(self, namespace: str, subdomain: str) -> None:
        """The job is gone: its ports go back to the OS."""
        for holder in self.ports.pop((namespace, subdomain), {}).values():
            holder.close()

    async def _stop(self, key: tuple[str, str], run: PodRun, remove: bool = True) -> None:
        """Stop the pod's process (SIGTERM, SIGKILL after the grace period); then it goes."""
        if run.task is not None:
            run.task.cancel()
            await asyncio.gather(run.task, return_exceptions=True)
        process = run.process
        if process is not None and process.returncode is None:
            if remove:
                await self._event(
                    run, "Normal", "Killing", f"Stopping container {_container(run.pod)['name']}"
                )
            _signal(process.pid, signal.SIGTERM)
            grace = min(run.pod["spec"].get("terminationGracePeriodSeconds", 30), GRACE_CAP)
            if await within(process.wait(), grace) is None:
                _signal(process.pid, signal.SIGKILL)
                await process.wait()
            if remove:  # as a kubelet: the stopped container's end, then the pod goes
                await self._stopped(run, process.returncode)
        elif remove and run.logs and run.pod.get("status", {}).get("phase") == "Running":
            with contextlib.suppress(asyncio.CancelledError):  # waiting to restart: it failed
                await self._update(run, phase="Failed")
        for log in run.logs:
            await log.end()
        self.runs.pop(key, None)
        self.room.set()
        if remove:
            await self.api.remove(PODS, *key)

    async def _stopped(self, run: PodRun, returncode: int) -> None:
        """A deleted pod's container stopped: its terminated state (exit code 128 + the
        signal when a signal ended it) and the pod's phase (Failed unless it exited 0)."""
        code = 128 - returncode if returncode < 0 else returncode
        uid = run.pod["metadata"]["uid"]
        ended = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                "startedAt": run.started, "finishedAt": now(),
                                "containerID": f"emulated://{uid}-{len(run.logs)}"}}  # fmt: skip
        with contextlib.suppress(asyncio.CancelledError):  # gone already
            await self._update(run, phase="Failed" if code else "Succeeded",
                               containerStatuses=[self._status(run, ended)])  # fmt: skip


def termination_message(container: dict, path: Path | None, log: Log, code: int) -> str:
    """What the container left at its terminationMessagePath (at most 4096 bytes); with
    ``FallbackToLogsOnError``, a failed container's last log lines when it left nothing."""
    data = path.read_bytes()[:4096] if path is not None and path.exists() else b""
    fallback = container.get("terminationMessagePolicy") == "FallbackToLogsOnError"
    if not data and code and fallback:
        data = b"\n".join(log.path.read_bytes().splitlines()[-80:])[-2048:]
    return data.decode("utf-8", "replace")


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _container(pod: dict) -> dict:
    """The container the kubelet runs: `node` when there is one, else the first."""
    containers = pod["spec"]["containers"]
    return next((c for c in containers if c["name"] == "node"), containers[0])


NO_COMMAND = b"the kubelet needs a command: the image's entrypoint is unknown\n"


def prepare_process(
    container: dict, env: dict, folder: Path
) -> tuple[list[str], Path, Path, str] | None:
    """What a container's process runs with: its argv (``$(VAR)`` expanded; ``python`` is this
    interpreter, the image), its working folder and home (made), and PATH (this interpreter's
    folder first); None when the container names no command. Shared by the emulated kubelet
    and the control plane's process kubelet."""
    argv = [
        expand(a, env) for a in (container.get("command") or []) + (container.get("args") or [])
    ]
    if not argv:
        return None
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    work, home = folder / "work", folder / "home"
    for made in (work, home / "tmp"):
        made.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join((os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"))
    return argv, work, home, path
