"""End to end on a real cluster: a notebook through submit_notebook to a finished TrainJob.

Runs only when KUBECONFIG points at a reachable cluster with Kubeflow Trainer v2 and its
torch-distributed runtime installed (for example kind with the v2.3.0 manifests); it skips,
saying why, everywhere else. KALE_EXT_E2E_TIMEOUT (seconds) bounds the wait: the first run pulls
the runtime's PyTorch image, which takes minutes.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest

from kale_ext.backends.base import BackendError, NotFound, Status
from tests.conftest import EXAMPLES

TIMEOUT = float(os.environ.get("KALE_EXT_E2E_TIMEOUT", "1200"))


@pytest.fixture(scope="module")
def cluster():
    paths = os.environ.get("KUBECONFIG")
    if not paths:
        pytest.skip("KUBECONFIG is not set: no cluster to run on")
    if not any(Path(p).is_file() for p in paths.split(os.pathsep) if p):
        pytest.skip(f"KUBECONFIG names no existing file ({paths})")
    from kale_ext.backends.kubernetes.backend import KubernetesBackend

    try:
        backend = KubernetesBackend(poll_interval=1.0)
        backend.get_runtime("torch-distributed")
    except NotFound as e:
        pytest.skip(f"Kubeflow Trainer's torch-distributed runtime is not installed: {e}")
    except BackendError as e:
        pytest.skip(f"the cluster is not usable: {e}")
    return backend


def test_plain_python_notebook_runs_on_the_cluster(cluster):
    from kale_ext.backends.submit import submit

    name = f"kale-e2e-{secrets.token_hex(3)}"
    try:
        submitted = submit(
            cluster, EXAMPLES / "plain_python.ipynb", {"name": name, "cpu": 1, "memory": "1Gi"}
        )
        assert submitted.name == name and submitted.spec.nodes == 1
        info = cluster.wait(name, timeout=TIMEOUT, interval=2)
        text = "\n".join(line.text for line in cluster.logs(name))
        events = "\n".join(f"{e.object} {e.reason}: {e.message}" for e in cluster.events(name))
        assert info.status is Status.COMPLETE, f"{info.reason}\n{text}\n{events}"
        assert "fitted a=" in text and "loss evaluated" in text
        assert [n.state for n in info.nodes] == ["Succeeded"]
        assert info.provenance["kale-ext.io/notebook"].endswith("plain_python.ipynb")
    finally:
        try:
            cluster.delete(name)
        except NotFound:
            pass
    deadline = time.monotonic() + 120  # Foreground deletion: the job goes once its pods are gone
    while time.monotonic() < deadline:
        try:
            cluster.get_job(name)
        except NotFound:
            return
        time.sleep(2)
    pytest.fail(f"{name} was still there 120 s after delete")
