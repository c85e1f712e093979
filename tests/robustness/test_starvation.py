"""Issue 28, case 2: slow requests do not stop the others. Cheap reads (runtimes, defaults,
jobs, a job's status) are answered while every heavy thread is held; heavy work has a deadline,
is dropped when its client leaves before it starts, and one user holds at most its share."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from tornado.httpclient import HTTPClientError

from kale_ext.backends.local.backend import LocalBackend

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]


class Gate:
    """Holds every submit until opened; counts those that arrived."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.arrived = threading.Semaphore(0)
        self.calls = 0


GATE = Gate()


class GatedBackend(LocalBackend):
    """The local backend, whose submits wait at the gate (a slow submit, held open)."""

    def submit(self, spec, notebook_path=None):
        GATE.calls += 1
        GATE.arrived.release()
        assert GATE.open.wait(120), "the gate was never opened"
        return super().submit(spec, notebook_path)


@pytest.fixture
def gate():
    global GATE
    GATE = Gate()
    yield GATE
    GATE.open.set()


def config(tmp_path, **more) -> dict:
    return {"backend_class": GatedBackend, "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
            "compile_processes": 0, "worker_threads": 2, **more}  # fmt: skip


async def arrived(gate: Gate, count: int) -> None:
    for _ in range(count):
        assert await asyncio.to_thread(gate.arrived.acquire, True, 120)


BODY = {"path": "plain_python.ipynb", "options": {"parameters": {"steps": 1}}}


class TestCheapReads:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return config(tmp_path)

    async def test_2_cheap_reads_answer_while_every_heavy_thread_is_held(self, api, gate):
        held = [asyncio.ensure_future(api.post("jobs", BODY, request_timeout=180))
                for _ in range(4)]  # fmt: skip
        await arrived(gate, 2)  # both heavy threads wait at the gate; two more requests queue
        slowest = 0.0
        for path in ("runtimes", "defaults", "jobs", "backend", "tags"):
            started = time.monotonic()
            r = await api.get(path, request_timeout=30)
            slowest = max(slowest, time.monotonic() - started)
            assert r.status == 200, r.text
        assert slowest < 5, slowest  # was: no answer until the held requests ended
        gate.open.set()
        answers = await asyncio.gather(*held)
        assert [a.status for a in answers] == [201] * 4
        names = [a.json["name"] for a in answers]
        assert (await api.get(f"jobs/{names[0]}")).status == 200


class TestDeadline:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return config(tmp_path, work_deadline=1.0)

    async def test_2_heavy_work_past_its_deadline_is_a_504_naming_the_setting(self, api, gate):
        r = await api.post("jobs", BODY, request_timeout=60)
        assert r.status == 504, r.text
        assert "KaleExtApp.work_deadline" in r.json["message"]


class TestOverdue:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return config(tmp_path, worker_threads=1, work_deadline=1.0)

    async def test_2_a_thread_past_its_deadline_is_lent_a_substitute(self, api, gate):
        """Issue 42: work that overran its deadline kept its heavy thread, and the next heavy
        request waited behind it (4 such took every thread). Now another thread takes its
        place while it runs; a cheap request answers in a second meanwhile."""
        first = await api.post("jobs", BODY, request_timeout=60)
        assert first.status == 504, first.text  # its thread still waits at the gate
        second = asyncio.ensure_future(api.post("jobs", BODY, request_timeout=60))
        await arrived(gate, 2)  # it ran beside the overdue one, in the lent thread
        started = time.monotonic()
        assert (await api.get("runtimes", request_timeout=30)).status == 200
        assert time.monotonic() - started <= 1.0
        assert (await second).status == 504
        gate.open.set()


class TestFifoAttack:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return config(tmp_path, compile_processes=1, work_deadline=60.0)

    async def test_2_a_fifo_named_gitignore_hangs_nothing(self, api, gate, root):
        """Issue 42: a FIFO named .gitignore under a notebook's folder hung every compile and
        submit that scanned it, and with them the server. Now it is skipped, said as a FIFO."""
        import os

        (root / "data").mkdir()
        os.mkfifo(root / "data" / ".gitignore")
        gate.open.set()
        compiles = [asyncio.ensure_future(api.post("compile", BODY, request_timeout=120))
                    for _ in range(4)]  # fmt: skip
        started = time.monotonic()
        assert (await api.get("runtimes", request_timeout=30)).status == 200
        assert time.monotonic() - started <= 1.0
        answers = await asyncio.gather(*compiles)
        assert [a.status for a in answers] == [200] * 4, answers[0].text
        assert "FIFO" in answers[0].text, answers[0].text[:2000]
        submitted = await api.post("jobs", BODY, request_timeout=120)
        assert submitted.status == 201, submitted.text


class TestShare:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return config(tmp_path, worker_threads=1, client_share=2)

    async def test_2_one_user_holds_at_most_its_share_and_a_gone_client_drops_its_work(
        self, api, gate, jp_fetch, kale_app
    ):
        app = kale_app

        async def heavy(count: int) -> None:
            while sum(app.heavy_by_client.values()) != count:
                await asyncio.sleep(0.01)

        held = asyncio.ensure_future(api.post("jobs", BODY, request_timeout=180))
        await arrived(gate, 1)  # the one heavy thread is held
        body = '{"path": "plain_python.ipynb"}'
        leaving = asyncio.ensure_future(
            jp_fetch("kale-ext", "jobs", method="POST", body=body, request_timeout=3)
        )
        await heavy(2)  # it waits in line
        refused = await api.post("jobs", BODY)
        assert refused.status == 429, refused.text
        assert "KaleExtApp.client_share" in refused.json["message"]
        with pytest.raises((HTTPClientError, TimeoutError)):
            await leaving  # its client gives up and goes
        await heavy(1)
        gate.open.set()
        assert (await held).status == 201
        assert (await api.post("jobs", BODY, request_timeout=120)).status == 201  # after any
        assert gate.calls == 2  # held and the last: the gone client's submit never ran
