"""Bounds configurable by the server admin: ``c.KaleExtApp.option_limits`` holds jobs to the same
limits through the REST API (its schema and its compile processes too), the CLI and the magics,
and every refusal names the limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from kale_ext.job import limits_held
from tests.conftest import notebook
from tests.ipython.conftest import shell  # noqa: F401 (the real IPython shell, a fixture)

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

LIMITS = {"nodes": 2, "packages": 1}
SAID = "must be at most 2 (the limit set in the server configuration), got 3"


def asks_for_three_nodes() -> dict:
    """A notebook whose own settings (the panel's, in its metadata) ask for 3 nodes."""
    nb = notebook("print('hi')")
    nb["metadata"]["kale_ext"] = {"options": {"nodes": 3}}
    return nb


class TestServer:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {"backend": "local", "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
                "compile_processes": 1, "option_limits": LIMITS}  # fmt: skip

    async def test_a_submit_beyond_a_limit_is_a_400_naming_it(self, api, jobs_dir):
        body = {"path": "plain_python.ipynb", "options": {"nodes": 3}}
        r = await api.post("jobs", body)
        assert r.status == 400, r.text
        assert r.json["field"] == "nodes" and r.json["message"] == f"nodes: {SAID}"
        r = await api.post("jobs", {"path": "plain_python.ipynb", "options": {"packages": ["a", "b"]}})  # fmt: skip
        assert r.status == 400 and "at most 1 allowed (the limit set in the server" in r.text
        assert not jobs_dir.exists() or not any(jobs_dir.iterdir())  # nothing half-created

    async def test_the_schema_and_the_compile_processes_hold_to_the_limits(self, api, root):
        from kale_ext.server.schema import validator

        published = validator("#/components/schemas/JobOptions").schema
        nodes = published["components"]["schemas"]["JobOptions"]["properties"]["nodes"]
        assert nodes["maximum"] == 2
        (root / "three.ipynb").write_text(json.dumps(asks_for_three_nodes()))
        r = await api.post("compile", {"path": "three.ipynb"}, request_timeout=120)
        assert r.status == 200 and not r.json["ok"], r.text
        [error] = r.json["errors"]
        assert error["field"] == "metadata.kale_ext.options.nodes" and SAID in error["message"]

    async def test_a_submit_within_the_limits_runs(self, api):
        name = await api.submit({"nodes": 2, "parameters": {"steps": 2}}, path="plain_python.ipynb")
        assert name


@pytest.fixture
def site_limits(tmp_path, monkeypatch):
    """The server configuration file with LIMITS, where the CLI and the magics read it; jobs in
    tmp_path. The limits this process read are gone after the test."""
    config = Path(os.environ["JUPYTER_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"KaleExtApp": {"option_limits": LIMITS}})
    )
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook("print('hi')")))
    (tmp_path / "three.ipynb").write_text(json.dumps(asks_for_three_nodes()))
    yield tmp_path
    limits_held.release()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "nb.ipynb", "--nodes", "3"],
        ["run", "nb.ipynb", "--nodes", "3", "--dry-run"],
        ["compile", "nb.ipynb", "--nodes", "3", "--trainjob"],
        ["run", "three.ipynb"],
    ],
    ids=["run", "dry run", "compile", "the notebook's own"],
)
def test_the_cli_holds_to_the_servers_limits(site_limits, args):
    done = subprocess.run(
        [sys.executable, "-m", "kale_ext.cli", *args, "--backend", "local"],
        capture_output=True, text=True, timeout=300, cwd=site_limits,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert SAID in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (site_limits / "jobs").exists() or not any((site_limits / "jobs").iterdir())


def test_the_magics_hold_to_the_servers_limits(site_limits, shell, monkeypatch, capsys):  # noqa: F811
    from kale_ext import load_ipython_extension

    monkeypatch.setenv("HOME", str(site_limits))  # no ~/.kube/config: the local backend
    shell.reset(new_session=True)
    load_ipython_extension(shell)
    result = shell.run_cell("%%trainjob --backend local --dry-run --nodes 3\nprint(1)\n")
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    assert SAID in str(result.error_in_exec)
    assert "Traceback" not in capsys.readouterr().err
    result = shell.run_cell("%%trainjob --backend local --dry-run --nodes 2\nprint(1)\n")
    assert result.error_in_exec is None and result.result.shape.startswith("2 nodes")
