"""What POST compile reads in a server thread before its preview (server/compile_inputs.py): the
defaults are read once, and the backend chosen with them; invalid defaults are said as before."""

from __future__ import annotations

import pytest

from kale_ext.errors import ConfigError
from kale_ext.job import limits_held
from kale_ext.job.defaults import lab_settings_file
from kale_ext.server import compile_inputs
from kale_ext.server.app import KaleExtApp
from tests.conftest import notebook

NB = notebook("print('hello')")


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no kubeconfig: the backend runs here
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    made = KaleExtApp(jobs_dir=str(tmp_path / "jobs"))
    made.initialize_settings()  # what the server does when it loads the extension
    yield made
    limits_held.release()  # the limits it held for this process


def _lab_settings(text: str) -> None:
    settings = lab_settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(text)


def test_the_defaults_are_read_once_and_choose_the_backend(app, monkeypatch):
    _lab_settings('{"backend": "local", "nodes": 3}')
    reads = []
    real = app.defaults
    monkeypatch.setattr(app, "defaults", lambda strict=True: reads.append(strict) or real(strict))
    runtime, installed, defaults = compile_inputs.preview_inputs(app, NB, {})
    assert reads == [True]
    assert defaults.nodes == 3 and defaults.sources["nodes"] == "JupyterLab settings"
    backend, reason = app.get_backend()
    assert backend.name == "local" and reason == "set in the JupyterLab settings"
    assert not isinstance(runtime, ConfigError), runtime


def test_invalid_defaults_are_said_and_the_backend_is_still_made(app):
    _lab_settings('{"backend": "local", "nodes": "many"}')
    with pytest.raises(ConfigError) as e:
        compile_inputs.preview_inputs(app, NB, {})
    assert e.value.field == "defaults.nodes"
    assert app._backend is not None and app._backend.name == "local"


@pytest.mark.parametrize("backend", ["local", "kubernetes"])
def test_the_preview_of_a_runtime_no_cluster_was_asked_about_is_the_published_one(app, backend):
    """The panel's preview needs no cluster: the local backend's cluster-only runtime, or a
    Kubernetes backend without a kubeconfig, gives the Trainer's published runtime."""
    _lab_settings(f'{{"backend": "{backend}"}}')
    options = {"runtime": "torch-distributed-with-cache"}
    runtime, installed, _ = compile_inputs.preview_inputs(app, NB, options)
    assert not isinstance(runtime, ConfigError), runtime
    assert runtime.replicated_jobs == ("dataset-initializer", "node") and installed is None
    assert runtime.published.startswith("Kubeflow Trainer v2.3.0's published runtimes")


def test_a_runtime_the_trainer_does_not_publish_is_still_refused_without_a_cluster(app):
    _lab_settings('{"backend": "kubernetes"}')
    runtime, _, _ = compile_inputs.preview_inputs(app, NB, {"runtime": "my-runtime"})
    assert isinstance(runtime, ConfigError) and runtime.field == "runtime"
    assert "'my-runtime' is not one of Kubeflow Trainer v2.3.0's published runtimes" in str(runtime)
    assert "no cluster is configured" in str(runtime)
