"""The real control plane (``python -m tests.harness.controlplane``): it starts and says
``ready`` with what a TrainJob needs in place; stopping it (or its parent dying) leaves no
process and no port behind. kale_ext's own tests against it are in ``test_kale_ext.py``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import EXAMPLES
from tests.harness.controlplane.fixtures import start_control_plane, stop_control_plane


def _api(kubeconfig):
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig))
    return api, client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)


def _listening(pids: set[int]) -> set[int]:
    """The TCP ports the processes ``pids`` listen on."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _bound(port: int) -> bool:
    """Whether something listens on the port (connections lingering in TIME_WAIT aside)."""
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_control_plane_starts_and_says_ready(control_plane):
    assert re.fullmatch(r"https://127\.0\.0\.1:\d+", control_plane.server)
    assert any(line.startswith("control plane started in ") for line in control_plane.lines)
    api, core, _, custom = _api(control_plane.kubeconfig)
    try:
        [node] = core.list_node().items
        assert node.status.allocatable["cpu"] and node.status.daemon_endpoints.kubelet_endpoint.port
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
        runtimes = custom.list_cluster_custom_object("trainer.kubeflow.org", "v1alpha1",
                                                     "clustertrainingruntimes")["items"]  # fmt: skip
        names = {r["metadata"]["name"] for r in runtimes}
        assert {"torch-distributed", "xgboost-distributed", "jax-distributed"} <= names
        version = api.call_api(
            "/version",
            "GET",
            response_type="object",
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
        )
        assert version["gitVersion"] == "v1.36.2"
    finally:
        api.close()


def _stopped_cleanly(running, pids: set[int], ports: set[int]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    assert not [p for p in pids if _alive(p)], "processes left behind"
    assert not [p for p in ports if _bound(p)], "ports left bound"


def test_sigterm_stops_every_process_and_frees_every_port(tmp_path):
    running = start_control_plane(tmp_path)
    pids = running.pids()
    ports = _listening(pids)
    assert len(pids) >= 7 and len(ports) >= 5  # etcd, API server, ..., the kubelet's endpoint
    assert stop_control_plane(running) == 0
    assert running.lines[-1] == "control plane stopped"
    _stopped_cleanly(running, pids, ports)


def test_when_its_parent_dies_the_control_plane_goes_too(tmp_path):
    """A parent killed outright (SIGKILL: no chance to stop anything) takes it along."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path\n"
         "from tests.harness.controlplane.fixtures import start_control_plane\n"
         "r = start_control_plane(Path(sys.argv[1]))\nprint(r.process.pid, flush=True)\n"
         "time.sleep(3600)", str(tmp_path)],
        cwd=str(EXAMPLES.parent), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        pid = int(parent.stdout.readline())
        from pathlib import Path

        class Plane:
            process = type("P", (), {"pid": pid})()

        from tests.harness.controlplane.fixtures import RunningControlPlane

        pids = RunningControlPlane.pids(Plane)  # type: ignore[arg-type]
        ports = _listening(pids)
        assert len(pids) >= 7 and ports
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        _stopped_cleanly(None, pids, ports)
        assert Path(tmp_path / "kubeconfig").exists()
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)


def test_a_container_that_cannot_start_fails_its_pod_as_a_kubelet_says(control_plane):
    """A container with no command (the process kubelet cannot run an image's entrypoint) ends
    terminated with StartError and exit code 128, and the pod Failed: the status is accepted by
    the API server (a terminated state with an empty startedAt was refused, 422, and the pod
    stayed Pending with no container status)."""
    api, core, _, _ = _api(control_plane.kubeconfig)
    name = "cannot-start"
    try:
        core.create_namespaced_pod("default", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "example.com/no-entrypoint:1"}]},
        })  # fmt: skip
        deadline = time.monotonic() + 60
        pod = core.read_namespaced_pod(name, "default")
        while pod.status.phase != "Failed" and time.monotonic() < deadline:
            time.sleep(0.3)
            pod = core.read_namespaced_pod(name, "default")
        assert pod.status.phase == "Failed"
        [status] = pod.status.container_statuses
        ended = status.state.terminated
        assert (ended.reason, ended.exit_code, ended.started_at) == ("StartError", 128, None)
    finally:
        core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        api.close()
