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
