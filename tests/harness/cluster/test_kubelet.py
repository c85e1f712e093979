"""The emulated scheduler and kubelet: each pod's command runs as a local process with the
pod's environment, volumes at their mount paths, in its own folder, on the job's own network;
pods wait for room on a node and for what their volumes need."""

import json
from pathlib import Path

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.harness.emulated import (  # noqa: E402
    finished,
    node_state,
    patch_of,
    submit,
    trainjob,
)

ENV = "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('PET_')} | {'cwd': os.getcwd()}))"
RENDEZVOUS = """
import os, socket, time
addr, port, rank = os.environ["PET_MASTER_ADDR"], int(os.environ["PET_MASTER_PORT"]), os.environ["PET_NODE_RANK"]
if rank == "0":
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((addr, port)); server.listen(1)
    peer, _ = server.accept(); print("node 0 got", peer.recv(100).decode())
else:
    for _ in range(600):
        try:
            socket.create_connection((addr, port), timeout=1).sendall(b"hello from node 1"); break
        except OSError:
            time.sleep(0.05)
    print("node 1 sent")
"""


def log_of(core, pod: dict) -> str:
    """The pod's log as its bytes (the client would parse a log that is JSON, and print it)."""
    answer = core.read_namespaced_pod_log(pod["metadata"]["name"], "team", container="node",
                                          _preload_content=False)  # fmt: skip
    return answer.data.decode()


def test_each_node_runs_with_the_torch_plugins_environment_in_its_own_folder(
    emulated_cluster, kube_api
):
    core, custom = kube_api
    submit(custom, trainjob("fit", script=ENV, nodes=2))
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    seen = [json.loads(log_of(core, p)) for p in emulated_cluster.pods("fit")]
    ports = {s["PET_MASTER_PORT"] for s in seen}
    assert len(ports) == 1 and ports != {"29500"}  # the job's own port, mapped from 29500
    for rank, (pod, env) in enumerate(zip(emulated_cluster.pods("fit"), seen, strict=True)):
        assert env | {"PET_MASTER_PORT": "p", "cwd": "c"} == {
            "PET_NNODES": "2", "PET_NPROC_PER_NODE": "1", "PET_NODE_RANK": str(rank),
            "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": "p", "cwd": "c"}  # fmt: skip
        folder = emulated_cluster.folder / "team" / pod["metadata"]["name"]
        assert Path(env["cwd"]) == folder / "work"
        spec_env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert (
            spec_env["PET_MASTER_ADDR"] == "fit-node-0-0.fit"
            and spec_env["PET_MASTER_PORT"] == "29500"
        )


FRAMEWORK = "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if k[:4] in ('DMLC', 'JAX_', 'PET_')}))"


@pytest.mark.parametrize("runtime", ["xgboost-distributed", "jax-distributed"])
def test_other_runtimes_nodes_run_with_their_plugins_environment(
    emulated_cluster, kube_api, runtime
):
    core, custom = kube_api
    tj = trainjob("fit", script=FRAMEWORK, nodes=2)
    tj["spec"]["runtimeRef"]["name"] = runtime
    submit(custom, tj)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    seen = [json.loads(log_of(core, p)) for p in emulated_cluster.pods("fit")]
    if runtime.startswith("xgboost"):
        ports = {s.pop("DMLC_TRACKER_PORT") for s in seen}
        assert seen == [{"DMLC_TRACKER_URI": "127.0.0.1", "DMLC_TASK_ID": str(k),
                         "DMLC_NUM_WORKER": "2"} for k in (0, 1)]  # fmt: skip
    else:
        ports = {s.pop("JAX_COORDINATOR_ADDRESS").removeprefix("127.0.0.1:") for s in seen}
        assert seen == [{"JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": str(k)} for k in (0, 1)]
    assert len(ports) == 1 and ports != {"29500"}  # the job's own port, mapped from 29500


def test_the_nodes_of_a_job_reach_each_other(emulated_cluster, kube_api):
    core, custom = kube_api
    submit(custom, trainjob("fit", script=RENDEZVOUS, nodes=2))
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    zero, one = emulated_cluster.pods("fit")
    assert (
        log_of(core, zero) == "node 0 got hello from node 1\n"
        and log_of(core, one) == "node 1 sent\n"
    )


def test_volumes_appear_at_their_mount_paths(emulated_cluster, kube_api):
    core, custom = kube_api
    core.create_namespaced_secret(
        "team", {"metadata": {"name": "creds"}, "stringData": {"token": "$3cr`t"}}
    )
    core.create_namespaced_config_map("team", {"metadata": {"name": "conf"}, "data": {"lr": "0.1"}})
    volumes = [{"name": "creds", "secret": {"secretName": "creds"}},
               {"name": "conf", "configMap": {"name": "conf"}}]  # fmt: skip
    mounts = [{"name": "creds", "mountPath": "/etc/creds", "readOnly": True},
              {"name": "conf", "mountPath": "/var/run/conf"}]  # fmt: skip
    script = ("import os; print(open('/etc/creds/token').read(), os.listdir('/var/run/conf'), "
              "os.environ['LR'])")  # fmt: skip
    env = [{"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "conf", "key": "lr"}}}]
    submit(custom, trainjob("fit", script=script, env=env,
                            patches=[patch_of(volumes=volumes, mounts=mounts)]))  # fmt: skip
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert log_of(core, emulated_cluster.pods("fit")[0]) == "$3cr`t ['lr'] 0.1\n"


def test_a_pod_waits_for_the_configmap_its_volume_needs(emulated_cluster, kube_api):
    core, custom = kube_api
    volume = {"name": "conf", "configMap": {"name": "late"}}
    submit(custom, trainjob("fit", script="print(open('/conf/k').read())",
                            patches=[patch_of(volumes=[volume], mounts=[{"name": "conf", "mountPath": "/conf"}])]))  # fmt: skip
    waiting = emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods("fit")
                                                 if node_state(p).get("waiting")])  # fmt: skip
    assert node_state(waiting[0])["waiting"] == {"reason": "ContainerCreating", "message":
        'MountVolume.SetUp failed for volume "conf" : configmap "late" not found'}  # fmt: skip
    assert any(e["reason"] == "FailedMount" for e in emulated_cluster.events())
    core.create_namespaced_config_map("team", {"metadata": {"name": "late"}, "data": {"k": "v"}})
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert log_of(core, emulated_cluster.pods("fit")[0]) == "v\n"


def test_pods_wait_for_room_on_a_node(tmp_path):
    from kubernetes import client, config

    from tests.harness.cluster import EmulatedCluster

    with EmulatedCluster(tmp_path, nodes=({"cpu": "3", "memory": "8Gi"},)) as cluster:
        custom = client.CustomObjectsApi(config.new_client_from_config(str(cluster.kubeconfig)))
        gate = tmp_path / "go"
        script = f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)"
        submit(custom, trainjob("fit", script=script, nodes=2,
                                resourcesPerNode={"requests": {"cpu": "2"}}))  # fmt: skip
        pending = cluster.wait_for(lambda: [p for p in cluster.pods("fit") if (p.get("status") or {}).get(
            "conditions", [{}])[0].get("reason") == "Unschedulable"])  # fmt: skip
        [condition] = pending[0]["status"]["conditions"]
        assert condition["message"] == "0/1 nodes are available: 1 Insufficient cpu."
        assert pending[0]["status"]["phase"] == "Pending"
        gate.write_text("")  # node 0 ends: its cpu frees up for node 1
        assert cluster.wait_for(lambda: finished(cluster, "fit")) == "Complete"
        assert any(e["reason"] == "FailedScheduling" for e in cluster.events())


def test_a_node_selector_no_node_matches(emulated_cluster, kube_api):
    submit(kube_api[1], trainjob("fit", patches=[patch_of(node_selector={"pool": "gpu"})]))
    pod = emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods("fit")
                                             if p["status"].get("conditions")])[0]  # fmt: skip
    assert pod["status"]["conditions"][0]["message"] == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    )


def test_commands_and_args_expand_variables_as_kubernetes_does(emulated_cluster, kube_api):
    core, custom = kube_api
    body = trainjob("fit", script="import sys; print(sys.argv[1:])",
                    args=["$(PET_NNODES)", "$$(PET_NNODES)", "$(UNKNOWN)", "$HOME"])  # fmt: skip
    submit(custom, body)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    assert (
        log_of(core, emulated_cluster.pods("fit")[0])
        == "['1', '$(PET_NNODES)', '$(UNKNOWN)', '$HOME']\n"
    )


WRITES_MESSAGE = """
import os, sys
path = "/dev/termination-log"
if os.path.isfile(path) and not os.path.getsize(path):
    with open(path, "w") as f:
        f.write('{"why": "cell 2, line 3"}')
sys.exit(4)
"""


def test_a_container_leaves_its_termination_message(emulated_cluster, kube_api):
    submit(kube_api[1], trainjob("fit", script=WRITES_MESSAGE))
    pod = emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods("fit")
                                             if node_state(p).get("waiting", {}).get("reason") == "CrashLoopBackOff"])[0]  # fmt: skip
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"], last["message"]) == (
        4,
        "Error",
        '{"why": "cell 2, line 3"}',
    )


def test_without_a_message_the_fallback_policy_takes_the_last_lines(tmp_path):
    from tests.harness.cluster.kubelet import termination_message
    from tests.harness.cluster.podlogs import Log

    log = Log(tmp_path / "log")
    log.path.write_bytes(b"".join(b"line %d\n" % i for i in range(100)))
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    fallback = {"terminationMessagePolicy": "FallbackToLogsOnError"}
    assert termination_message(fallback, empty, log, 1).splitlines()[0] == "line 20"
    assert termination_message(fallback, empty, log, 0) == ""
    assert termination_message({}, empty, log, 1) == ""
