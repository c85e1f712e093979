"""When a job is tracked: the settings' tracking URI, MLFLOW_TRACKING_URI over it, a bad one
refused naming the setting; with tracking off a submit is as before. (Runs on a real server:
tests/runs/test_tracking.py.)"""

import pytest

from kale_ext.backends.tracking import start_run, tracking_uri
from kale_ext.errors import ConfigError
from kale_ext.job import defaults
from kale_ext.mlflow_api import RUN_ID_ENV, URI_ENV
from tests.harness.kube_fixtures import make_spec


def test_the_environment_comes_before_the_settings(monkeypatch):
    settings = defaults.resolve(("test", {"mlflow_tracking_uri": "http://mlflow.team:5000"}))
    monkeypatch.delenv(URI_ENV, raising=False)
    assert tracking_uri(None) is None  # off by default
    assert tracking_uri(settings) == "http://mlflow.team:5000"
    monkeypatch.setenv(URI_ENV, "http://127.0.0.1:5000")
    assert tracking_uri(settings) == "http://127.0.0.1:5000"


@pytest.mark.parametrize("bad", ["file:///tmp/mlruns", "databricks", 5000])
def test_a_tracking_uri_that_is_no_server_address_is_refused_naming_it(bad):
    with pytest.raises(ConfigError) as e:
        defaults.resolve(("JupyterLab settings", {"mlflow_tracking_uri": bad}))
    assert e.value.field == "defaults.mlflow_tracking_uri"
    assert "tracking server" in str(e.value) and "JupyterLab settings" in str(e.value)


def test_with_tracking_off_a_job_gets_no_run(monkeypatch):
    monkeypatch.delenv(URI_ENV, raising=False)
    spec = make_spec()
    run = start_run(spec, "local")
    assert (run.run_id, run.warnings) == (None, [])
    assert RUN_ID_ENV not in {e.name for e in spec.config.env}
