"""Item 1: a configuration error crosses the compile processes' boundary and the pool survives."""

from __future__ import annotations

import pickle

import pytest

from kale_ext.errors import BackendError, CompileError, ConfigError, Diagnostic, NotFound

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

ERRORS = [
    ConfigError("runtime", "runtime 'nope' not found"),
    CompileError([Diagnostic("error", "name `x` is not defined", 2, "c2", 3, "undefined-name")]),
    BackendError("a job named x exists already", 409, "AlreadyExists"),
    NotFound("no local job named 'x'"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_1_every_error_of_the_family_pickles(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy) == vars(error)


class TestCompileProcesses:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {"backend": "local", "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
                "compile_processes": 1}  # fmt: skip

    async def test_1_unknown_runtime_is_a_result_and_the_compile_pool_survives(
        self, api, jp_serverapp
    ):
        app = next(iter(jp_serverapp.extension_manager.extension_apps["kale_ext"]))
        first = await api.post("compile", {"path": "plain_python.ipynb"}, request_timeout=120)
        assert first.status == 200 and first.json["ok"], first.text
        pool = app._processes
        assert pool is not None
        r = await api.post(
            "compile", {"path": "plain_python.ipynb", "options": {"runtime": "nope"}}
        )
        assert r.status == 200, r.text
        [error] = r.json["errors"]
        assert error["field"] == "runtime" and "'nope' not found" in error["message"]
        assert app._processes is pool  # the same worker pool: no restart, no wait for a new one
        again = await api.post("compile", {"path": "plain_python.ipynb"})
        assert again.json["ok"] and app._processes is pool
