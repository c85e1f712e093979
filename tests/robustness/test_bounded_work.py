"""Issue 28, cases 1 and 3: a request's cost is known before the work is done. A sweep's grid is
counted, never built, past the cap; a notebook path must be a regular file under a size limit
before it is read; `tail` is capped and a tail of long lines is not held in memory."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from kale_ext.errors import ConfigError
from kale_ext.runs.space import parse_space
from kale_ext.runs.sweep import MAX_TRIALS
from tests.conftest import notebook
from tests.server.test_sweeps import NB as SWEEP_NB

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

MIB = 1024 * 1024
#: 400 values of three parameters: 64,000,000 points, in a body of about 7 KB.
HUGE_GRID = {
    "quality": [round(i / 1000, 3) for i in range(400)],
    "layers": list(range(400)),
    "seed": list(range(400)),
}
HUGE_NB = notebook(("quality = 0.5\nlayers = 1\nseed = 0\n", ["parameters"]), "print(quality)")


def test_1_a_grid_past_the_cap_is_refused_before_a_point_is_made():
    space = parse_space({"quality": 0.5, "layers": 1, "seed": 0}, HUGE_GRID)
    assert space.size() == 64_000_000
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as refused:
            space.grid(limit=MAX_TRIALS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MIB
    said = str(refused.value)
    assert "64,000,000 points (400 quality × 400 layers × 400 seed)" in said
    assert "at most 1,000 trials" in said and "--random N" in said


async def test_1_a_huge_grid_from_the_api_is_a_quick_400_naming_the_limit(api, jobs_dir):
    started = time.monotonic()
    body = {"notebook": HUGE_NB, "sweep": {"params": HUGE_GRID}}
    reply = await api.post("sweeps", body, request_timeout=60)
    assert reply.status == 400, reply.text
    assert reply.json["field"] == "param" and "64,000,000 points" in reply.json["message"]
    assert time.monotonic() - started < 20  # was: minutes and gigabytes, building it
    assert (await api.get("sweeps")).json["sweeps"] == []


async def test_1_a_grid_within_the_cap_still_runs(api, jobs_dir):
    body = {"notebook": SWEEP_NB, "sweep": {"params": {"quality": [0.6]}}}
    reply = await api.post("sweeps", body)
    assert reply.status == 201, reply.text


@pytest.mark.parametrize("endpoint", ["compile", "jobs"])
async def test_3_a_notebook_path_that_is_a_fifo_is_refused_without_waiting(api, root, endpoint):
    os.mkfifo(root / "pipe.ipynb")  # nobody writes: reading it would wait for ever
    reply = await api.post(endpoint, {"path": "pipe.ipynb"}, request_timeout=30)
    assert reply.status == 400, reply.text
    assert reply.json["field"] == "path" and "not a regular file" in reply.json["message"]


async def test_3_a_notebook_past_the_size_limit_is_a_413_before_it_is_read(api, root):
    with open(root / "big.ipynb", "wb") as f:  # sparse: costs no disk, 101 MiB to a reader
        f.truncate(101 * MIB)
    reply = await api.post("compile", {"path": "big.ipynb"}, request_timeout=30)
    assert reply.status == 413, reply.text
    said = reply.json["message"]
    assert "105,906,176 bytes; the limit is 104,857,600 bytes" in said
    assert "KaleExtApp.max_notebook_bytes" in said


class TestSmallerLimit:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {"backend": "local", "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
                "compile_processes": 0, "max_notebook_bytes": 100}  # fmt: skip

    async def test_3_the_site_sets_the_notebook_limit(self, api):
        reply = await api.post("compile", {"path": "plain_python.ipynb"})
        assert reply.status == 413 and "the limit is 100 bytes" in reply.json["message"]


async def test_3_tail_is_capped(api):
    name = await api.submit(path="plain_python.ipynb", options={"parameters": {"steps": 1}})
    reply = await api.get(f"jobs/{name}/logs", params={"tail": 10001})
    assert reply.status == 400 and reply.json["field"] == "tail"
    assert "at most 10,000 lines" in reply.json["message"]
    assert (await api.get(f"jobs/{name}/logs", params={"tail": 10000})).status == 200


LONG_LINES = notebook(
    "import sys\nfor i in range(40):\n    sys.stdout.write(str(i) + 'y' * 200_000 + '\\n')"
)


def test_3_a_tail_of_long_lines_keeps_where_they_start_not_the_lines(tmp_path):
    backend = LocalBackend(tmp_path / "jobs", capacity=2)
    name = submit(backend, LONG_LINES).name
    assert backend.wait(name, timeout=120, interval=0.1).status is Status.COMPLETE
    tracemalloc.start()
    try:
        heads = [line.text[:3] for line in backend.logs(name, tail=30)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [h.rstrip("y") for h in heads] == [str(i) for i in range(10, 40)]
    assert peak < 3 * MIB  # the 30 lines are 6 MB: held at once, they were
