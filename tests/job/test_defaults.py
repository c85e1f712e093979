"""One set of defaults: the JupyterLab settings schema, the server's configuration, the CLI,
the magics and the REST API agree, in the documented precedence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job import defaults
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.server.app import KaleExtApp
from tests.cli import cli
from tests.conftest import ROOT, notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

SCHEMA = json.loads((ROOT / "labextension" / "schema" / "plugin.json").read_text())


def lab_settings(text: str) -> Path:
    """Write the user's JupyterLab settings file the way JupyterLab does (JSON5)."""
    path = defaults.lab_settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def server_config(values: dict) -> Path:
    path = Path(os.environ["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"KaleExtApp": values}))
    return path


def plain(value):
    return list(value) if isinstance(value, tuple) else value


# -- the three places agree --


def test_the_settings_schema_has_exactly_the_defaults_with_the_same_values():
    assert list(SCHEMA["properties"]) == list(defaults.FIELDS)
    built_in = defaults.Defaults()
    for name, prop in SCHEMA["properties"].items():
        assert prop["default"] == plain(getattr(built_in, name)), name
        assert prop["title"] and prop["description"], name
    assert SCHEMA["additionalProperties"] is False


def test_the_server_configuration_has_a_trait_per_default_with_the_same_value():
    app = KaleExtApp()
    built_in = defaults.Defaults()
    for name in defaults.FIELDS:
        trait = app.traits()[name]
        assert trait.metadata.get("config") is True, name
        assert plain(getattr(app, name)) == plain(getattr(built_in, name)), name
        assert trait.help, name


def test_every_schema_value_the_schema_allows_is_accepted_and_every_default_documented():
    import jsonschema

    sample = {
        "backend": "kubernetes",
        "namespace": "team-a",
        "runtime": "torch-distributed",
        "image": "ghcr.io/acme/train:1",
        "pip_index_urls": ["https://pypi.example/simple"],
        "nodes": 2,
        "cpu": "4",
        "memory": "16Gi",
        "gpu": 1,
        "stall_seconds": 120,
        "mlflow_tracking_uri": "http://mlflow.example:5000",
        "local_capacity": 8,
        "local_nice": 0,
        "keep_finished_days": 30,
    }
    jsonschema.validate(sample, SCHEMA)
    assert defaults.resolve(("test", sample)).to_dict()["defaults"] == sample
    assert set(defaults.UNSET) | {"backend", "runtime", "local_nice"} == set(defaults.FIELDS)


# -- layers --


def test_built_in_when_nothing_is_set():
    d = defaults.load()
    assert d == defaults.Defaults()
    assert set(d.to_dict()["sources"].values()) == {defaults.BUILT_IN}


def test_jupyterlab_settings_over_the_server_configuration_over_built_in():
    server_config({"runtime": "site-runtime", "cpu": "2", "memory": "8Gi"})
    lab_settings(
        """{
        // written by JupyterLab's settings editor: JSON5, with comments
        "cpu": "4",
        "nodes": 3,
        "pip_index_urls": ["https://pypi.example/simple"],
    }"""
    )
    d = defaults.load()
    assert (d.runtime, d.cpu, d.memory, d.nodes) == ("site-runtime", "4", "8Gi", 3)
    assert d.pip_index_urls == ("https://pypi.example/simple",)
    sources = d.to_dict()["sources"]
    assert sources["cpu"] == sources["nodes"] == defaults.LAB
    assert sources["runtime"] == sources["memory"] == defaults.SERVER
    assert sources["image"] == defaults.BUILT_IN


def test_the_server_reads_jupyterlabs_own_settings_directory(tmp_path):
    """c.LabApp.user_settings_dir moves JupyterLab's settings; the server passes it on."""
    moved = tmp_path / "moved"
    (moved / "kale-ext").mkdir(parents=True)
    (moved / "kale-ext" / "plugin.jupyterlab-settings").write_text('{"nodes": 4}')
    assert defaults.load(lab_dir=str(moved)).nodes == 4
    assert defaults.load().nodes is None


def test_a_changed_settings_file_is_read_again():
    path = lab_settings('{"nodes": 2}')
    assert defaults.load().nodes == 2
    path.write_text('{"nodes": 5, "memory": "1Gi"}')
    os.utime(path, ns=(1, 10**18))  # a different mtime even on a coarse clock
    assert (defaults.load().nodes, defaults.load().memory) == (5, "1Gi")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"cpu": "2 cores"}', "defaults.cpu: '2 cores' is not a Kubernetes quantity"),
        ('{"nodes": 0}', "defaults.nodes: must be at least 1, got 0"),
        ('{"backend": "cloud"}', "defaults.backend: must be one of auto, local, kubernetes"),
        ('{"namespace": "Team A"}', "'Team A' is not a Kubernetes namespace name"),
        ('{"pip_index_urls": ["ftp://x"]}', "'ftp://x' is not an http(s) URL"),
        ('{"gpu": "lots"}', "must be a GPU count or a MIG profile"),
        ('{"runtime": null}', "defaults.runtime: must be set"),
        (
            '{"local_nice": 20}',
            "defaults.local_nice: must be between 0 (the server's priority) and 19",
        ),
        ('{"local_nice": -5}', "defaults.local_nice: must be between 0"),
        ('{"local_nice": "low"}', "defaults.local_nice: must be a whole number (a nice value)"),
        ('{"local_nice": null}', "defaults.local_nice: must be set"),
        ('{"keep_finished_days": 0}', "defaults.keep_finished_days: must be between 1 and 3650"),
        ('{"keep_finished_days": "7d"}', "keep_finished_days: must be a whole number of days"),
        ('{"cpu": ', "cannot read the JupyterLab settings file plugin.jupyterlab-settings"),
        ("[1]", "must hold an object"),
    ],
)
def test_a_bad_setting_says_which_and_where(text, says):
    lab_settings(text)
    with pytest.raises(ConfigError) as e:
        defaults.load()
    assert says in str(e.value)
    if "plugin.jupyterlab-settings" not in says and "object" not in says:
        assert str(e.value).endswith("(set in the JupyterLab settings)")


def test_a_bad_server_configuration_value_names_the_server_configuration():
    server_config({"memory": "lots"})
    with pytest.raises(
        ConfigError, match=r"defaults.memory: .*\(set in the server configuration\)"
    ):
        defaults.load()


# -- where the defaults sit in a job's precedence --

NB = notebook(("x = 1", ["parameters"]), "print(x)")
RUNTIME = Runtime("torch-distributed", "torch", num_nodes=1)
SITE = defaults.resolve(
    (
        defaults.LAB,
        {
            "cpu": "2",
            "memory": "4Gi",
            "nodes": 3,
            "image": "ghcr.io/acme/train:1",
            "pip_index_urls": ["https://pypi.example/simple"],
        },
    )
)


def test_a_job_gets_the_defaults_when_nothing_more_specific_chooses():
    spec = build_job_spec(compile_notebook(NB), None, RUNTIME, SITE)
    assert spec.nodes == 3
    assert spec.config.requests == {"cpu": "2", "memory": "4Gi"} == spec.config.limits
    assert spec.image == "ghcr.io/acme/train:1"
    assert spec.pip_index_urls == ["https://pypi.example/simple"]
    assert spec.options == {}  # defaults are not the user's explicit choices


def test_the_notebook_and_each_submit_come_before_the_defaults():
    nb = notebook(
        ("x = 1", ["parameters", "limit:cpu:8"]),
        "%pip install --index-url https://mirror.example/simple tqdm\nprint(x)",
    )
    nb["metadata"]["kale_ext"] = {"options": {"nodes": 2}}
    job = compile_notebook(nb)
    spec = build_job_spec(job, {"memory": "1Gi"}, RUNTIME, SITE)
    assert spec.nodes == 2  # the notebook's metadata
    assert spec.config.limits["cpu"] == "8"  # the notebook's Kale tag
    assert spec.config.limits["memory"] == "1Gi"  # this submit
    assert spec.pip_index_urls == ["https://mirror.example/simple"]  # the notebook's %pip
    assert build_job_spec(job, {"nodes": 1}, RUNTIME, SITE).nodes == 1


def test_the_default_runtime_is_the_one_asked_for():
    site = defaults.resolve((defaults.SERVER, {"runtime": "deepspeed-distributed"}))
    with pytest.raises(ConfigError, match="asked for 'deepspeed-distributed'"):
        build_job_spec(compile_notebook(NB), None, RUNTIME, site)
    spec = build_job_spec(compile_notebook(NB), {"runtime": "torch-distributed"}, RUNTIME, site)
    assert spec.runtime.name == "torch-distributed"


def test_the_backend_explicit_then_the_environment_then_the_defaults(monkeypatch, tmp_path):
    from kale_ext.backends.choose import choose_backend

    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path))
    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    site = defaults.resolve((defaults.LAB, {"backend": "local", "namespace": "team-a"}))
    assert choose_backend(None, site)[1] == "set in the JupyterLab settings"
    assert choose_backend("local", site)[1] == "asked for explicitly"
    monkeypatch.setenv("KALE_EXT_BACKEND", "local")
    assert choose_backend(None, site)[1] == "KALE_EXT_BACKEND is set"


# -- the CLI --


def test_cli_shows_the_defaults_and_where_each_comes_from():
    server_config({"runtime": "site-runtime"})
    lab_settings('{"gpu": "mig-1g.5gb"}')
    out = cli("defaults", "-o", "json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["gpu"] == {"name": "gpu", "value": "mig-1g.5gb", "source": defaults.LAB}
    assert rows["runtime"]["source"] == defaults.SERVER
    table = cli("defaults").stdout
    assert "(none requested)" in table and "plugin.jupyterlab-settings" in table


def test_cli_jobs_start_from_the_same_defaults(tmp_path):
    lab_settings('{"cpu": "3", "nodes": 2}')
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(NB))
    out = cli("compile", path, "--trainjob", "-o", tmp_path / "out", "--memory", "2Gi")
    assert out.returncode == 0, out.stderr
    trainjob = yaml.safe_load((tmp_path / "out" / "trainjob.yaml").read_text())
    trainer = trainjob["spec"]["trainer"]
    assert trainer["numNodes"] == 2
    assert trainer["resourcesPerNode"]["limits"] == {"cpu": "3", "memory": "2Gi"}


def test_cli_reports_a_bad_default_without_a_traceback(tmp_path):
    lab_settings('{"nodes": "two"}')
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(NB))
    out = cli("run", path, "--dry-run", "--backend", "local")
    assert out.returncode == 1
    assert "error: defaults.nodes: must be a whole number" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_nbconvert_exporter_starts_from_the_same_defaults(tmp_path):
    lab_settings('{"memory": "5Gi"}')
    (tmp_path / "nb.ipynb").write_text(json.dumps(NB))
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "trainjob", "nb.ipynb"]
        + ["--TrainJobExporter.trainjob=True"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    trainjob = yaml.safe_load((tmp_path / "nb.trainjob.yaml").read_text())
    assert trainjob["spec"]["trainer"]["resourcesPerNode"]["limits"] == {"memory": "5Gi"}


# -- the REST API (and so the panel) --


async def test_the_server_serves_the_same_defaults_and_applies_them(api, root):
    lab_settings('{"memory": "6Gi", "nodes": 2}')
    r = await api.get("defaults")
    assert r.status == 200, r.text
    assert r.json["defaults"]["memory"] == "6Gi"
    assert r.json["sources"]["memory"] == defaults.LAB
    assert r.json["sources"]["backend"] == defaults.SERVER  # the test server's c.KaleExtApp

    preview = (await api.post("compile", {"notebook": NB})).json
    assert preview["ok"] and preview["nodes"] == 2, preview
    trainer = yaml.safe_load(preview["trainjob_yaml"])["spec"]["trainer"]
    assert trainer["resourcesPerNode"]["limits"] == {"memory": "6Gi"}

    path = lab_settings('{"memory": "7Gi"}')  # changed in JupyterLab: no restart needed
    os.utime(path, ns=(1, 10**18))
    preview = (await api.post("compile", {"notebook": NB})).json
    assert preview["nodes"] == 1
    assert "7Gi" in preview["trainjob_yaml"]


async def test_a_bad_default_is_a_clear_error_of_the_api(api, root):
    lab_settings('{"cpu": "-1", "backend": "local"}')
    r = await api.get("defaults")
    assert r.status == 400
    assert r.json["field"] == "defaults.cpu" and "JupyterLab settings" in r.json["message"]
    preview = await api.post("compile", {"notebook": NB})
    assert preview.status == 400 and preview.json["field"] == "defaults.cpu"
    # the jobs stay in reach: the backend passes over the one bad value
    assert (await api.get("backend")).json["reason"] == "set in the JupyterLab settings"
    assert (await api.get("jobs")).status == 200


def test_lenient_loading_passes_over_bad_values_and_files():
    server_config({"memory": "8Gi", "nodes": 0})
    lab_settings('{"memory": "lots", "backend": "local"}')
    d = defaults.load(strict=False)
    assert (d.memory, d.nodes, d.backend) == ("8Gi", None, "local")
    assert d.to_dict()["sources"]["memory"] == defaults.SERVER
    lab_settings("{broken")
    assert defaults.load(strict=False).memory == "8Gi"
