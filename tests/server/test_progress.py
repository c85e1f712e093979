"""A real local 2-node job's progress, end to end: it reports its steps with report(step=s,
total=n); `run --follow` (piped), the REST API, `kale-ext status` and `kale-ext jobs` show a bar
with an ETA while it runs, and it reaches 100 %. The job waits on files the test creates, so
each stage is reached by an event, not by time."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time

import pytest

from kale_ext.server.schema import validator
from tests.cli import cli
from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

STEPS = 400
#: Rank 0 reports a step every 0.25 s until `fast` exists, then the rest at once; both ranks
#: wait at 100 % until `end` exists (at most 5 min: a job never outlives a broken test long).
NOTEBOOK = notebook(
    ("import os, time\nimport torch\nimport torch.distributed as dist\nfrom kale_ext import report",
     ["imports"]),
    ("fast = ''\nend = ''\nsteps = 10", ["parameters"]),
    "dist.init_process_group('gloo')\n"
    "for s in range(1, steps + 1):\n"
    "    if not os.path.exists(fast):\n"
    "        time.sleep(0.25)\n"
    "    report(step=s, total=steps, loss=1 / s)\n"
    "done = torch.tensor([s])\n"
    "dist.all_reduce(done)\n"
    "print('steps on both ranks', int(done))\n"
    "stop = time.monotonic() + 300\n"
    "while not os.path.exists(end) and time.monotonic() < stop:\n"
    "    time.sleep(0.05)",
)  # fmt: skip


async def until(check, what: str, timeout: float = 180):
    """Await ``check()`` (a coroutine function) until it returns something true."""
    deadline = time.monotonic() + timeout
    while not (result := await check()):
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        await asyncio.sleep(0.1)
    return result


async def test_a_two_node_job_shows_its_progress_everywhere(api, jobs_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(jobs_dir))  # the CLI's jobs are the server's
    path = tmp_path / "progress.ipynb"
    path.write_text(json.dumps(NOTEBOOK))
    fast, end, name = tmp_path / "fast", tmp_path / "end", "progress-two"
    follow_out, follow_err = (
        (tmp_path / "follow.out").open("w+"),
        (tmp_path / "follow.err").open("w+"),
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "kale_ext.cli", "run", str(path), "--backend", "local",
         "--nodes", "2", "--name", name, "--follow", "--param", f"steps={STEPS}",
         "--param", f"fast={fast}", "--param", f"end={end}"],
        stdout=follow_out, stderr=follow_err, text=True,
    )  # fmt: skip
    check = validator("#/components/schemas/JobInfo")

    async def job():
        reply = await api.get(f"jobs/{name}")
        return reply.json if reply.status == 200 else None

    try:

        async def with_eta():
            found = await job()
            return found if found and (found.get("progress") or {}).get("eta_seconds") else None

        running = await until(with_eta, "the job to report progress with an ETA")
        progress = running["progress"]
        assert running["status"] == "Running" and not list(check.iter_errors(running))
        assert (progress["total"], progress["unit"], progress["source"]) == (
            STEPS,
            "step",
            "report",
        )
        assert 0 < progress["percent"] < 100 and progress["eta_seconds"] > 0

        status = await asyncio.to_thread(cli, "status", name, "--backend", "local")
        [line] = [t for t in status.stdout.splitlines() if t.startswith("progress   ")]
        drawn = re.match(r"progress\s+(\[[#-]+\]) ([\d.]+)%", line)  # the bar is its percent
        assert drawn and draws(drawn[1], float(drawn[2])), line
        assert f"/{STEPS} steps), ETA " in line
        assert not line.endswith("ETA -")  # the rate is steady: an ETA is shown
        table = (await asyncio.to_thread(cli, "jobs", "--backend", "local")).stdout.splitlines()
        head, [row] = table[0], [t for t in table[1:] if t.startswith(name)]
        cells = row[head.index("PROGRESS") : head.index("CREATED")].split()
        shown = float(cells[1].rstrip("%"))  # the bar is the percent beside it; an ETA
        assert draws(cells[0], shown) and cells[2] != "-"
        listed = (await api.get("jobs")).json["jobs"]
        assert [j["progress"]["total"] for j in listed if j["name"] == name] == [STEPS]

        def followed(*texts: str):
            follow_err.seek(0)
            said = f"[{name}] progress "
            lines = [t[len(said) :] for t in follow_err.read().splitlines() if t.startswith(said)]
            return [t for t in lines if all(x in t for x in texts) and not t.endswith("ETA -")]

        await until(lambda: asyncio.to_thread(followed, "%", "steps), ETA "), "a piped ETA line")
        fast.touch()  # the rest of the steps at once; then the job waits at 100 %

        async def at_100():
            found = await job()
            return found if found and (found.get("progress") or {}).get("percent") == 100 else None

        whole = await until(at_100, "the job to reach 100 %")
        assert whole["status"] == "Running" and whole["progress"]["eta_seconds"] == 0
        assert whole["progress"]["step"] == STEPS and not list(check.iter_errors(whole))
        status = await asyncio.to_thread(cli, "status", name, "--backend", "local")
        assert f"progress      [{'#' * 20}] 100% ({STEPS}/{STEPS} steps), ETA 0s" in (
            status.stdout.splitlines()
        )

        full = f"100% ({STEPS}/{STEPS} steps), ETA 0s"
        await until(lambda: asyncio.to_thread(followed, full), "run --follow to show 100 %")
        end.touch()
        await asyncio.to_thread(run.wait, timeout=180)
    finally:
        fast.touch()
        end.touch()
        if run.poll() is None:
            run.kill()
    follow_out.seek(0), follow_err.seek(0)
    out, err = follow_out.read(), follow_err.read()
    assert run.returncode == 0, err
    assert "[rank 0] steps on both ranks 800" in out and f"step {STEPS}/{STEPS}: loss" in out
    said = f"[{name}] progress "
    shown = [t[len(said) :] for t in err.splitlines() if t.startswith(said)]
    percents = [float(t.split("%")[0]) for t in shown]
    assert percents == sorted(percents) and len(shown) <= 11  # a line a tenth, not a step

    ended = await job()
    assert ended["status"] == "Complete" and ended["progress"]["percent"] == 100  # kept
    status = await asyncio.to_thread(cli, "status", name, "--backend", "local")
    assert f"progress      reached 100% ({STEPS}/{STEPS} steps)" in status.stdout.splitlines()
    table = (await asyncio.to_thread(cli, "jobs", "--backend", "local")).stdout.splitlines()
    head, [row] = table[0], [t for t in table[1:] if t.startswith(name)]
    assert row[head.index("PROGRESS") : head.index("CREATED")].split() == ["-", "-"]


def draws(drawn: str, percent: float) -> bool:
    """Whether a text bar (``[###-------]``) shows ``percent`` (as rounded for the eye)."""
    width, filled = len(drawn) - 2, drawn.count("#")
    shape = drawn == "[" + "#" * filled + "-" * (width - filled) + "]"
    return shape and abs(filled - width * percent / 100) <= 1
