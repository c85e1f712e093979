"""Fixtures for the server extension's tests: a real Jupyter server (pytest-jupyter) with kale_ext.

Test modules load it with ``pytest_plugins = ["pytest_jupyter.jupyter_server",
"tests.harness.server"]``. Jobs run on the local backend, in a jobs directory under tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def jp_asyncio_loop(request):
    """pytest-jupyter's server and pytest-asyncio's test on one event loop (pytest-asyncio ≥ 1
    runs each test in its own runner, which pytest-jupyter's loop fixture does not see)."""
    try:
        runner = request.getfixturevalue("_function_scoped_runner")
    except pytest.FixtureLookupError:  # an older pytest-asyncio: the current loop is shared
        from jupyter_core.utils import ensure_event_loop

        yield ensure_event_loop(prefer_selector_loop=True)
        return
    yield runner.get_loop()


@pytest.fixture
def kale_config(tmp_path) -> dict:
    """c.KaleExtApp for the test server; override it in a module to swap the backend."""
    return {
        "backend": "local",
        "jobs_dir": str(tmp_path / "jobs"),
        "warm_up": False,
        "compile_processes": 0,  # compile in threads: TestCompileProcesses covers the processes
    }


@pytest.fixture
def kale_app(jp_serverapp):
    """The test server's running KaleExtApp."""
    [app] = jp_serverapp.extension_manager.extension_apps["kale_ext"]
    return app


@pytest.fixture
def jp_server_config(kale_config):
    return {
        "ServerApp": {"jpserver_extensions": {"kale_ext": True}},
        "KaleExtApp": kale_config,
    }


@pytest.fixture
def jobs_dir(kale_config, tmp_path):
    """The local backend's jobs; every job left there is deleted (no process outlives a test)."""
    path = Path(kale_config.get("jobs_dir") or tmp_path / "jobs")
    yield path
    if path.is_dir():
        from kale_ext.backends.local.backend import LocalBackend

        backend = LocalBackend(jobs_dir=path)
        for job in path.iterdir():
            try:
                backend.delete(job.name)
            except Exception:
                shutil.rmtree(job, ignore_errors=True)


@pytest.fixture
def root(jp_root_dir):
    """The server root, holding a copy of the examples."""
    for name in ("plain_python.ipynb", "digits_ddp.ipynb"):
        shutil.copy(EXAMPLES / name, jp_root_dir / name)
    return jp_root_dir


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


@dataclass
class Event:
    event: str
    id: str | None
    data: dict


def parse_sse(text: str) -> list[Event]:
    """Server-sent events, as a browser's EventSource reads them (comments skipped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, event_id, data = "message", None, []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "data":
                data.append(value)
            elif key == "event":
                name = value
            elif key == "id":
                event_id = value
        if data:
            events.append(Event(name, event_id, json.loads("\n".join(data))))
    return events


@dataclass
class Api:
    """kale-ext/ requests through pytest-jupyter's jp_fetch (which sends the token)."""

    fetch: object
    calls: list = field(default_factory=list)

    async def request(self, method: str, path: str, body=None, params=None, headers=None, **kw):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if method in ("POST", "PUT", "PATCH") and body is None:
            body = ""
        r = await self.fetch(
            "kale-ext",
            path,
            method=method,
            body=body,
            params=params,
            headers=headers,
            raise_error=False,
            **kw,
        )
        return Reply(r.code, r.body or b"", dict(r.headers))

    async def get(self, path: str, **kw) -> Reply:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body=None, **kw) -> Reply:
        return await self.request("POST", path, body, **kw)

    async def delete(self, path: str, **kw) -> Reply:
        return await self.request("DELETE", path, **kw)

    async def submit(self, options=None, **source) -> str:
        r = await self.post("jobs", {**source, "options": options or {}})
        assert r.status == 201, r.text
        return r.json["name"]

    async def logs(self, name: str, params=None, headers=None) -> list[Event]:
        r = await self.get(f"jobs/{name}/logs", params=params, headers=headers, request_timeout=120)
        assert r.status == 200, r.text
        assert r.headers["Content-Type"].startswith("text/event-stream")
        return parse_sse(r.text)

    async def follow(self, name: str) -> list[Event]:
        """Every event of the job until `end`."""
        events = await self.logs(name, {"follow": "1"})
        assert events and events[-1].event == "end", events[-3:]
        return events


@pytest.fixture
def api(jp_fetch, root, jobs_dir) -> Api:
    return Api(jp_fetch)


def lines(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.data["node"], e.data["text"]) for e in events if e.event == "message"]


# -- a Jupyter server in its own process (restarts) --


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


OTHER_EXTENSIONS_OFF = {
    name: False
    for name in (
        "jupyterlab",
        "jupyter_lsp",
        "notebook_shim",
        "jupyter_server_terminals",
        "notebook",
    )
}


class JupyterProcess:
    """`jupyter server` on a free loopback port with token auth, only kale_ext loaded."""

    def __init__(self, root: Path, jobs_dir: Path, home: Path, settings: dict | None = None):
        """``settings``: more of c.KaleExtApp."""
        self.port = free_port()
        self.token = "test-" + os.urandom(8).hex()
        self.url = f"http://127.0.0.1:{self.port}"
        config = home / "jupyter_server_config.json"
        home.mkdir(parents=True, exist_ok=True)
        config.write_text(
            json.dumps(
                {
                    "ServerApp": {
                        # kale_ext only: the other installed extensions slow the start down
                        "jpserver_extensions": {"kale_ext": True, **OTHER_EXTENSIONS_OFF},
                        "ip": "127.0.0.1",
                        "port": self.port,
                        "port_retries": 0,
                        "open_browser": False,
                        "root_dir": str(root),
                        "allow_root": True,
                    },
                    "IdentityProvider": {"token": self.token},
                    "KaleExtApp": {
                        "backend": "local",
                        "jobs_dir": str(jobs_dir),
                        "warm_up": False,
                        **(settings or {}),
                    },
                }
            )
        )
        env = {
            **os.environ,
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home),  # reads jupyter_server_config.json from here
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "0",
        }
        self.log = open(home / f"server-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.get("backend")
                return
            except (OSError, urllib.error.URLError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        "the Jupyter server did not start: "
                        + (home / f"server-{self.port}.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.1)

    def request(self, method: str, path: str, body=None, headers=None, timeout: float = 60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.url}/kale-ext/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", **(headers or {})},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()

    def get(self, path: str, timeout: float = 60):
        status, body = self.request("GET", path, timeout=timeout)
        assert status == 200
        return body

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture
def kube(monkeypatch, tmp_path):
    """A fake cluster behind the kubernetes client (the only thing faked), with the
    torch-distributed runtime; a kubeconfig pointing at it; the runtime-package cache in tmp."""
    from tests.harness.crd import runtime_manifest
    from tests.harness.fake_kube import KUBECONFIG, FakeKube

    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))  # runtime-packages.json
    fake = FakeKube("team")
    fake.install(monkeypatch)
    fake.add_runtime(runtime_manifest("torch-distributed"))
    return fake
