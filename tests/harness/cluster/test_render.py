"""The pods the emulated Trainer renders from a TrainJob and its runtime, as Trainer v2.3
with JobSet would: the trainer's overrides, the torch plugin's environment, runtime patches,
JobSet's defaults and labels."""

import copy

import pytest

from tests.harness.cluster.render import (
    MASTER_PORT,
    claim_volumes,
    num_proc_per_node,
    render,
    render_jobs,
)
from tests.harness.emulated import patch_of, trainjob
from tests.harness.runtimes import runtime_manifest


def env_of(pod: dict) -> dict:
    [container] = pod["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


def test_each_node_gets_a_pod_with_the_torch_plugins_environment():
    tj = trainjob("fit", nodes=2, image="repo/img:1", env=[{"name": "LR", "value": "0.1"}])
    tj["metadata"]["namespace"] = "team"
    rendered = render(tj, runtime_manifest("torch-distributed"))
    assert rendered.job == "fit-node-0" and rendered.trainer
    assert [p["metadata"]["generateName"] for p in rendered.pods] == [
        "fit-node-0-0-",
        "fit-node-0-1-",
    ]
    for index, pod in enumerate(rendered.pods):
        [container] = pod["spec"]["containers"]
        assert container["image"] == "repo/img:1"
        assert container["command"] == ["python", "-c", "print('hi')"]
        assert container["ports"] == [{"containerPort": MASTER_PORT}]
        assert env_of(pod) == {
            "LR": "0.1",
            "PET_NNODES": "2",
            "PET_NPROC_PER_NODE": "1",
            "PET_NODE_RANK": {"fieldRef": {
                "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}},
            "PET_MASTER_ADDR": "fit-node-0-0.fit",
            "PET_MASTER_PORT": "29500",
            "JOB_COMPLETION_INDEX": {"fieldRef": {"apiVersion": "v1", "fieldPath":
                "metadata.labels['batch.kubernetes.io/job-completion-index']"}},  # the Job's
        }  # fmt: skip
        meta = pod["metadata"]
        assert meta["annotations"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert meta["labels"]["jobset.sigs.k8s.io/jobset-name"] == "fit"
        assert meta["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] == "node"
        assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == (f"fit-node-0-{index}", "fit")
        assert pod["spec"]["restartPolicy"] == "OnFailure"


def test_the_trainer_overrides_the_runtime_container():
    runtime = runtime_manifest("torch-distributed")
    [step] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    node = step["template"]["spec"]["template"]["spec"]["containers"][0]
    node.update(command=["old"], args=["--old"], env=[{"name": "A", "value": "runtime"},
                                                      {"name": "KEEP", "value": "1"}],
                resources={"limits": {"cpu": "4", "nvidia.com/gpu": "1"}})  # fmt: skip
    tj = trainjob("fit", args=["--new"], env=[{"name": "A", "value": "job"}],
                  resourcesPerNode={"limits": {"cpu": "2"}, "requests": {"memory": "1Gi"}})  # fmt: skip
    tj["metadata"]["namespace"] = "team"
    [pod] = render(tj, runtime).pods
    [container] = pod["spec"]["containers"]
    assert container["command"] == ["python", "-c", "print('hi')"] and container["args"] == [
        "--new"
    ]
    assert container["image"] == node["image"]
    assert env_of(pod)["A"] == "job" and env_of(pod)["KEEP"] == "1"
    assert container["resources"] == {"requests": {"memory": "1Gi"},
                                      "limits": {"cpu": "2", "nvidia.com/gpu": "1"}}  # fmt: skip


def test_runtime_patches_apply_in_order():
    volume = {"name": "data", "configMap": {"name": "data"}}
    first = patch_of(volumes=[volume], mounts=[{"name": "data", "mountPath": "/data"}],
                     labels={"team": "a"}, node_selector={"pool": "cpu"})  # fmt: skip
    second = copy.deepcopy(first)
    second["manager"] = "example.com/second"
    second["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"] = {"metadata": {"labels": {"team": "b"}}}  # fmt: skip
    tj = trainjob("fit", patches=[first, second])
    tj["metadata"]["namespace"] = "team"
    [pod] = render(tj, runtime_manifest("torch-distributed")).pods
    assert pod["spec"]["volumes"] == [volume] and pod["spec"]["nodeSelector"] == {"pool": "cpu"}
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert pod["metadata"]["labels"]["team"] == "b"


def test_every_replicated_job_gets_its_pods_and_jobsets_indexes():
    tj = trainjob("fit")
    tj["metadata"]["namespace"] = "team"
    tj["spec"]["initializer"] = {"dataset": {"storageUri": "hf://kale/data"}}
    runtime = runtime_manifest("torch-distributed-with-cache")
    init, node = render_jobs(tj, runtime)
    assert (init.job, init.trainer, node.job, node.trainer) == (
        "fit-dataset-initializer-0", False, "fit-node-0", True)  # fmt: skip
    [pod] = init.pods
    assert {"name": "STORAGE_URI", "value": "hf://kale/data"} in pod["spec"]["containers"][0]["env"]
    labels = [p["metadata"]["labels"] for p in (pod, node.pods[0])]
    assert [(lb["jobset.sigs.k8s.io/job-global-index"], lb["jobset.sigs.k8s.io/global-replicas"])
            for lb in labels] == [("0", "2"), ("1", "2")]  # fmt: skip
    assert labels[0]["jobset.sigs.k8s.io/jobset-uid"] == labels[1]["jobset.sigs.k8s.io/jobset-uid"]


def test_a_claim_template_mounted_by_a_pod_becomes_its_volume():
    pod = {"containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}
    policies = [{"templates": [{"metadata": {"name": "data"}}, {"metadata": {"name": "other"}}]}]
    claim_volumes(pod, policies, "fit")
    assert pod["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-fit"}}]


@pytest.mark.parametrize(
    "trainer, container, expected",
    [
        ({"numProcPerNode": 3}, {}, "3"),
        ({"resourcesPerNode": {"limits": {"cpu": "2500m"}}}, {}, "3"),
        ({"resourcesPerNode": {"requests": {"cpu": "500m"}, "limits": {"cpu": "4"}}}, {}, "1"),
        ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "2", "cpu": "8"}}}, {}, "auto"),
        ({}, {"resources": {"limits": {"nvidia.com/gpu": 1}}}, "auto"),
        # v2.3.0: GPUs only in the runtime, memory in the TrainJob: the CPU count (trainer#3974)
        ({"resourcesPerNode": {"limits": {"memory": "1Gi"}}},
         {"resources": {"limits": {"nvidia.com/gpu": 1}}}, "1"),
        ({}, {}, "1"),
    ],
)  # fmt: skip
def test_procs_per_node(trainer, container, expected):
    assert num_proc_per_node(trainer, container) == expected


@pytest.mark.parametrize(
    "runtime, gpus, expected",
    [
        ("xgboost-distributed", None, {"DMLC_TRACKER_URI": "fit-node-0-0.fit",
                                       "DMLC_TRACKER_PORT": "29500", "DMLC_NUM_WORKER": "2"}),
        ("xgboost-distributed", "2", {"DMLC_NUM_WORKER": "4"}),
        ("jax-distributed", None, {"JAX_NUM_PROCESSES": "2",
                                   "JAX_COORDINATOR_ADDRESS": "fit-node-0-0.fit:29500"}),
    ],
)  # fmt: skip
def test_other_runtimes_get_their_own_plugins_environment(runtime, gpus, expected):
    tj = trainjob("fit", nodes=2, image="repo/img:1")
    if gpus:
        tj["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": gpus}}
    rendered = render(tj, runtime_manifest(runtime))
    index = {"fieldRef": {
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}  # fmt: skip
    rank = "DMLC_TASK_ID" if runtime.startswith("xgboost") else "JAX_PROCESS_ID"
    for pod in rendered.pods:
        env = env_of(pod)
        assert {k: env[k] for k in expected} == expected and env[rank] == index
        assert not any(k.startswith("PET_") for k in env)
        assert pod["spec"]["containers"][0]["ports"] == [{"containerPort": MASTER_PORT}]


def test_the_pods_carry_jobsets_labels_and_what_the_api_server_defaults():
    """JobSet v0.12.0's labels (its job key: sha1 of namespace/job) and annotations, and the API
    server's pod defaults, as the real control plane makes them (test_conformance.py)."""
    from tests.harness.cluster.render import api_defaults

    tj = trainjob("fit", patches=[patch_of(volumes=[{"name": "c", "configMap": {"name": "c"}}])])
    tj["metadata"]["namespace"] = "team"
    rendered = render(tj, runtime_manifest("torch-distributed"))
    [pod] = rendered.pods
    labels, notes = pod["metadata"]["labels"], pod["metadata"]["annotations"]
    assert (
        labels["jobset.sigs.k8s.io/job-key"] == "48faf1d916d5a575a33727e23ff088010e21b214"
    )  # sha1 of team/fit-node-0
    assert labels["controller-uid"] == labels["batch.kubernetes.io/controller-uid"] == rendered.uid
    assert notes["jobset.sigs.k8s.io/jobset-uid"] == labels["jobset.sigs.k8s.io/jobset-uid"]
    assert {labels[f"jobset.sigs.k8s.io/{k}"] for k in ("restart-attempt", "priority")} == {"0"}
    api_defaults(pod)
    [container] = pod["spec"]["containers"]
    assert container["ports"] == [{"containerPort": MASTER_PORT, "protocol": "TCP"}]
    assert container["resources"] == {} and pod["spec"]["serviceAccountName"] == "default"
    assert pod["spec"]["volumes"] == [{"name": "c", "configMap": {"name": "c", "defaultMode": 420}}]
    ranks = [e for e in container["env"] if e["name"] == "PET_NODE_RANK"]
    assert ranks[0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"


def test_the_api_server_defaults_a_containers_requests_to_its_limits():
    from tests.harness.cluster.render import api_defaults

    pod = {"spec": {"containers": [{"name": "node", "resources": {
        "limits": {"nvidia.com/gpu": 2, "cpu": "1"}, "requests": {"cpu": "500m"}}}]}}  # fmt: skip
    api_defaults(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"nvidia.com/gpu": 2,
                                                                     "cpu": "500m"}  # fmt: skip
