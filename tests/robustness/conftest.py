"""A real Jupyter server with kale_ext in its own process (its memory can be measured), and raw
HTTP requests to it that return every status instead of raising."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass

import pytest

from tests.conftest import notebook
from tests.harness.server import JupyterProcess

#: A job that ends at once: one parameter, one line of output.
TINY = notebook(("n = 1", ["parameters"]), "print('tiny', n)")


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)


def call(server: JupyterProcess, method: str, path: str, body: bytes | None = None,
         headers: dict | None = None, timeout: float = 60) -> Answer:  # fmt: skip
    """`method <server>/kale-ext/<path>` with the token; any status is an answer."""
    req = urllib.request.Request(
        f"{server.url}/kale-ext/{path}",
        data=body,
        method=method,
        headers={"Authorization": f"token {server.token}", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Answer(r.status, dict(r.headers), r.read())
    except urllib.error.HTTPError as e:
        return Answer(e.code, dict(e.headers), e.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`jupyter server` with kale_ext on the local backend; tiny.ipynb in its root. Every job
    left when the module ends is deleted (no process outlives it)."""
    base = tmp_path_factory.mktemp("served")
    root, jobs = base / "root", base / "jobs"
    root.mkdir()
    (root / "tiny.ipynb").write_text(json.dumps(TINY))
    served = JupyterProcess(root, jobs, base / "home")
    yield served
    served.stop()
    if jobs.is_dir():
        from kale_ext.backends.local.backend import LocalBackend

        backend = LocalBackend(jobs_dir=jobs)
        for job in jobs.iterdir():
            try:
                backend.delete(job.name)
            except Exception:
                shutil.rmtree(job, ignore_errors=True)
