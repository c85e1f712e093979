"""The emulated cluster (``tests/harness/cluster``) as pytest fixtures, and small helpers to
make TrainJobs and talk to it through the real kubernetes client.

Load with ``pytest_plugins = ["tests.harness.emulated"]`` or import the fixtures. It needs
``kmock`` (the test extra, Python ≥ 3.11): without it the tests that use it skip, saying so.
"""

from __future__ import annotations

import pytest

from tests.harness.crd import validate_trainjob

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
TRAINJOBS = f"{GROUP}/{VERSION}/trainjobs"


@pytest.fixture
def emulated_cluster(request, tmp_path, monkeypatch):
    """A running emulated cluster; KUBECONFIG points at it for this test (and its children).
    Indirect parameters are its options: ``@pytest.mark.parametrize("emulated_cluster",
    [{"trainer_status": True}], indirect=True)`` turns the Trainer's TrainJobStatus gate on."""
    pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (the test extra, "
                        "Python ≥ 3.11)")  # fmt: skip
    from tests.harness.cluster import EmulatedCluster

    options = getattr(request, "param", None) or {}
    with EmulatedCluster(tmp_path / "cluster", **options) as cluster:
        monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield cluster


@pytest.fixture
def kube_api(emulated_cluster):
    """(CoreV1Api, CustomObjectsApi) of the kubernetes client, through the kubeconfig."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(emulated_cluster.kubeconfig))
    yield client.CoreV1Api(api), client.CustomObjectsApi(api)
    api.close()


def trainjob(name: str, script: str = "print('hi')", nodes: int = 1, valid: bool = True,
             patches: list | None = None, **trainer) -> dict:  # fmt: skip
    """A torch-distributed TrainJob whose node runs ``python -c script``, with ``trainer``
    fields and runtime ``patches`` (checked against the strict schema and the Trainer's rules
    unless ``valid=False``)."""
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime",
                           "apiGroup": GROUP},
            "trainer": {"command": ["python", "-c", script], "numNodes": nodes, **trainer},
        },
    }  # fmt: skip
    if patches:
        body["spec"]["runtimePatches"] = patches
    if valid:
        validate_trainjob(body)
    return body


def patch_of(*, volumes=(), mounts=(), labels=None, node_selector=None) -> dict:
    """A runtime patch for the `node` job's pods (volumes mounted in the `node` container)."""
    pod: dict = {}
    if volumes:
        pod["volumes"] = list(volumes)
    if mounts:
        pod["containers"] = [{"name": "node", "volumeMounts": list(mounts)}]
    if node_selector:
        pod["nodeSelector"] = node_selector
    template: dict = {"spec": pod}
    if labels:
        template["metadata"] = {"labels": labels}
    job = {"name": "node", "template": {"spec": {"template": template}}}
    return {"manager": "example.com/tests",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [job]}}}}  # fmt: skip


def submit(custom, body: dict, namespace: str = "team") -> dict:
    """Create a TrainJob as kale_ext does (strict field validation)."""
    return custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "trainjobs", body,
                                                  field_validation="Strict")  # fmt: skip


def conditions(cluster, name: str) -> dict[str, tuple[str, str, str]]:
    """The TrainJob's conditions: type → (status, reason, message)."""
    tj = cluster.get(TRAINJOBS, name) or {}
    return {c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
            for c in (tj.get("status") or {}).get("conditions") or []}  # fmt: skip


def finished(cluster, name: str) -> str | None:
    """Complete or Failed once the TrainJob has finished."""
    found = conditions(cluster, name)
    return next((k for k in ("Complete", "Failed") if found.get(k, ("",))[0] == "True"), None)


def node_state(pod: dict) -> dict:
    """The pod's `node` container state ({} before it has one)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return statuses[0].get("state") or {}


def trainer_status(cluster, name: str) -> dict | None:
    """The TrainJob's ``status.trainerStatus`` (None while it has none)."""
    return ((cluster.get(TRAINJOBS, name) or {}).get("status") or {}).get("trainerStatus")


def trainer_status_env(cluster, name: str, folder, namespace: str = "team") -> dict[str, str]:
    """What the Trainer's TrainJobStatus plugin gives job ``name``'s pods (the cluster's gate
    on), for a process run here: the status URL, the CA file, a token file in ``folder``."""
    from tests.harness.cluster import trainer_status as feature

    pod = {"metadata": {"name": f"{name}-node-0-0-abcde", "namespace": namespace}}
    token = folder / "trainer-token"
    token.write_text(cluster.api.tokens.issue(pod, feature.audience(namespace, name)))
    return {feature.URL_ENV: cluster.status_server.base + feature.status_path(namespace, name),
            feature.CA_ENV: str(cluster.status_server.certs.ca), feature.TOKEN_ENV: str(token)}  # fmt: skip
