"""Same job as the SDK, proven: each Kubeflow SDK notebook (sdk_notebooks.py) is submitted once
through kale_ext and once by running its own cells with the real ``kubeflow`` SDK
(``TrainerClient``'s Kubernetes backend), to the same emulated cluster; the two TrainJobs'
``spec`` are compared field by field. The only differences allowed are listed in ALLOWED.

The cluster's nodes take no pods, so nothing runs: the TrainJobs are what is compared."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from kale_ext.job.trainjob import ANNOTATION, source_of
from tests.compile import sdk_notebooks as nbs
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob

TRAINJOBS = "trainer.kubeflow.org/v1alpha1/trainjobs"

#: What kale_ext's TrainJob may have that the SDK's has not (and why).
ALLOWED = {
    "metadata.annotations": f"kale_ext's own provenance ({ANNOTATION}*)",
    "metadata.labels": "none beyond the SDK's (checked: the SDK's labels are all kept)",
    "spec.runtimePatches": "kale_ext's workspace patch (manager kale-ext.io/...) after the SDK's",
    "spec.runtimeRef.apiGroup": "kale_ext names the API group, the CRD's default",
    "spec.trainer.image": "kale_ext states the image when the notebook names one (else neither)",
    "spec.trainer.command": "the same function and arguments, run byte-exact (no heredoc)",
    "quantities": "kale_ext writes every quantity as a string ('2'; the SDK sends 2.0)",
}


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    pytest.importorskip("kubeflow.trainer", reason="the parity test needs the sdk extra")
    pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (test extra)")
    from tests.harness.cluster import EmulatedCluster

    idle = ({"cpu": "64", "memory": "256Gi", "pods": "0"},)  # room, but no pod is placed
    with EmulatedCluster(tmp_path / "cluster", nodes=idle) as running:
        monkeypatch.setenv("KUBECONFIG", str(running.kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield running


def sdk_trainjobs(cluster, cells: list[str], folder) -> list[dict]:
    """Run the notebook's cells as a script with the real SDK; the TrainJobs it created, fewest
    nodes first."""
    script = folder / "sdk_side.py"  # a file: the SDK reads the function's source from it
    script.write_text("\n\n".join(cells))
    before = {tj["metadata"]["name"] for tj in cluster.items(TRAINJOBS)}
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)}
    out = subprocess.run([sys.executable, str(script)], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    made = [tj for tj in cluster.items(TRAINJOBS) if tj["metadata"]["name"] not in before]
    return sorted(made, key=lambda tj: tj["spec"]["trainer"].get("numNodes", 0))


def kale_trainjob(cluster, cells: list[str], folder, options: dict | None = None) -> dict:
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.submit import submit

    path = folder / "sdk_notebook.ipynb"
    path.write_text(json.dumps(notebook(*cells)))
    backend = KubernetesBackend(config_file=str(cluster.kubeconfig))
    done = submit(backend, path, {"name": "kale-side", **(options or {})}, notebook_path=str(path))
    return cluster.get(TRAINJOBS, done.name)


def sdk_command(command: list[str]) -> dict:
    """What the SDK's bash heredoc command runs: the function, its arguments, packages, index,
    launcher, what launches it (an MPI runtime's mpirun) and the folder of its file."""
    script = command[-1]
    written = re.search(r'^printf "%s" "\$SCRIPT" > "(.*)"$', script, re.M)
    call = re.search(r"^(\w+)\((?:\*\*(\{.*\}))?\)$", script, re.M)
    packages = re.search(r"^PACKAGES=\((.*)\)$", script, re.M)
    index = re.search(r"^PIP_OPTS=\((.*)\)$", script, re.M)
    urls = shlex.split(index.group(1))[1::2] if index and packages else []
    return {
        "function": call.group(1),
        "args": ast.literal_eval(call.group(2)) if call.group(2) else {},
        "packages": shlex.split(packages.group(1)) if packages else [],
        "index_urls": urls,
        "torchrun": "torchrun" in script,
        "launch": command[: command.index("bash")],
        "folder": os.path.dirname(written.group(1)),
    }


def kale_command(trainjob: dict) -> dict:
    command = trainjob["spec"]["trainer"]["command"]
    assert source_of(command) is not None  # the compiled module, byte-exact
    launch = command[: command.index("python")]
    plan = json.loads(command[len(launch) + 3])
    return {
        "launch": launch,
        "folder": plan.get("home", ""),  # the bootstrap's files (else the temporary folder)
        "function": trainjob["metadata"]["annotations"][ANNOTATION + "function"],
        "args": plan["args"],
        "packages": [p["requirement"] for p in plan["packages"]],
        "index_urls": plan["index_urls"],
        "torchrun": plan["launcher"] == "torchrun",
    }


def quantities(resources: dict | None) -> dict:
    """Each quantity's value (the SDK sends 2 as 2.0, kale_ext as '2': the same quantity)."""
    from kale_ext.job.k8s_values import quantity_value

    return {
        k: {n: quantity_value(str(q)) for n, q in v.items()} for k, v in (resources or {}).items()
    }


def env_of(trainer: dict) -> dict:
    return {e["name"]: e.get("value") for e in trainer.get("env") or []}


def assert_same_job(sdk: dict, kale: dict) -> None:
    """Field by field; every difference beside ALLOWED fails."""
    validate_trainjob(sdk)
    validate_trainjob(kale)
    s, k = sdk["spec"], kale["spec"]
    assert set(s) - {"trainer"} <= set(k)  # nothing the SDK sets is missing
    assert {**k["runtimeRef"], "apiGroup": None} == {**s["runtimeRef"], "apiGroup": None}
    assert k.get("initializer") == s.get("initializer")
    # each patch's time is the one the Trainer's webhook stamped when the cluster stored it
    sdk_patches, kale_patches = (
        [{f: v for f, v in p.items() if f != "time"} for p in spec.get("runtimePatches") or []]
        for spec in (s, k)
    )
    assert kale_patches[: len(sdk_patches)] == sdk_patches
    assert all(p["manager"].startswith("kale-ext.io/") for p in kale_patches[len(sdk_patches) :])
    for field in set(s) - {"runtimeRef", "initializer", "runtimePatches", "trainer"}:
        assert k[field] == s[field], field
    st, kt = s.get("trainer") or {}, k.get("trainer") or {}
    assert kt.get("numNodes") == st.get("numNodes", kt.get("numNodes"))
    assert kt.get("numProcPerNode") == st.get("numProcPerNode")  # unset: the runtime chooses
    assert quantities(kt.get("resourcesPerNode")) == quantities(st.get("resourcesPerNode"))
    assert env_of(kt) == env_of(st)
    if "image" in st:
        assert kt["image"] == st["image"]
    ours, theirs = kale_command(kale), sdk_command(st["command"])
    assert ours["packages"] == theirs["packages"]  # the train() call's list, as listed
    if theirs["packages"]:  # handed to pip as the SDK hands them (tests/job/test_command.py)
        command = kale["spec"]["trainer"]["command"]
        plan = json.loads(command[command.index("python") + 3])  # after an MPI launch too
        checks = [p["check"] for p in plan["packages"]]
        assert set(checks) == {"pip"}
    if not st["command"][-1].count("PACKAGES=("):  # the SDK uses its index only to install
        theirs["index_urls"] = ours["index_urls"]
    assert ours == theirs
    unexpected = set(st) - {"numNodes", "resourcesPerNode", "env", "image", "command"}
    assert not unexpected, unexpected
    labels = sdk["metadata"].get("labels") or {}
    assert labels.items() <= (kale["metadata"].get("labels") or {}).items()


@pytest.mark.parametrize(
    "cells, options",
    [
        pytest.param(nbs.TORCH, None, id="torch"),
        pytest.param(nbs.XGBOOST, None, id="xgboost"),
        pytest.param(nbs.XGBOOST_PACKAGES, None, id="xgboost-packages-default-index"),
        pytest.param(nbs.JAX, None, id="jax"),
        pytest.param(nbs.DATA_CACHE, None, id="data-cache-initializer"),
        pytest.param(nbs.RUNTIME_PATCH, None, id="runtime-patch"),
        pytest.param(nbs.TWO_CALLS, None, id="two-calls-the-last"),
        pytest.param(nbs.example_cells("sdk_mpi.ipynb"), None, id="mpi-example"),
        pytest.param(nbs.MLX, None, id="mlx"),
    ],
)
def test_kale_ext_submits_the_job_the_sdk_submits(cluster, tmp_path, cells, options):
    made = sdk_trainjobs(cluster, cells, tmp_path)
    sdk = made[-1]  # with two calls, the SDK submitted both: the last (3 nodes) is the job
    assert len(made) == (2 if cells is nbs.TWO_CALLS else 1)
    kale = kale_trainjob(cluster, cells, tmp_path, options)
    assert_same_job(sdk, kale)


class _Answer:
    """A call the SDK made with async_req=True: its thread, answered."""

    def __init__(self, value):
        self.value = value

    def get(self, timeout=None):
        return self.value


class OfflineApi:
    """The Kubernetes API as the SDK's train() calls it, with no cluster: the official runtime
    as the cluster would return it (no namespaced runtime of that name), the TrainJob it creates
    kept as it would be sent (serialized as the Kubernetes client does)."""

    def __init__(self, manifest: dict):
        self.manifest, self.created = manifest, []

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **_):
        from kubernetes.client import ApiException

        raise ApiException(status=404)

    def get_cluster_custom_object(self, group, version, plural, name, **_):
        assert name == self.manifest["metadata"]["name"], name
        return _Answer(self.manifest)

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, **_):
        from kubernetes.client import ApiClient

        self.created.append(ApiClient().sanitize_for_serialization(body))


def sdk_trainjob_offline(manifest: dict, cells: list[str], folder, monkeypatch) -> dict:
    """The TrainJob the real SDK's TrainerClient().train(...) sends for the notebook's cells,
    its Kubernetes API an OfflineApi answering with the runtime ``manifest``."""
    import runpy

    from kubeflow.trainer.backends.kubernetes.backend import KubernetesBackend

    api = OfflineApi(manifest)

    def offline(self, cfg):  # the SDK's own __init__ loads a kubeconfig and asks the cluster
        self.custom_api, self.core_api, self.namespace = api, None, "default"

    monkeypatch.setattr(KubernetesBackend, "__init__", offline)
    script = folder / "sdk_side.py"  # a file: the SDK reads the function's source from it
    script.write_text("\n\n".join(cells))
    runpy.run_path(str(script), run_name="__main__")
    [trainjob] = api.created
    return trainjob


@pytest.mark.parametrize(
    "runtime, cells",
    [
        pytest.param("deepspeed-distributed", nbs.example_cells("sdk_mpi.ipynb"), id="deepspeed"),
        pytest.param("mlx-distributed", nbs.MLX, id="mlx"),
    ],
)
def test_compile_writes_the_mpi_job_the_sdk_builds_with_no_cluster(
    runtime, cells, tmp_path, monkeypatch
):
    """An MPI runtime's notebook: `kale-ext compile --trainjob` with no kubeconfig writes the
    TrainJob the SDK builds from the official runtime (mpirun over the plugin's hostfile, files
    under the MPI user's home, numProcPerNode left to the runtime's mpi policy)."""
    pytest.importorskip("kubeflow.trainer", reason="the parity test needs the sdk extra")
    import yaml

    from tests.cli import cli
    from tests.harness.runtimes import runtime_manifest

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    sdk = sdk_trainjob_offline(runtime_manifest(runtime), cells, tmp_path, monkeypatch)
    (tmp_path / "sdk_notebook.ipynb").write_text(json.dumps(notebook(*cells)))
    out = cli("compile", "sdk_notebook.ipynb", "--trainjob", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    kale = yaml.safe_load((tmp_path / ".kale_ext" / "trainjob.yaml").read_text())
    assert_same_job(sdk, kale)
    command = kale["spec"]["trainer"]["command"]
    assert command[:3] == ["mpirun", "--hostfile", "/etc/mpi/hostfile"]
    assert "numProcPerNode" not in kale["spec"]["trainer"]
    # the workspace's volume on the launcher and on the nodes mpirun reaches over SSH
    [patch] = kale["spec"]["runtimePatches"]
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["launcher", "node"]


def test_the_chosen_train_call_is_the_job(cluster, tmp_path):
    made = sdk_trainjobs(cluster, nbs.TWO_CALLS, tmp_path)
    kale = kale_trainjob(cluster, nbs.TWO_CALLS, tmp_path, {"train_call": 1})
    assert_same_job(made[0], kale)
    assert kale["spec"]["trainer"]["numNodes"] == 1


def test_the_comparison_sees_a_different_job(cluster, tmp_path):
    """What the user overrides makes another job, and the comparison says so."""
    [sdk] = sdk_trainjobs(cluster, nbs.TORCH, tmp_path)
    kale = kale_trainjob(cluster, nbs.TORCH, tmp_path, {"nodes": 3, "env": {"TP_SIZE": "4"}})
    with pytest.raises(AssertionError):
        assert_same_job(sdk, kale)
    assert kale["spec"]["trainer"]["numNodes"] == 3
