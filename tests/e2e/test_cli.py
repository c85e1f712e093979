"""`kale-ext` (kale_ext.cli.main, tests/cli) against the emulated cluster: run, follow, jobs, status, logs
of every node, events and delete on the Kubernetes backend, a notebook with workspace files and
a Secret, and every injected fault shown in plain words."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.cli import cli  # noqa: E402
from tests.conftest import EXAMPLES, notebook  # noqa: E402
from tests.harness.emulated import TRAINJOBS, finished, node_state  # noqa: E402

K8S = ("--backend", "kubernetes")


def submitted(out: subprocess.CompletedProcess) -> str:
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    return name


def test_a_two_node_job_from_run_to_delete_and_each_nodes_log_is_its_own(
    emulated_cluster, tmp_path
):
    """The plain Python example (its nodes import no torch: torch.distributed's world is the
    local backend's test, the example's training the local backend's and the SDK's)."""
    shutil.copy(EXAMPLES / "plain_python.ipynb", tmp_path)
    out = cli("run", tmp_path / "plain_python.ipynb", *K8S, "--nodes", "2", "--param",
              "steps=100", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    name = submitted(out)
    assert f"[{name}] Complete" in out.stderr
    [create] = emulated_cluster.requests("POST", "trainjobs")
    assert create.params["fieldValidation"] == "Strict"
    tj = emulated_cluster.get(TRAINJOBS, name)
    assert tj["spec"]["trainer"]["numNodes"] == 2 and tj["spec"]["runtimeRef"]["name"] == (
        "torch-distributed"
    )
    for node in (0, 1):
        logs = cli("logs", name, *K8S, "--node", node)
        assert logs.returncode == 0, logs.stderr
        assert re.search(rf"^\[rank {node}\] fitted a=-?\d+\.\d+ ", logs.stdout, re.M)
        assert f"[rank {1 - node}]" not in logs.stdout
    every = cli("logs", name, *K8S).stdout
    assert "[rank 0] fitted a=" in every and "[rank 1] fitted a=" in every

    assert re.search(rf"^{name}\s+Complete\s+2\s", cli("jobs", *K8S).stdout, re.M)
    status = cli("status", name, *K8S).stdout.splitlines()
    assert status[0].startswith(f"{name}: Complete (kubernetes, torch-distributed, 2 nodes")
    assert "node 0 Succeeded" in status and "node 1 Succeeded" in status
    events = cli("events", name, *K8S).stdout
    assert events.count("Started container node") == 2 and "jobset completed successfully" in events

    workspace = [c for c in emulated_cluster.items("v1/configmaps")
                 if c["metadata"]["name"].startswith("kale-ext-workspace-")]  # fmt: skip
    assert workspace and all(c["metadata"]["ownerReferences"][0]["name"] == name for c in workspace)
    assert cli("delete", name, *K8S).stdout == f"deleted {name}\n"
    emulated_cluster.wait_for(lambda: emulated_cluster.get(TRAINJOBS, name) is None, 60, "deleted")
    assert emulated_cluster.pods(name) == [] and emulated_cluster.items("v1/configmaps") == []
    gone = cli("status", name, *K8S)
    assert gone.returncode == 1 and f'"{name}" not found (HTTP 404 NotFound)' in gone.stderr


WORKSPACE_NB = notebook(
    ("import os\nfrom helpers import double", ["imports"]),
    ("from kale_ext.distributed import DistributedConfig\n"
     "config = DistributedConfig(env_from=[{'secretRef': {'name': 'creds'}}])", ["distributed"]),
    "numbers = [int(n) for n in open('data/numbers.txt').read().split()]\n"
    "print('total', double(sum(numbers)))\n"
    "print('token', repr(os.environ['API_TOKEN']))",
)  # fmt: skip
TOKEN = "$HOME `id` \\n '\"; EOM"  # every character a shell would rewrite


def test_a_notebook_sees_its_workspace_files_and_its_secret(emulated_cluster, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "numbers.txt").write_text("1 2 3")
    (tmp_path / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "work.ipynb").write_text(json.dumps(WORKSPACE_NB))
    emulated_cluster.create("v1/secrets", {"metadata": {"name": "creds"},
                                           "stringData": {"API_TOKEN": TOKEN}})  # fmt: skip
    out = cli("run", tmp_path / "work.ipynb", *K8S, "--nodes", "2", "--follow")
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] total 12" in out.stdout
        assert f"[rank {rank}] token {TOKEN!r}" in out.stdout
    name = submitted(out)
    env = emulated_cluster.get(TRAINJOBS, name)["spec"]["trainer"]["env"]
    assert {
        "name": "API_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "creds", "key": "API_TOKEN"}},
    } in env
    assert TOKEN not in json.dumps(emulated_cluster.get(TRAINJOBS, name))  # only its reference


VOLUMES_NB = notebook(
    ("import os", ["imports"]),
    "print('token', repr(open('/etc/creds/token').read()), sorted(os.listdir('/etc/creds')))\n"
    "print('lr', open('conf/lr').read())",
)


def test_a_notebook_reads_its_secret_and_configmap_volumes(emulated_cluster, tmp_path):
    emulated_cluster.create("v1/secrets", {"metadata": {"name": "creds"},
                                           "stringData": {"token": TOKEN}})  # fmt: skip
    emulated_cluster.create(
        "v1/configmaps", {"metadata": {"name": "settings"}, "data": {"lr": "0.1"}}
    )
    (tmp_path / "vol.ipynb").write_text(json.dumps(VOLUMES_NB))
    out = cli("run", tmp_path / "vol.ipynb", *K8S, "--nodes", "2", "--follow",
              "--volume", "secret:creds:/etc/creds", "--volume", "configmap:settings:conf")  # fmt: skip
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] token {TOKEN!r} ['token']" in out.stdout
        assert f"[rank {rank}] lr 0.1" in out.stdout
    [patch] = emulated_cluster.get(TRAINJOBS, submitted(out))["spec"]["runtimePatches"]
    pod = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert {"name": "secret-creds", "secret": {"secretName": "creds"}} in pod["template"]["spec"][
        "volumes"
    ]


def wait_for_pod(cluster, test) -> dict:
    return cluster.wait_for(lambda: next((p for p in cluster.items("v1/pods") if test(p)), None),
                            120, "the pod")  # fmt: skip


def waiting(reason: str):
    return lambda pod: node_state(pod).get("waiting", {}).get("reason") == reason


def restarting_after(reason: str):
    def test(pod):
        last = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get(
            "lastState"
        ) or {}
        return (
            waiting("CrashLoopBackOff")(pod) and last.get("terminated", {}).get("reason") == reason
        )

    return test


PRINTS = notebook(
    "import time\nfor i in range(50):\n    print('step', i, flush=True)\n    time.sleep(0.1)"
)


@pytest.mark.parametrize(
    "inject, flags, when, facts",
    [
        (lambda f: f.image_pull("registry.invalid/*"), ("--image", "registry.invalid/train:1"),
         waiting("ImagePullBackOff"), ("Queued", "registry.invalid/train:1", "ImagePullBackOff")),
        (lambda f: f.unschedulable(), (), lambda p: (p.get("status") or {}).get("conditions"),
         ("Queued", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu")),
        (lambda f: f.oom(node=0), (), restarting_after("OOMKilled"),
         ("Running", "node 0", "OOMKilled", "CrashLoopBackOff")),
        (lambda f: f.crash(node=1), ("--nodes", "2"), restarting_after("Error"),
         ("Running", "node 1", "137", "CrashLoopBackOff")),
    ],
    ids=["image-pull", "unschedulable", "oom-killed", "node-crash"],
)  # fmt: skip
def test_every_fault_says_why_in_plain_words(
    emulated_cluster, write_nb, inject, flags, when, facts
):
    emulated_cluster.kubelet.backoff = 60.0  # a real kubelet's first back-off is 10 s
    inject(emulated_cluster.faults)
    out = cli("run", write_nb(PRINTS), *K8S, *flags)
    assert out.returncode == 0, out.stderr
    name = submitted(out)
    wait_for_pod(emulated_cluster, when)
    status = cli("status", name, *K8S)
    assert status.returncode == 0, status.stderr
    first = status.stdout.splitlines()[0]
    assert first.startswith(f"{name}: {facts[0]}"), status.stdout
    for fact in facts[1:]:
        assert fact in status.stdout, status.stdout
    assert "Traceback" not in status.stdout + status.stderr


def test_a_job_that_keeps_failing_ends_failed_and_says_which_job(emulated_cluster, write_nb):
    from tests.harness.runtimes import runtime_manifest

    runtime = runtime_manifest("torch-distributed")  # the namespace's own, as an admin may set
    runtime["kind"] = "TrainingRuntime"
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["backoffLimit"] = 1
    emulated_cluster.create("trainer.kubeflow.org/v1alpha1/trainingruntimes", runtime)
    emulated_cluster.faults.oom(node=0)
    out = cli("run", write_nb(PRINTS), *K8S, "--follow")
    assert out.returncode == 1
    name = submitted(out)
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, name)) == "Failed"
    # The Job controller deleted the crash-looping pod: what remains is the JobSet's word
    failed = " ".join(out.stderr.split()).split(f"[{name}] Failed: ")[-1]
    assert f"first failed job: {name}-node-0" in failed, out.stderr
    events = cli("events", name, *K8S).stdout
    assert "BackoffLimitExceeded" in events and "Back-off restarting failed container" in events


@pytest.mark.parametrize(
    "status, verb, resource, command, said",
    [
        (429, "list", "trainjobs", ("jobs",), "the API server is throttling requests: try again shortly"),
        (500, "create", "trainjobs", ("run", "NB"), "(HTTP 500 InternalError); the API server failed"),
        (504, "fetch", "trainjobs", ("status", "fit"), "did not complete within requested timeout"),
    ],
    ids=["429", "500", "504"],
)  # fmt: skip
def test_the_api_servers_refusals_in_plain_words(
    emulated_cluster, write_nb, status, verb, resource, command, said
):
    path = write_nb(PRINTS)
    if command[0] == "status":
        assert cli("run", path, *K8S, "--name", "fit").returncode == 0
    emulated_cluster.faults.api(status, verb=verb, resource=resource, times=1)
    out = cli(*[path if c == "NB" else c for c in command], *K8S)
    assert out.returncode == 1 and said in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    if command[0] == "run":  # nothing half-created: the workspace's ConfigMaps went too
        assert emulated_cluster.items("v1/configmaps") == []
        assert emulated_cluster.items(TRAINJOBS) == []
