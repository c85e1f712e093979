"""kale_ext against the real control plane (real kube-apiserver, kube-controller-manager,
kube-scheduler, JobSet v0.12.0 and Kubeflow Trainer v2.3.0; pods run by the process kubelet):
the digits example on 2 nodes from ``run --follow`` to ``delete``, with the objects each real
controller makes, the logs of both ranks through ``pods/log``, the progress the compiled job posts
to the Trainer's real status server, and the Kubeflow SDK's ``TrainerClient`` reading the job;
a failure on node 1 after the controllers deleted its pods."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest

from tests.cli import cli, cli_process
from tests.conftest import EXAMPLES, notebook

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
    # as a user runs it: a process of its own, its logging Python's own (not pytest's)
    out = cli_process("run", tmp_path / "digits_ddp.ipynb", *K8S, "--nodes", "2", "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    assert f"[{name}] Complete" in out.stderr, out.stderr
    assert "[rank 0] test accuracy" in out.stdout + out.stderr
    assert "[rank 1] test accuracy" in out.stdout + out.stderr
    # the example checkpoints with no claim to keep them: said once, as a warning (the
    # backend's own log said it again before the submit's warning)
    said = [x for x in out.stderr.splitlines() if "no volume keeps them" in x]
    assert len(said) == 1 and said[0].startswith("warning: checkpoints: "), out.stderr

    api, core, batch, custom = _api(control_plane_env.kubeconfig)
    try:
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        conditions = {c["type"]: c for c in tj["status"]["conditions"]}
        assert conditions["Complete"]["status"] == "True"
        assert conditions["Complete"]["reason"] == "AllJobsCompleted"  # from the JobSet's
        metrics = {m["name"] for m in tj["status"]["trainerStatus"]["metrics"]}
        assert {"step", "accuracy"} <= metrics  # posted by the job to the real status server
        assert "checkpoint_step" in metrics  # each epoch's checkpoint.save(), as report()
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
        assert env["KALE_EXT_CHECKPOINT_DIR"].endswith(f"/{name}")  # the example saves each epoch
        assert pods[0].spec.termination_grace_period_seconds == 30  # for its on_stop, patched
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
        assert status[0].startswith(f"{name}: Complete (kubernetes, torch-distributed, 2 nodes")
        assert "node 0 Succeeded" in status and "node 1 Succeeded" in status
        events = cli("events", name, *K8S).stdout
        assert events.count("Started container node") == 2
        assert "jobset completed successfully" in events

        # the Kubeflow SDK lists and reads kale_ext's job as one of its own
        from kubeflow.common.types import KubernetesBackendConfig
        from kubeflow.trainer import TrainerClient

        # the kubeconfig named (the kubernetes client reads KUBECONFIG once, when imported)
        config = KubernetesBackendConfig(config_file=str(control_plane_env.kubeconfig))
        sdk = TrainerClient(backend_config=config)
        assert name in [j.name for j in sdk.list_jobs()]
        job = sdk.get_job(name)
        assert (job.status, job.num_nodes, job.runtime.name) == ("Complete", 2, "torch-distributed")
        assert sorted(s.name for s in job.steps) == ["node-0", "node-1"]
        assert any("test accuracy" in line for line in sdk.get_job_logs(name, step="node-1"))

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


FAILS_ON_NODE_1 = notebook(
    ("import os", ["imports"]),
    "rank = int(os.environ.get('RANK', 0))\nprint('before', rank, flush=True)\n"
    "if rank == 1:\n    {}['missing']\nprint('done', rank)",
)  # fmt: skip


@pytest.fixture(scope="module")
def failed_on_node_1(control_plane, tmp_path_factory):
    """A 2-node job whose node 1 fails (KeyError), run with --follow to its end on the real
    runtime: its container restarts (OnFailure) until the Job's backoff limit, then the Job
    controller deletes the pods and the JobSet fails. Its name, once the pods are gone."""
    folder = tmp_path_factory.mktemp("fails")
    (folder / "fails.ipynb").write_text(json.dumps(FAILS_ON_NODE_1))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KUBECONFIG", str(control_plane.kubeconfig))
        patch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        out = cli("run", folder / "fails.ipynb", *K8S, "--nodes", "2", "--follow")
        assert out.returncode != 0
        [name] = [x.split()[1] for x in out.stderr.splitlines() if x.startswith("submitted")]
        assert f"[{name}] Failed: node 1" in out.stderr, out.stderr
        api, core, _, _ = _api(control_plane.kubeconfig)
        selector = f"jobset.sigs.k8s.io/jobset-name={name}"
        try:
            _wait("the Job controller deletes the failed job's pods",
                  lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        finally:
            api.close()
        yield name


def test_after_the_pods_are_gone_status_names_the_failed_node_cell_and_line(
    control_plane_env, failed_on_node_1
):
    out = cli("status", failed_on_node_1, *K8S)
    assert out.returncode == 0, out.stderr
    assert "node 1, rank 1: cell 2 (\"training\"), line 4: KeyError: 'missing'" in out.stdout, (
        out.stdout
    )
    assert "error         KeyError: 'missing'" in out.stdout


def test_after_the_pods_are_gone_logs_keep_node_1s_traceback(control_plane_env, failed_on_node_1):
    out = cli("logs", failed_on_node_1, *K8S)
    assert out.returncode == 0, out.stderr
    assert "[rank 1] KeyError: 'missing'" in out.stdout, out.stdout


SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)  # fmt: skip


def test_stop_suspends_the_trainjob_the_pods_go_and_a_rerun_is_a_new_job(
    control_plane_env, tmp_path
):
    """Stop suspends the TrainJob: the Trainer suspends its JobSet, JobSet its Jobs, and the Job
    controller deletes their pods (the process kubelet stops their processes); the TrainJob
    stays, Stopped. A rerun with fewer steps is a new job that runs to Complete."""
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(SLOW))
    out = cli("run", path, *K8S, "--name", "slow-real", "--nodes", "2")
    assert out.returncode == 0, out.stderr
    _wait("step 3 in node 1's log", lambda: "step 3" in cli("logs", "slow-real", *K8S,
                                                            "--node", 1).stdout, 120)  # fmt: skip
    stopped = cli("stop", "slow-real", *K8S)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith("slow-real: Stopped (kubernetes"), stopped.stdout
    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        tj = custom.get_namespaced_custom_object(
            GROUP, VERSION, "default", "trainjobs", "slow-real"
        )
        assert tj["spec"]["suspend"] is True
        selector = "jobset.sigs.k8s.io/jobset-name=slow-real"
        _wait("the suspended job's pods go",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        _wait("the TrainJob reads Suspended", lambda: any(
            c["type"] == "Suspended" and c["status"] == "True"
            for c in (custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs",
                      "slow-real").get("status") or {}).get("conditions") or []))  # fmt: skip
        info = json.loads(cli("status", "slow-real", *K8S, "-o", "json").stdout)
        assert (info["status_text"], info["failure"]) == ("Stopped", None), info
        again = cli("rerun", "slow-real", *K8S, "--name", "slow-again", "--param", "steps=5")
        assert again.returncode == 0, again.stderr
        assert again.stdout == "slow-again\n" and "as slow-real ran" in again.stderr
        _wait("the rerun completes", lambda: json.loads(cli("status", "slow-again", *K8S, "-o",
              "json").stdout)["status"] == "Complete", 120)  # fmt: skip
        assert "step 4" in cli("logs", "slow-again", *K8S, "--node", 1).stdout
        still = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs",
                                                    "slow-real")  # fmt: skip
        assert still["spec"]["suspend"] is True  # the stopped job stays stopped
    finally:
        api.close()


VOLUMES = notebook(
    ("import os", ["imports"]),
    "rank = int(os.environ.get('RANK', 0))\n"
    "print('token', repr(open('/etc/creds/token').read()))\n"
    "print('lr', open('conf/lr').read())\n"
    "print('notes', open('notes.txt').read())\n"
    "with open(f'/data/from-rank-{rank}', 'w') as f:\n    f.write('kept')\n"
    "print('data', sorted(os.listdir('/data')))",
)  # fmt: skip


def test_secret_configmap_and_claim_volumes_and_the_workspace(control_plane_env, tmp_path):
    """A Secret and a ConfigMap as volumes, and a PersistentVolumeClaim (bound by the real PV
    binder to the harness's folder volume) both nodes write to, kept after the job; the
    workspace ships in ConfigMaps the TrainJob owns."""
    from kubernetes import client

    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        core.create_namespaced_secret(
            "default",
            client.V1Secret(
                metadata=client.V1ObjectMeta(name="creds"), string_data={"token": "s3cret"}
            ),
        )
        core.create_namespaced_config_map(
            "default",
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"), data={"lr": "0.1"}),
        )
        core.create_namespaced_persistent_volume_claim("default", client.V1PersistentVolumeClaim(
            metadata=client.V1ObjectMeta(name="data"), spec=client.V1PersistentVolumeClaimSpec(
                access_modes=["ReadWriteMany"],
                resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}))))  # fmt: skip
        (tmp_path / "vol.ipynb").write_text(json.dumps(VOLUMES))
        (tmp_path / "notes.txt").write_text("shipped with the workspace")
        out = cli("run", tmp_path / "vol.ipynb", *K8S, "--nodes", "2", "--follow",
                  "--volume", "secret:creds:/etc/creds", "--volume", "configmap:settings:conf",
                  "--volume", "pvc:data:/data")  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        for rank in (0, 1):
            assert f"[rank {rank}] token 's3cret'" in out.stdout
            assert f"[rank {rank}] lr 0.1" in out.stdout
            assert f"[rank {rank}] notes shipped with the workspace" in out.stdout
        [name] = [x.split()[1] for x in out.stderr.splitlines() if x.startswith("submitted")]
        workspace = [c for c in core.list_namespaced_config_map("default").items
                     if c.metadata.name.startswith("kale-ext-workspace-")
                     and c.metadata.owner_references[0].name == name]  # fmt: skip
        assert workspace and all(c.metadata.owner_references[0].kind == "TrainJob"
                                 for c in workspace)  # fmt: skip
        claim = core.read_namespaced_persistent_volume_claim("data", "default")
        assert claim.status.phase == "Bound" and claim.spec.storage_class_name == "standard"
        path = core.read_persistent_volume(claim.spec.volume_name).spec.host_path.path
        from pathlib import Path

        assert sorted(p.name for p in Path(path).iterdir()) == ["from-rank-0", "from-rank-1"]
    finally:
        api.close()


def test_the_sdk_xgboost_example_on_two_nodes_of_the_real_xgboost_runtime(
    control_plane_env, tmp_path
):
    """The Kubeflow SDK's XGBoost notebook as its users write it, on the Trainer's own
    xgboost-distributed runtime: the DMLC_* settings come from the real XGBoost plugin, node 0
    runs the tracker on DMLC_TRACKER_PORT, both workers train in one world."""
    from tests.backends.local.test_frameworks import SDK_DRIVER, TRAIN_XGBOOST

    (tmp_path / "xgb.ipynb").write_text(json.dumps(notebook(TRAIN_XGBOOST, SDK_DRIVER)))
    out = cli("run", tmp_path / "xgb.ipynb", *K8S, "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    [name] = [x.split()[1] for x in out.stderr.splitlines() if x.startswith("submitted")]
    assert f"[{name}] Complete" in out.stderr
    accuracy = dict(re.findall(r"worker (\d) of 2: accuracy (\S+)", out.stdout))
    assert sorted(accuracy) == ["0", "1"] and all(float(a) > 0.9 for a in accuracy.values())
    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        assert tj["spec"]["runtimeRef"]["name"] == "xgboost-distributed"
        pods = core.list_namespaced_pod(
            "default", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}"
        ).items
        env = {e.name for e in pods[0].spec.containers[0].env}
        assert {"DMLC_NUM_WORKER", "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID"} <= env
    finally:
        api.close()


def test_the_sdk_digits_notebook_as_downloaded_on_two_nodes(control_plane_env, tmp_path):
    """examples/sdk_digits.ipynb, unedited: its train() call gives the runtime, 2 nodes and
    cpu 1 / memory 2Gi per node, which the real scheduler places on the process node."""
    shutil.copy(EXAMPLES / "sdk_digits.ipynb", tmp_path)
    out = cli("run", tmp_path / "sdk_digits.ipynb", *K8S, "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    [name] = [x.split()[1] for x in out.stderr.splitlines() if x.startswith("submitted")]
    assert f"[{name}] Complete" in out.stderr
    for rank in (0, 1):
        assert re.search(rf"rank {rank} of 2: test accuracy 0\.\d+", out.stdout), out.stdout
    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        [pod, _] = core.list_namespaced_pod(
            "default", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}"
        ).items
        assert pod.spec.containers[0].resources.requests == {"cpu": "1", "memory": "2Gi"}
    finally:
        api.close()


def test_outputs_and_result_through_a_claim_the_real_binder_bound(
    control_plane_env, tmp_path, monkeypatch
):
    """kale_ext.run(..., outputs="pvc:results"): rank 0 writes its value and files to the
    claim; this machine reads them where the claim's volume is (its hostPath folder)."""
    from kubernetes import client

    import kale_ext
    from kale_ext.backends.results import CLAIMS_ENV
    from tests.runs.test_handle import FIT

    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        core.create_namespaced_persistent_volume_claim("default", client.V1PersistentVolumeClaim(
            metadata=client.V1ObjectMeta(name="results"), spec=client.V1PersistentVolumeClaimSpec(
                access_modes=["ReadWriteMany"],
                resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}))))  # fmt: skip
        volume = _wait("the claim is bound", lambda: core.read_namespaced_persistent_volume_claim(
            "results", "default").spec.volume_name)  # fmt: skip
        held = core.read_persistent_volume(volume).spec.host_path.path
    finally:
        api.close()
    (tmp_path / "fit.ipynb").write_text(json.dumps(notebook((FIT, ["entrypoint"]))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CLAIMS_ENV, f"results={held}")
    job = kale_ext.run("fit.ipynb", backend="kubernetes", nodes=2, outputs="pvc:results",
                       name="fit-real")  # fmt: skip
    value = job.result(timeout=240)
    assert job.info().status.value == "Complete"
    assert value["world"] == 2 and value["w"].tolist() == [3.0, 3.0]
    assert [f.path for f in job.outputs] == ["history.csv", "metrics.json", "model.pt", "w.npy"]
    assert job.outputs.load("metrics.json") == {"epochs": 2}
    assert kale_ext.get_job("fit-real").result()["epochs"] == 2


KUEUE = ("kueue.x-k8s.io", "v1beta2")


def _queue(custom) -> None:
    """A ResourceFlavor, a ClusterQueue with room, and the LocalQueue `team-a` in default."""
    group, version = KUEUE
    objects = [
        ("resourceflavors", None, {"metadata": {"name": "default-flavor"}}),
        ("clusterqueues", None, {"metadata": {"name": "cq"}, "spec": {
            "namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": "default-flavor", "resources": [
                    {"name": "cpu", "nominalQuota": "16"},
                    {"name": "memory", "nominalQuota": "64Gi"}]}]}]}}),
        ("localqueues", "default", {"metadata": {"name": "team-a"},
                                    "spec": {"clusterQueue": "cq"}}),
    ]  # fmt: skip
    for plural, namespace, body in objects:
        body = {"apiVersion": f"{group}/{version}", "kind": "", **body}
        body["kind"] = {"resourceflavors": "ResourceFlavor", "clusterqueues": "ClusterQueue",
                        "localqueues": "LocalQueue"}[plural]  # fmt: skip
        if namespace:
            custom.create_namespaced_custom_object(group, version, namespace, plural, body)
        else:
            custom.create_cluster_custom_object(group, version, plural, body)


def test_a_kueue_queued_job_is_admitted_then_stopped_and_kept_stopped(control_plane_env, tmp_path):
    """On the real Kueue (v1beta2): a TrainJob of queue team-a is created suspended and admitted
    by Kueue; stop deactivates its Workload before suspending it, so Kueue does not start it
    again; its pods go; a rerun is a new job with a Workload of its own."""
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.kubernetes.stop import JOB_UID
    from kale_ext.backends.submit import submit
    from kale_ext.runs.rerun import rerun
    from kale_ext.runs.stop import stop

    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        _queue(custom)
        path = tmp_path / "nb" / "slow.ipynb"
        path.parent.mkdir()
        path.write_text(json.dumps(SLOW))
        k8s = KubernetesBackend(poll_interval=0.2)
        queued = {"config": {"run_policy": {"scheduling_policy": {"queue": "team-a"}}}}
        submit(k8s, path, {**queued, "name": "queued"})
        selector = "jobset.sigs.k8s.io/jobset-name=queued"

        def running():
            pods = core.list_namespaced_pod("default", label_selector=selector).items
            return pods and all(p.status.phase == "Running" for p in pods)

        _wait("Kueue admits the job and its pod runs", running, 120)
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", "queued")
        assert tj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"

        def workload(name):
            uid = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs",
                                                      name)["metadata"]["uid"]  # fmt: skip
            found = custom.list_namespaced_custom_object(*KUEUE, "default", "workloads",
                                                         label_selector=f"{JOB_UID}={uid}")  # fmt: skip
            return found["items"][0] if found["items"] else None

        admitted = workload("queued")
        assert any(c["type"] == "Admitted" and c["status"] == "True"
                   for c in admitted["status"]["conditions"])  # fmt: skip
        info = stop(k8s, "queued", "ana")
        assert info.status_text == "Stopped"
        _wait("the stopped job's pods go",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        time.sleep(3)  # Kueue has had time to start a job that is only suspended
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", "queued")
        assert tj["spec"]["suspend"] is True
        assert workload("queued")["spec"]["active"] is False
        assert not core.list_namespaced_pod("default", label_selector=selector).items
        assert k8s.get_job("queued").status_text == "Stopped"

        again = rerun(k8s, "queued", "queued-again")
        assert again.name == "queued-again"
        _wait("the rerun's Workload", lambda: workload("queued-again"), 60)
        assert workload("queued-again")["spec"].get("active", True) is True
        assert workload("queued")["spec"]["active"] is False
    finally:
        api.close()


def _kueue_object(custom, plural: str, body: dict, namespace: str | None = None) -> None:
    """Create a Kueue object, or leave the one of that name the session has made already."""
    from kubernetes.client.exceptions import ApiException

    kinds = {"resourceflavors": "ResourceFlavor", "clusterqueues": "ClusterQueue",
             "localqueues": "LocalQueue"}  # fmt: skip
    body = {"apiVersion": "/".join(KUEUE), "kind": kinds[plural], **body}
    try:
        if namespace:
            custom.create_namespaced_custom_object(*KUEUE, namespace, plural, body)
        else:
            custom.create_cluster_custom_object(*KUEUE, plural, body)
    except ApiException as e:
        if e.status != 409:
            raise


def _quota(cpu: str) -> dict:
    return {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": "default-flavor", "resources": [
            {"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": "64Gi"}]}]}]}  # fmt: skip


def test_kueue_states_waiting_for_quota_admitted_and_suspended_by_the_user(
    control_plane_env, tmp_path
):
    """On the real Kueue: a job (--queue) in a LocalQueue whose ClusterQueue has no CPU quota
    reads "waiting for quota" with its ClusterQueue named in `kale-ext status` and `jobs` (no
    position: the control plane serves no visibility API); given quota, it is admitted and
    Running; the user's stop reads Stopped, suspended by the user, not waiting."""
    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        _kueue_object(custom, "resourceflavors", {"metadata": {"name": "default-flavor"}})
        _kueue_object(
            custom, "clusterqueues", {"metadata": {"name": "cq-none"}, "spec": _quota("0")}
        )
        _kueue_object(custom, "localqueues", {"metadata": {"name": "no-room"},
                                              "spec": {"clusterQueue": "cq-none"}}, "default")  # fmt: skip
        listed = cli("queues", *K8S)
        assert listed.returncode == 0, listed.stderr
        assert re.search(r"^no-room +ClusterQueue cq-none", listed.stdout, re.M), listed.stdout
        path = tmp_path / "waits.ipynb"
        path.write_text(json.dumps(SLOW))
        out = cli("run", path, *K8S, "--queue", "no-room", "--cpu", "1", "--name", "waits")
        assert out.returncode == 0, out.stderr

        def status() -> str:
            shown = cli("status", "waits", *K8S)
            assert shown.returncode == 0, shown.stderr
            return shown.stdout

        waiting = "waiting for quota (Kueue: ClusterQueue cq-none): couldn't assign flavors"
        said = _wait("Kueue finds no quota for it", lambda: waiting in status() and status(), 90)
        assert said.startswith("waits: Queued (waiting for quota (Kueue: ClusterQueue cq-none)")
        assert "insufficient quota for cpu in flavor default-flavor" in said, said
        row = [line for line in cli("jobs", *K8S).stdout.splitlines() if line.startswith("waits ")]
        assert row and waiting in row[0], row

        custom.patch_cluster_custom_object(
            *KUEUE, "clusterqueues", "cq-none", {"spec": _quota("4")}
        )
        _wait("admitted, it runs", lambda: status().startswith("waits: Running"), 120)
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", "waits")
        assert tj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "no-room"

        stopped = cli("stop", "waits", *K8S)
        assert stopped.returncode == 0, stopped.stderr
        shown = status()
        assert shown.startswith("waits: Stopped"), shown
        assert "suspended by the user: its Kueue Workload is deactivated" in shown, shown
        assert "waiting" not in shown, shown
    finally:
        api.close()


def test_the_mpi_example_gets_the_mpi_plugins_launcher_and_nodes_on_the_real_trainer(
    control_plane_env, tmp_path
):
    """examples/sdk_mpi.ipynb (deepspeed-distributed, 2 nodes) submitted as it is: the real
    Trainer v2.3.0 admits kale_ext's TrainJob (its workspace patch on the launcher and on the
    nodes) and its MPI plugin makes the SSH key Secret, the hostfile (a line per node, 1 slot)
    and the JobSet: its launcher runs kale_ext's command under mpirun, beside the runtime's sshd
    node. What is checked is what the control plane makes of the job (the run itself:
    test_the_mpi_example_runs_under_open_mpi_and_sshd_with_the_launcher_as_node_0)."""
    shutil.copy(EXAMPLES / "sdk_mpi.ipynb", tmp_path)
    out = cli("run", tmp_path / "sdk_mpi.ipynb", *K8S, "--name", "mpi-real")
    assert out.returncode == 0, out.stderr
    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        hostfile = _wait("the MPI plugin's hostfile", lambda: next(
            (c.data for c in core.list_namespaced_config_map("default").items
             if c.metadata.name == "mpi-real-mpi-hostfile"), None))  # fmt: skip
        assert sorted(hostfile["hostfile"].splitlines()) == [
            "mpi-real-launcher-0-0.mpi-real slots=1",  # runLauncherAsNode: one of the 2 nodes
            "mpi-real-node-0-0.mpi-real slots=1",
        ]
        secrets = [s.metadata.name for s in core.list_namespaced_secret("default").items]
        assert "mpi-real-mpi-ssh-auth" in secrets
        jobsets = ("jobset.x-k8s.io", "v1alpha2", "default", "jobsets")
        jobset = _wait("the JobSet", lambda: next(  # applied after the hostfile and the Secret
            (j for j in custom.list_namespaced_custom_object(*jobsets)["items"]
             if j["metadata"]["name"] == "mpi-real"), None))  # fmt: skip
        pods = {j["name"]: j["template"]["spec"]["template"]["spec"]
                for j in jobset["spec"]["replicatedJobs"]}  # fmt: skip
        launcher, node = pods["launcher"], pods["node"]
        [container] = launcher["containers"]
        assert container["command"][:4] == ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python"]
        env = {e["name"]: e.get("value") for e in container.get("env") or []}
        assert env["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
        assert env["OMPI_MCA_orte_set_default_slots"] == "1"
        assert node["containers"][0]["command"] == ["/usr/sbin/sshd"]  # the runtime's
        from kale_ext.job.shipping import VOLUME

        for spec in (launcher, node):  # the workspace reaches every pod that runs the function
            volumes = {v["name"]: v for v in spec["volumes"]}
            assert VOLUME in volumes and volumes["mpi-ssh-auth"]["secret"]["secretName"] == (
                "mpi-real-mpi-ssh-auth"
            ), sorted(volumes)
            mounts = {m["name"] for m in spec["containers"][0]["volumeMounts"]}
            assert {VOLUME, "mpi-ssh-auth"} <= mounts, mounts
        assert cli("delete", "mpi-real", *K8S).returncode == 0
        selector = "jobset.sigs.k8s.io/jobset-name=mpi-real"
        _wait("the garbage collector deletes the job's pods",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
    finally:
        api.close()


def test_prune_deletes_finished_trainjobs_and_never_a_running_one(control_plane_env, tmp_path):
    """In a namespace of its own (the session's other jobs are not this test's to prune): the
    Trainer has no TTL, so `prune` deletes a Complete TrainJob, and leaves a running one."""
    from kale_ext.job.defaults import lab_settings_file

    api, core, _, custom = _api(control_plane_env.kubeconfig)
    ns = "prune-test"
    core.create_namespace({"metadata": {"name": ns}})
    settings = lab_settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"namespace": ns}))
    quick, slow = tmp_path / "quick.ipynb", tmp_path / "slow.ipynb"
    quick.write_text(json.dumps(notebook("print('quick')")))
    slow.write_text(json.dumps(SLOW))
    try:
        _wait("the namespace's default account", lambda: core.list_namespaced_service_account(
            ns, field_selector="metadata.name=default").items)  # fmt: skip
        done = cli("run", quick, *K8S, "--name", "quick-done", "--follow")
        assert done.returncode == 0, done.stdout + done.stderr
        started = cli("run", slow, *K8S, "--name", "slow-running")
        assert started.returncode == 0, started.stderr
        _wait("step 3 in the running job's log",
              lambda: "step 3" in cli("logs", "slow-running", *K8S).stdout, 120)  # fmt: skip

        dry = cli("prune", "--older-than", "0s", "--status", "complete", "--dry-run", *K8S,
                  "-o", "json")  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        listed = json.loads(dry.stdout)
        assert [(p["name"], p["status"], p["disk_bytes"]) for p in listed] == [
            ("quick-done", "Complete", None)
        ]
        custom.get_namespaced_custom_object(GROUP, VERSION, ns, "trainjobs", "quick-done")

        real = cli("prune", "--older-than", "0s", *K8S)  # every finished kind
        assert real.returncode == 0, real.stdout + real.stderr
        assert "removed 1 of 1 job(s)" in real.stdout, real.stdout

        def gone() -> bool:
            names = custom.list_namespaced_custom_object(GROUP, VERSION, ns, "trainjobs")
            return [t["metadata"]["name"] for t in names["items"]] == ["slow-running"]

        _wait("the pruned TrainJob goes (foreground: after its JobSet and pods)", gone, 60)
        status = json.loads(cli("status", "slow-running", *K8S, "-o", "json").stdout)
        assert status["status"] == "Running", status
        from kale_ext.backends.kubernetes import KubernetesBackend
        from kale_ext.errors import BackendError

        with pytest.raises(BackendError) as e:  # looked at again before it would go: refused
            KubernetesBackend(namespace=ns).prune_job("slow-running")
        assert e.value.status == 409 and "only a finished job is pruned" in str(e.value)
    finally:
        cli("delete", "slow-running", *K8S)
        core.delete_namespace(ns)


FAILS_FIRST_TIME = notebook(
    ("import os", ["imports"]),
    "attempt, rank = os.environ['KALE_EXT_RESTART'], int(os.environ.get('RANK', 0))\n"
    "print(f'attempt {attempt} rank {rank}', flush=True)\n"
    "if attempt == '0' and rank == 1:\n    raise RuntimeError('the first attempt fails')\n"
    "print('done', rank)",
)  # fmt: skip


def test_a_job_with_one_restart_whose_node_fails_once_completes(control_plane_env, tmp_path):
    """--max-restarts 1: node 1 fails on the first attempt; the job's own TrainingRuntime sets
    its JobSet's failure policy, so JobSet starts every node again (KALE_EXT_RESTART 1, from its
    restart-attempt label) and the job completes. The TrainingRuntime is the TrainJob's, and goes
    with it."""
    path = tmp_path / "once.ipynb"
    path.write_text(json.dumps(FAILS_FIRST_TIME))
    out = cli("run", path, *K8S, "--nodes", "2", "--max-restarts", "1", "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    assert f"[{name}] Complete" in out.stderr, out.stderr
    assert "warning: a restart starts from scratch: the job saves no checkpoint" in out.stderr
    for rank in (0, 1):  # followed onto the new pods JobSet made, node 1's (the failed one) too
        assert f"[rank {rank}] attempt 1 rank {rank}" in out.stdout, out.stdout

    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        tj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        assert tj["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"
        runtime = custom.get_namespaced_custom_object(
            GROUP, VERSION, "default", "trainingruntimes", name
        )
        [owner] = runtime["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == (
            "TrainJob", name, tj["metadata"]["uid"],
        )  # fmt: skip
        jobset = custom.get_namespaced_custom_object(
            "jobset.x-k8s.io", "v1alpha2", "default", "jobsets", name
        )
        assert jobset["spec"]["failurePolicy"]["maxRestarts"] == 1
        assert jobset["status"]["restarts"] == 1  # the JobSet controller started it again
        pods = core.list_namespaced_pod(
            "default", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}"
        ).items
        assert {p.metadata.labels["jobset.sigs.k8s.io/restart-attempt"] for p in pods} == {"1"}
        assert {p.status.phase for p in pods} == {"Succeeded"}
        for rank in (0, 1):  # the second attempt, on every node
            logs = cli("logs", name, *K8S, "--node", rank).stdout
            assert f"[rank {rank}] attempt 1 rank {rank}" in logs, logs
        status = cli("status", name, *K8S).stdout
        assert status.startswith(f"{name}: Complete (kubernetes, torch-distributed, 2 nodes")
        assert "restart 1 of 1" in status, status
        assert name not in cli("runtimes", *K8S).stdout  # the job's own: not one to choose

        assert cli("delete", name, *K8S).returncode == 0
        _wait("the garbage collector deletes the job's TrainingRuntime", lambda: name not in [
            r["metadata"]["name"] for r in custom.list_namespaced_custom_object(
                GROUP, VERSION, "default", "trainingruntimes")["items"]], 120)  # fmt: skip
    finally:
        api.close()


def _lose_node(core, job: str, node: int) -> None:
    """Delete node ``node``'s pod of TrainJob ``job`` mid-run, as a lost machine would."""
    selector = f"jobset.sigs.k8s.io/jobset-name={job}"
    [pod] = [p for p in core.list_namespaced_pod("default", label_selector=selector).items
             if p.metadata.labels["batch.kubernetes.io/job-completion-index"] == str(node)]  # fmt: skip
    core.delete_namespaced_pod(pod.metadata.name, "default")


LONG_FIRST_TIME = notebook(
    ("import os\nimport time", ["imports"]),
    "attempt = os.environ['KALE_EXT_RESTART']\nprint(f'attempt {attempt}', flush=True)\n"
    "for step in range(600 if attempt == '0' else 3):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.2)\nprint('done')",
)  # fmt: skip


def test_a_job_with_one_restart_whose_node_pod_is_deleted_runs_again(control_plane_env, tmp_path):
    """A node's pod deleted mid-run (a node lost) fails its Job (backoffLimit 0 in the job's
    own runtime); JobSet starts every node again, and the second attempt completes."""
    path = tmp_path / "long.ipynb"
    path.write_text(json.dumps(LONG_FIRST_TIME))
    out = cli("run", path, *K8S, "--name", "lost-node", "--nodes", "2", "--max-restarts", "1")
    assert out.returncode == 0, out.stderr
    _wait("step 3 in node 1's log", lambda: "step 3" in cli("logs", "lost-node", *K8S,
                                                            "--node", 1).stdout, 120)  # fmt: skip
    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        _lose_node(core, "lost-node", 1)
        _wait("the job completes", lambda: cli("status", "lost-node", *K8S).stdout.startswith(
            "lost-node: Complete"), 180)  # fmt: skip
        logs = cli("logs", "lost-node", *K8S).stdout
        assert "[rank 0] attempt 1" in logs and "[rank 1] attempt 1" in logs, logs
        assert cli("delete", "lost-node", *K8S).returncode == 0
    finally:
        api.close()


def _mpi_processes(job: str) -> list[str]:
    """The sshd and orted processes of job ``job``'s pods (their command line or environment
    names a pod folder of the job: the kubelet's, the sshd's SetEnv), as ``PID COMMAND``."""
    import os
    from pathlib import Path

    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            seen = argv[0] + b" " + (proc / "environ").read_bytes() + b" ".join(argv)
        except OSError:  # gone, or not ours to read
            continue
        program = os.path.basename(argv[0].split(b" ")[0].rstrip(b":"))
        if program in (b"sshd", b"orted") and f"/{job}-".encode() in seen:
            found.append(f"{proc.name} {b' '.join(argv).decode(errors='replace')}")
    return found


def test_the_mpi_example_runs_under_open_mpi_and_sshd_with_the_launcher_as_node_0(
    control_plane_env, tmp_path
):
    """examples/sdk_mpi.ipynb (deepspeed-distributed, 2 nodes) runs to Complete under the real
    Open MPI mpirun on the launcher (node 0, runLauncherAsNode), which starts rank 1 on the
    worker through the real OpenSSH sshd the runtime runs there (the process kubelet gives
    them what the image and the pod network would: image.py). mpirun brings every rank's output
    to the launcher, so node 0's log has both ranks' lines; node 1's is its sshd's."""
    shutil.copy(EXAMPLES / "sdk_mpi.ipynb", tmp_path)
    out = cli("run", tmp_path / "sdk_mpi.ipynb", *K8S, "--name", "mpi-run", "--follow")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[mpi-run] Complete" in out.stderr, out.stderr
    followed = out.stdout + out.stderr
    for rank in (0, 1):
        for step in (0, 1):  # func_args={"steps": 2}
            assert f"rank {rank}/2 step {step}: partial sum " in followed, followed
    status = cli("status", "mpi-run", *K8S).stdout
    assert status.startswith("mpi-run: Complete (kubernetes, deepspeed-distributed, 2 nodes"), (
        status
    )
    assert "node 0 Succeeded" in status.splitlines(), status
    logs = cli("logs", "mpi-run", *K8S, "--node", 0)
    assert logs.returncode == 0, logs.stderr
    assert "rank 0/2 step 1: partial sum 499000" in logs.stdout, logs.stdout
    assert "rank 1/2 step 1: partial sum 500000" in logs.stdout, logs.stdout
    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        assert cli("delete", "mpi-run", *K8S).returncode == 0
        selector = "jobset.sigs.k8s.io/jobset-name=mpi-run"
        _wait("the garbage collector deletes the job's pods",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        # the kubelet stops each pod's processes before it lets the pod go: no sshd, no orted
        assert _mpi_processes("mpi-run") == []
    finally:
        api.close()


def test_an_mpi_jobs_status_and_logs_read_the_launcher_as_node_0(control_plane_env, tmp_path):
    """A TrainJob of its own on the official deepspeed-distributed runtime, every rank waiting
    for a file: while it runs, `kale-ext logs --node 0` prints the launcher pod's log (mpirun's:
    both ranks' lines) and `--node 1` the `node` job's pod 0's (its sshd's); the status counts
    them the same way, and the launcher's end completes the job (the runtime's successPolicy)."""
    from kale_ext.backends.base import Status
    from kale_ext.backends.kubernetes import KubernetesBackend

    name, go = "mpi-views", tmp_path / "go"
    launch = (f"import os, pathlib, time; rank = os.environ['OMPI_COMM_WORLD_RANK']\n"
              f"print(f'rank {{rank}}: through mpirun', flush=True)\n"
              f"while not pathlib.Path({str(go)!r}).exists(): time.sleep(0.2)")  # fmt: skip
    trainjob = {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob", "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"name": "deepspeed-distributed", "kind": "ClusterTrainingRuntime",
                           "apiGroup": GROUP},
            "trainer": {"numNodes": 2, "command": ["mpirun", "--hostfile", "/etc/mpi/hostfile",
                                                   "python", "-c", launch]},
        },
    }  # fmt: skip
    api, core, _, custom = _api(control_plane_env.kubeconfig)
    try:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", trainjob)
        selector = f"jobset.sigs.k8s.io/jobset-name={name}"

        def pod_log(step: str, lines: int) -> str | None:
            pods = core.list_namespaced_pod("default", label_selector=(
                f"{selector},jobset.sigs.k8s.io/replicatedjob-name={step}")).items  # fmt: skip
            if len(pods) != 1 or pods[0].status.phase != "Running":
                return None
            text = core.read_namespaced_pod_log(pods[0].metadata.name, "default", container="node")
            return text if len(text.splitlines()) >= lines else None

        def both_ranks() -> str | None:
            text = pod_log("launcher", 2) or ""
            return text if all(f"rank {r}: through mpirun" in text for r in (0, 1)) else None

        launcher = _wait("both ranks' lines in the launcher's log", both_ranks, 120)
        worker_log = _wait("the worker's sshd", lambda: pod_log("node", 1))
        assert "Server listening on 127.0.0.1 port" in worker_log, worker_log
        assert "through mpirun" not in worker_log and "Server listening" not in launcher
        info = KubernetesBackend(poll_interval=0.2).get_job(name)
        assert [(n.index, n.state) for n in info.nodes] == [(0, "Running"), (1, "Running")]
        running = " ".join(p.split()[1] for p in _mpi_processes(name))  # the worker's, for rank 1
        assert "sshd" in running and "orted" in running, _mpi_processes(name)
        for node, own, other in ((0, "through mpirun", "Server listening"),
                                 (1, "Server listening", "through mpirun")):  # fmt: skip
            out = cli("logs", name, *K8S, "--node", node)
            assert out.returncode == 0, out.stderr
            assert own in out.stdout and other not in out.stdout, out.stdout
        go.touch()  # every rank ends: the JobSet's success policy (the launcher) completes it
        backend = KubernetesBackend()
        _wait("Complete", lambda: backend.get_job(name).status is Status.COMPLETE)
        info = backend.get_job(name)
        assert (info.nodes[0].index, info.nodes[0].state) == (0, "Succeeded")
        out = cli("logs", name, *K8S, "--node", 0)
        assert out.returncode == 0, out.stderr
        assert "[node 0] rank 0: through mpirun" in out.stdout, out.stdout
        assert "[node 0] rank 1: through mpirun" in out.stdout, out.stdout
        custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        _wait("the garbage collector deletes the job's pods",
              lambda: not core.list_namespaced_pod("default", label_selector=selector).items)  # fmt: skip
        assert _mpi_processes(name) == []  # the kubelet stopped them with their pods
    finally:
        try:
            custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "trainjobs", name)
        except Exception:  # noqa: BLE001 (already gone)
            pass
        api.close()


def test_the_digits_example_resumes_from_its_checkpoint_after_a_node_pod_is_deleted(
    control_plane_env, tmp_path
):
    """Issue 43's promise on the real control plane: the example keeps its checkpoints on a claim
    (`--checkpoints pvc:NAME`); node 1's pod deleted after a save, the JobSet starts both nodes
    again (`--max-restarts 1`) and the function resumes from the last checkpoint to Complete."""
    from kubernetes import client

    api, core, _, _ = _api(control_plane_env.kubeconfig)
    try:
        core.create_namespaced_persistent_volume_claim("default", client.V1PersistentVolumeClaim(
            metadata=client.V1ObjectMeta(name="ckpt"), spec=client.V1PersistentVolumeClaimSpec(
                access_modes=["ReadWriteMany"],
                resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}))))  # fmt: skip
        shutil.copy(EXAMPLES / "digits_ddp.ipynb", tmp_path)
        out = cli("run", tmp_path / "digits_ddp.ipynb", *K8S, "--name", "digits-lost", "--nodes",
                  "2", "--max-restarts", "1", "--checkpoints", "pvc:ckpt", "--param", "epochs=30",
                  "--param", "batch_size=8")  # fmt: skip
        assert out.returncode == 0, out.stderr

        def saved() -> int:
            found = re.search(r"^checkpoint    step (\d+),",
                              cli("status", "digits-lost", *K8S).stdout, re.M)  # fmt: skip
            return int(found.group(1)) if found else 0

        _wait("a checkpoint reported", lambda: saved() >= 2, 240)
        _lose_node(core, "digits-lost", 1)
        _wait("the job completes", lambda: cli("status", "digits-lost", *K8S).stdout.startswith(
            "digits-lost: Complete"), 300)  # fmt: skip
        logs = cli("logs", "digits-lost", *K8S, "--node", 0).stdout
        [after] = re.findall(r"\[rank 0\] resumed after epoch (\d+)", logs)
        assert int(after) >= 2, logs  # from the claim's checkpoint, not from scratch
        assert "[rank 0] test accuracy" in logs
        assert cli("delete", "digits-lost", *K8S).returncode == 0
    finally:
        api.close()
