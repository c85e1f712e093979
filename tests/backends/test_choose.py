"""Which backend runs a job, and why: the CLI, the magics, the exporter and the server agree."""

import pytest

from kale_ext.backends.choose import choose_backend, kubernetes_configured, settings_for
from kale_ext.backends.local import LocalBackend
from kale_ext.errors import ConfigError


def test_no_cluster_means_the_local_backend(monkeypatch, tmp_path):
    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kubernetes_configured() == (False, "KUBECONFIG is set but names no existing file")
    backend, why = choose_backend(jobs_dir=tmp_path / "jobs", namespace="ignored")
    assert isinstance(backend, LocalBackend) and backend.jobs_dir == tmp_path / "jobs"
    assert why == "KUBECONFIG is set but names no existing file: runs here"


def test_the_environment_comes_before_the_cluster(monkeypatch, tmp_path):
    monkeypatch.setenv("KALE_EXT_BACKEND", "local")
    assert choose_backend(jobs_dir=tmp_path)[1] == "KALE_EXT_BACKEND is set"


def test_an_unknown_backend_names_the_field(monkeypatch):
    monkeypatch.setenv("KALE_EXT_BACKEND", "slurm")
    with pytest.raises(ConfigError, match="backend: must be one of local, kubernetes, not 'slurm'"):
        choose_backend()


def test_a_backend_gets_only_the_settings_it_takes(tmp_path):
    assert settings_for(LocalBackend, {"jobs_dir": tmp_path, "poll_interval": 2, "x": None}) == {
        "jobs_dir": tmp_path
    }
