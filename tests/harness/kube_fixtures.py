"""Fixtures for the Kubernetes backend against the fake cluster: a kubeconfig pointing at it,
the fake (holding the official torch-distributed runtime, built from the facts) and a backend."""

from __future__ import annotations

import pytest

from kale_ext.backends.kubernetes import KubernetesBackend
from kale_ext.compile.compiler import compile_notebook
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import JobSpec, build_job_spec
from tests.conftest import notebook
from tests.harness.fake_kube import KUBECONFIG, FakeKube
from tests.harness.runtimes import runtime_manifest

# pod states for FakeKube.add_pod
IMAGE_PULL = {"state": {"waiting": {"reason": "ImagePullBackOff",
                                    "message": 'Back-off pulling image "repo/img:bad"'}}}  # fmt: skip
CRASH_LOOP = {
    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting"}},
    "last_state": {"terminated": {"exitCode": 1, "reason": "Error"}},
    "restart_count": 2,
}
NB = notebook(
    ("lr = 0.1", ["parameters"]),
    "print(lr)",
)


@pytest.fixture
def kubeconfig(monkeypatch, tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return path


@pytest.fixture
def kube(monkeypatch, kubeconfig) -> FakeKube:
    fake = FakeKube("team")
    fake.install(monkeypatch)
    fake.add_runtime(runtime_manifest("torch-distributed"))
    return fake


@pytest.fixture
def backend(kube) -> KubernetesBackend:
    return KubernetesBackend(poll_interval=0.002)


def make_spec(options: dict | None = None, runtime: str = "torch-distributed") -> JobSpec:
    """The job spec of a small notebook named "fit", on an official runtime."""
    return build_job_spec(
        compile_notebook(NB),
        {"name": "fit", **(options or {})},
        Runtime.from_manifest(runtime_manifest(runtime)),
    )
