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
    with pytest.raises(
        ConfigError, match="backend: must be one of auto, local, kubernetes, not 'slurm'"
    ):
        choose_backend()


def test_auto_wherever_it_is_named_means_a_configured_cluster_else_this_machine(
    monkeypatch, tmp_path
):
    from kale_ext.job.defaults import LAB, resolve

    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    kube = resolve((LAB, {"backend": "kubernetes"}))
    here = "KUBECONFIG is set but names no existing file: runs here"
    monkeypatch.setenv("KALE_EXT_BACKEND", "kubernetes")
    backend, why = choose_backend("auto", kube, jobs_dir=tmp_path)  # explicit: before the rest
    assert (backend.name, why) == ("local", here)
    monkeypatch.setenv("KALE_EXT_BACKEND", "auto")  # before the defaults
    assert (choose_backend(None, kube, jobs_dir=tmp_path)[0].name) == "local"
    monkeypatch.delenv("KALE_EXT_BACKEND")
    auto = resolve((LAB, {"backend": "auto"}))
    assert choose_backend(None, auto, jobs_dir=tmp_path)[1] == here
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    assert choose_backend("auto")[1] == f"KUBECONFIG points at {config}"


def test_a_backend_gets_only_the_settings_it_takes(tmp_path):
    assert settings_for(LocalBackend, {"jobs_dir": tmp_path, "poll_interval": 2, "x": None}) == {
        "jobs_dir": tmp_path
    }


def test_a_preview_without_a_cluster_to_ask_has_no_backend(monkeypatch, tmp_path):
    from kale_ext.backends.choose import preview_backend
    from kale_ext.errors import BackendError

    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(BackendError, match="no usable Kubernetes configuration"):
        choose_backend("kubernetes")  # running needs the cluster
    assert preview_backend("kubernetes") is None  # a preview does not
    assert isinstance(preview_backend(None, jobs_dir=tmp_path / "jobs"), LocalBackend)
