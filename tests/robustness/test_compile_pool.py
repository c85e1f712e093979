"""Item 1: a configuration error crosses the compile processes' boundary and the pool survives;
a compile process killed or hung mid-request is a 503 or 504 saying so (issue 28, Deliver 8: the
pool the event loop drives), and the next compile is answered by the process that replaced it."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal

import pytest

from kale_ext.errors import BackendError, CompileError, ConfigError, Diagnostic, NotFound
from tests.backends.local.waiting import exited

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


BODY = {"path": "plain_python.ipynb"}


class TestCompileProcesses:
    @pytest.fixture
    def kale_config(self, kale_config):
        return {**kale_config, "compile_processes": 1}

    async def test_1_unknown_runtime_is_a_result_and_the_compile_pool_survives(self, api, kale_app):
        first = await api.post("compile", {"path": "plain_python.ipynb"}, request_timeout=120)
        assert first.status == 200 and first.json["ok"], first.text
        pids = kale_app._pool.pids
        assert all(pids)
        r = await api.post(
            "compile", {"path": "plain_python.ipynb", "options": {"runtime": "nope"}}
        )
        assert r.status == 200, r.text
        [error] = r.json["errors"]
        assert error["field"] == "runtime" and "'nope' not found" in error["message"]
        assert kale_app._pool.pids == pids  # the same processes: no restart, no wait for a new one
        again = await api.post("compile", {"path": "plain_python.ipynb"})
        assert again.json["ok"] and kale_app._pool.pids == pids


async def _busy(app, pid: int) -> None:
    """Until the compile process ``pid`` holds a call (waiting on the loop, not blocking it)."""
    for _ in range(6000):
        if app._pool.busy == [pid]:
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"compile process {pid} never got the request")


class TestCompileProcessFailures:
    """A compile process that dies or hangs mid-request: the request gets a reason (never a
    hang), the process is replaced and the next compile is answered."""

    @pytest.fixture
    def kale_config(self, kale_config):
        return {**kale_config, "compile_processes": 1, "work_deadline": 20.0}

    async def test_a_compile_process_killed_mid_request_is_a_503_then_replaced(self, api, kale_app):
        assert (await api.post("compile", BODY, request_timeout=120)).json["ok"]
        [pid] = kale_app._pool.pids
        os.kill(pid, signal.SIGSTOP)  # it takes the next request and holds it
        request = asyncio.ensure_future(api.post("compile", BODY, request_timeout=60))
        await _busy(kale_app, pid)
        os.kill(pid, signal.SIGKILL)
        r = await request
        assert r.status == 503, r.text
        assert r.json["reason"] == "CompileProcessEnded"
        assert "killed by signal 9 (SIGKILL)" in r.json["message"], r.json["message"]
        again = await api.post("compile", BODY, request_timeout=120)
        assert again.status == 200 and again.json["ok"]
        assert kale_app._pool.pids != [pid]

    async def test_a_compile_process_hung_past_the_deadline_is_a_504_then_replaced(
        self, api, kale_app
    ):
        assert (await api.post("compile", BODY, request_timeout=120)).json["ok"]
        [pid] = kale_app._pool.pids
        kale_app.work_deadline = 1.0
        os.kill(pid, signal.SIGSTOP)  # hangs: it never answers
        r = await api.post("compile", BODY, request_timeout=60)
        assert r.status == 504, r.text
        assert r.json["reason"] == "DeadlinePassed"
        assert "KaleExtApp.work_deadline" in r.json["message"]
        assert exited(pid, timeout=30)  # killed, not left stopped
        kale_app.work_deadline = 20.0
        again = await api.post("compile", BODY, request_timeout=120)
        assert again.status == 200 and again.json["ok"]


class TestDeadlineWithoutClient:
    """Issue 42: the deadline went with the client; a compile that hung (a FIFO read, a slow
    step) held its process for good once its client left. A stopped process is one that hangs."""

    @pytest.fixture
    def kale_config(self, kale_config):
        return {**kale_config, "compile_processes": 1, "work_deadline": 3.0}

    async def test_a_hung_compile_whose_client_left_is_killed_at_the_deadline(
        self, api, kale_app, jp_fetch
    ):
        import json
        import time

        assert (await api.post("compile", BODY, request_timeout=120)).json["ok"]
        [pid] = kale_app._pool.pids
        os.kill(pid, signal.SIGSTOP)  # the next compile never ends
        with pytest.raises((TimeoutError, Exception)):  # its client gives up and goes
            await jp_fetch("kale-ext", "compile", method="POST", body=json.dumps(BODY),
                           request_timeout=0.5)  # fmt: skip
        started = time.monotonic()
        r = await api.get("runtimes", request_timeout=30)
        assert r.status == 200 and time.monotonic() - started <= 1.0  # a cheap request answers
        assert await asyncio.to_thread(exited, pid, 30), "the hung compile outlived its deadline"
        again = await api.post("compile", BODY, request_timeout=120)
        assert again.status == 200 and again.json["ok"]  # its place is free again


class TestNoCompileProcess:
    @pytest.fixture
    def kale_config(self, kale_config):
        return {**kale_config, "compile_processes": 2}

    async def test_when_no_compile_process_can_start_the_server_compiles_in_its_threads(
        self, api, kale_app, monkeypatch, tmp_path
    ):
        monkeypatch.setattr("sys.executable", str(tmp_path / "no-such-python"))
        r = await api.post("compile", BODY, request_timeout=120)
        assert r.status == 200 and r.json["ok"], r.text  # answered, in a thread
        assert "a compile process did not start" in kale_app._pool.failed
        assert "no-such-python" in kale_app._pool.failed
        again = await api.post("compile", BODY, request_timeout=120)
        assert again.status == 200 and again.json["ok"]
