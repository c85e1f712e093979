import json

import pytest

from tests.cli import cli
from tests.conftest import EXAMPLES
from tests.harness.kube_fixtures import kube, kubeconfig  # noqa: F401 (fixtures)


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


def test_the_defaults_table_lines_up_its_values_after_the_longest_name(monkeypatch, tmp_path):
    """Every value starts in the same column, one space after the longest name (a 16-character
    column once ran `mlflow_tracking_uri` and `keep_finished_days` into their values)."""
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    names = [r["name"] for r in json.loads(cli("defaults", "-o", "json").stdout)]
    assert {"mlflow_tracking_uri", "keep_finished_days"} <= set(names)
    width = max(map(len, names))
    lines = cli("defaults").stdout.split("\n\n")[0].splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == names
    for line in lines:
        assert line[width] == " " and line[width + 1] != " ", line


def test_queues_on_the_local_backend_are_none_and_say_why(monkeypatch, tmp_path):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    out = cli("queues", "--backend", "local")
    assert (out.returncode, out.stdout) == (0, "")
    assert (
        out.stderr
        == "no queues: the local backend has no queues: Kueue's LocalQueues are on a cluster\n"
    )


def test_queues_list_the_namespaces_local_queues(kube, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    kube.put("localqueues", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "cq"},
                             "status": {"pendingWorkloads": 2, "admittedWorkloads": 1}})  # fmt: skip
    out = cli("queues", "--backend", "kubernetes")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["team-a", "ClusterQueue", "cq", "2", "pending,", "1", "admitted"]
    as_json = json.loads(cli("queues", "--backend", "kubernetes", "-o", "json").stdout)
    assert as_json == [{"name": "team-a", "cluster_queue": "cq", "pending": 2, "admitted": 1}]
