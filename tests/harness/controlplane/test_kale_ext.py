"""kale_ext against the real control plane (real kube-apiserver, kube-controller-manager,
kube-scheduler, JobSet v0.12.0 and Kubeflow Trainer v2.3.0; pods run by the process kubelet):
the digits example on 2 nodes from ``run --follow`` to ``delete``, with the objects each real
controller makes, the logs of both ranks through ``pods/log``, the progress the compiled job posts
to the Trainer's real status server, and the Kubeflow SDK's ``TrainerClient`` reading the job."""

from __future__ import annotations

import re
import shutil
import time

from tests.cli import cli
from tests.conftest import EXAMPLES

K8S = ("--backend", "kubernetes")
GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"


def _api(kubeconfig):
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig))
    return api, client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)


def _wait(what: str, check, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"{what}: not after {timeout:.0f} s")


def test_digits_on_two_nodes_from_run_to_delete(control_plane_env, tmp_path):
    """The pods are the Job controller's, for the Jobs of the JobSet the Trainer made; the
    trainer status is the real status server's; deleting the TrainJob lets the garbage
    collector take the rest."""
    shutil.copy(EXAMPLES / "digits_ddp.ipynb", tmp_path)
    out = cli("run", tmp_path / "digits_ddp.ipynb", *K8S, "--nodes", "2", "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    assert f"[{name}] Complete" in out.stderr, out.stderr
    assert "[rank 0] test accuracy" in out.stdout + out.stderr
    assert "[rank 1] test accuracy" in out.stdout + out.stderr

    api, core, batch, custom = _api(control_plane_env.kubeconfig)
    try:
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        conditions = {c["type"]: c for c in tj["status"]["conditions"]}
        assert conditions["Complete"]["status"] == "True"
        assert conditions["Complete"]["reason"] == "AllJobsCompleted"  # from the JobSet's
        metrics = {m["name"] for m in tj["status"]["trainerStatus"]["metrics"]}
        assert {"step", "accuracy"} <= metrics  # posted by the job to the real status server
        jobset = custom.get_namespaced_custom_object(
            "jobset.x-k8s.io", "v1alpha2", "default", "jobsets", name
        )
        assert jobset["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
        pods = core.list_namespaced_pod(
            "default", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}"
        ).items
        assert len(pods) == 2 and {p.status.phase for p in pods} == {"Succeeded"}
        env = {e.name: e.value for e in pods[0].spec.containers[0].env}
        assert env["PET_NNODES"] == "2" and env["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"
        for pod in pods:
            [owner] = pod.metadata.owner_references
            job = batch.read_namespaced_job(owner.name, "default")
            assert owner.kind == "Job" and job.metadata.owner_references[0].kind == "JobSet"
            assert pod.spec.node_name == "process-node-0"  # bound by the real scheduler
        for rank in (0, 1):
            logs = cli("logs", name, *K8S, "--node", rank)
            assert logs.returncode == 0, logs.stderr
            assert f"[rank {rank}] test accuracy" in logs.stdout, logs.stdout
            assert f"[rank {1 - rank}]" not in logs.stdout

        assert re.search(rf"^{name}\s+Complete\s+2\s", cli("jobs", *K8S).stdout, re.M)
        status = cli("status", name, *K8S).stdout.splitlines()
        assert status[0].startswith(f"{name}: Complete (kubernetes, torch-distributed, 2 node(s)")
        assert "node 0 Succeeded" in status and "node 1 Succeeded" in status
        events = cli("events", name, *K8S).stdout
        assert events.count("Started container node") == 2
        assert "jobset completed successfully" in events

        assert cli("delete", name, *K8S).stdout == f"deleted {name}\n"
        selector = f"jobset.sigs.k8s.io/jobset-name={name}"
        _wait("the garbage collector deletes the JobSet's pods",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        workspace = [c for c in core.list_namespaced_config_map("default").items
                     if c.metadata.name.startswith("kale-ext-workspace-")
                     and c.metadata.owner_references[0].name == name]  # fmt: skip
        assert workspace == []
        # kale_ext deletes in the foreground: the TrainJob reads "being deleted" until the
        # garbage collector has deleted what it owns (the emulator deletes it at once)
        _wait("the TrainJob goes", lambda: cli("status", name, *K8S).returncode == 1)
        gone = cli("status", name, *K8S)
        assert gone.returncode == 1 and f'"{name}" not found (HTTP 404 NotFound)' in gone.stderr
    finally:
        api.close()
