import json

import pytest

from tests.cli import cli
from tests.conftest import EXAMPLES


def test_runtimes_and_bad_backend(jobs_env):
    out = cli("runtimes", "--backend", "local")
    assert out.returncode == 0 and out.stdout.startswith("torch-distributed")
    bad = cli("run", EXAMPLES / "plain_python.ipynb", "--backend", "local", "--gpu", "1")
    assert bad.returncode == 1 and "this machine has no GPU" in bad.stderr


@pytest.mark.parametrize("command", ["jobs", "runtimes"])
def test_listings_as_json_and_yaml(jobs_env, command):
    import yaml

    as_json = json.loads(cli(command, "--backend", "local", "-o", "json").stdout)
    as_yaml = yaml.safe_load(cli(command, "--backend", "local", "-o", "yaml").stdout)
    assert as_json == (as_yaml or [])
    if command == "runtimes":
        assert as_json[0]["name"] == "torch-distributed"


def test_auto_is_a_backend_as_the_help_and_the_defaults_say(monkeypatch, tmp_path):
    """`--backend auto` and KALE_EXT_BACKEND=auto: kubernetes when a cluster is configured, else
    local (no cluster here)."""
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert "`auto`" in cli("jobs", "--help").stdout
    shown = json.loads(cli("defaults", "-o", "json").stdout)
    assert {"name": "backend", "value": "auto", "source": "built in"} in shown
    out = cli("runtimes", "--backend", "auto", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["name"] == "torch-distributed"  # the local backend's
    monkeypatch.setenv("KALE_EXT_BACKEND", "auto")
    out = cli("jobs", "-o", "json")
    assert (out.returncode, out.stdout, out.stderr) == (0, "[]\n", "")
