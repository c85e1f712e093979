import pytest

from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.runtime_packages import cached, probe
from tests.harness.kube_fixtures import backend, kube, kubeconfig  # noqa: F401 (fixtures)


def test_probe_runs_a_job_on_the_runtime_and_caches_its_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    local = LocalBackend()
    assert cached(local, "torch-distributed") is None
    packages = probe(local, "torch-distributed", timeout=120)
    assert "torch" in packages and "scikit-learn" in packages
    assert cached(local, "torch-distributed") == packages
    assert local.list_jobs() == []  # the probe job was deleted


def test_unknown_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    with pytest.raises(Exception, match="runtime 'nope' not found"):
        probe(LocalBackend(), "nope")


def test_kubernetes_backend_answers_from_the_cache_only(backend, tmp_path, monkeypatch):  # noqa: F811
    import json

    from kale_ext.backends.runtime_packages import _key, cache_file

    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    assert backend.runtime_packages("torch-distributed") is None  # no pod is started for it
    path = cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({_key(backend, "torch-distributed"): {"torch": "2.13.0"}}))
    assert backend.runtime_packages("torch-distributed") == {"torch": "2.13.0"}
