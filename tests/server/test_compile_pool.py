"""The compile pool (kale_ext/server/compile_pool.py) with real processes on a real event loop:
answers and errors come back, a process killed or hung fails its call with a reason and is
replaced, calls are served one client after another, a gone client's waiting call never runs,
and no process outlives the pool. A stopped process (SIGSTOP) is a process that hangs."""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import stat
import time

import pytest

from kale_ext.errors import ConfigError
from kale_ext.server.compile_pool import PIPE_BYTES, CompilePool, PoolError
from tests.backends.local.waiting import exited


def warmed() -> None:
    """The warm-up of these tests: nothing to load."""


def fails(field: str) -> None:
    raise ConfigError(field, "is wrong")


def unpicklable():
    return lambda: None


def pipe_sizes() -> set[int]:
    """What each pipe open in this process holds."""
    sizes = set()
    for fd in range(256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                sizes.add(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))
        except OSError:
            continue
    return sizes


@pytest.fixture
async def pool():
    made: list[CompilePool] = []

    def make(size: int = 1) -> CompilePool:
        made.append(CompilePool(size, warm_up=(warmed, ())))
        return made[-1]

    yield make
    for p in made:
        pids = [pid for pid in p.pids if pid]
        p.close()
        for pid in pids:
            assert exited(pid, timeout=30), f"compile process {pid} outlived its pool"


async def until(condition, what: str, timeout: float = 60) -> None:
    """Wait (on the loop, without blocking it) until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        await asyncio.sleep(0.01)


async def test_a_call_runs_in_another_process_and_its_error_comes_back(pool):
    p = pool()
    assert await p.submit(os.getpid) not in (None, os.getpid())
    with pytest.raises(ConfigError) as e:
        await p.submit(fails, "nodes")
    assert e.value.field == "nodes" and str(e.value) == "nodes: is wrong"
    with pytest.raises(RuntimeError, match="PicklingError|AttributeError"):
        await p.submit(unpicklable)  # a value that cannot travel back is said, not a hang
    assert await p.submit(sum, [1, 2, 3]) == 6  # the same process serves on


async def test_a_process_killed_mid_call_fails_the_call_and_another_takes_its_place(pool):
    p = pool()
    first = await p.submit(os.getpid)
    os.kill(first, signal.SIGSTOP)  # it holds the next call without answering
    call = p.submit(os.getpid)
    await until(lambda: p.busy == [first], "the call to reach the process")
    os.kill(first, signal.SIGKILL)
    with pytest.raises(PoolError) as e:
        await call
    assert e.value.status == 503 and e.value.reason == "CompileProcessEnded"
    assert "killed by signal 9 (SIGKILL)" in str(e.value) and "send it again" in str(e.value)
    second = await p.submit(os.getpid)  # a new process answers the next call
    assert second != first and p.pids == [second]


async def test_the_call_sent_ahead_to_a_process_that_dies_runs_in_the_next(pool):
    p = pool()
    first = await p.submit(os.getpid)
    os.kill(first, signal.SIGSTOP)
    running, ahead = p.submit(os.getpid), p.submit(os.getpid)
    await until(lambda: p.waiting() == 0, "both calls to reach the process")
    os.kill(first, signal.SIGKILL)
    with pytest.raises(PoolError, match="SIGKILL"):
        await running
    assert await ahead not in (first, None)  # it never started there: it was not lost


async def test_a_process_that_dies_by_itself_is_said_too(pool):
    p = pool()
    with pytest.raises(PoolError, match=r"exited with 3"):
        await p.submit(os._exit, 3)
    assert await p.submit(sum, [2, 2]) == 4


async def test_a_call_past_its_deadline_is_a_504_and_the_hung_process_is_replaced(pool):
    p = pool()
    hung = await p.submit(os.getpid)
    os.kill(hung, signal.SIGSTOP)
    with pytest.raises(PoolError) as e:
        await p.submit(os.getpid, deadline=0.5)
    assert e.value.status == 504 and "work_deadline" in str(e.value)
    assert exited(hung, timeout=30)  # killed, not left stopped
    assert await p.submit(os.getpid) not in (hung, None)


async def test_a_call_whose_client_left_is_still_killed_at_its_deadline(pool):
    """Issue 42: the deadline's timer went with the client; a call that hung (a FIFO read, a
    slow step) held its process for good. Now it is killed at the deadline, and the next call
    gets a process again."""
    p = pool()
    await p.submit(os.getpid)  # started and warm
    call = p.submit(time.sleep, 3600, deadline=1.0)  # a slow step
    await until(lambda: bool(p.busy), "the slow call to run")
    slow = p.busy[0]
    call.cancel()  # its client left
    await asyncio.sleep(0)
    assert await asyncio.to_thread(exited, slow, 30), (
        "the slow call's process outlived its deadline"
    )
    started = time.monotonic()
    assert await p.submit(sum, [1, 1]) == 2  # its place is free again
    assert time.monotonic() - started < 30


async def test_a_waiting_call_past_its_deadline_is_dropped_with_a_504(pool):
    p = pool()
    held = await p.submit(os.getpid)
    os.kill(held, signal.SIGSTOP)
    running = p.submit(os.getpid)
    await until(lambda: p.busy == [held], "the first call to run")
    with pytest.raises(PoolError, match="did not finish in 0.2 s"):
        await p.submit(os.getpid, deadline=0.2)  # it waited in line all the time
    os.kill(held, signal.SIGCONT)
    assert await running == held  # the running call was not touched


async def test_clients_take_turns_and_a_cancelled_call_never_runs(pool, tmp_path):
    p = pool()
    held = await p.submit(os.getpid)
    os.kill(held, signal.SIGSTOP)
    log = tmp_path / "order"
    order = [p.submit(append, log, "a0", client="a")]
    await until(lambda: p.busy == [held], "a0 to run")
    order += [p.submit(append, log, f"a{i}", client="a") for i in (1, 2, 3)]
    gone = p.submit(append, log, "b-gone", client="b")
    order += [p.submit(append, log, "b1", client="b"), p.submit(append, log, "c1", client="c")]
    gone.cancel()  # its client left while it waited
    await asyncio.sleep(0)  # the future's callbacks run
    assert p.waiting() == 4  # a1 is sent ahead to the process, behind a0
    os.kill(held, signal.SIGCONT)
    await asyncio.gather(*order)
    assert log.read_text().split() == ["a0", "a1", "a2", "b1", "c1", "a3"]


def append(path, word: str) -> None:
    with open(path, "a") as f:
        f.write(word + "\n")


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="pipe sizes are Linux's")
async def test_a_preview_sized_answer_fits_the_pipe_at_once(pool):
    """A 105-cell notebook's preview (66 KB) is larger than a pipe's default 64 KiB: the pipes
    hold PIPE_BYTES, so an answer is written at once (not in parts, each a wake-up of both)."""
    p = pool()
    assert await p.submit(pipe_sizes) == {PIPE_BYTES}  # the calls' pipe and the answers'
    answer = await p.submit(os.urandom, 3 * PIPE_BYTES)  # larger still: written in parts
    assert len(answer) == 3 * PIPE_BYTES


async def test_the_processes_warm_up_first_and_end_with_the_pool(pool):
    p = pool(2)
    p.start()
    await until(lambda: p.ready, "both processes to warm up")
    pids = p.pids
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert set(await asyncio.gather(*[p.submit(os.getpid) for _ in range(4)])) <= set(pids)
    # the fixture asserts they exit when the pool closes


async def test_a_pool_whose_processes_die_warming_up_gives_up_and_says_why():
    p = CompilePool(1, warm_up=(os._exit, (2,)))
    p.start()
    await until(lambda: p.failed is not None, "the pool to give up", timeout=120)
    assert "3 compile processes ended while warming up (exited with 2)" in p.failed


async def test_a_module_in_the_servers_folder_does_not_shadow_the_compile_process_own(
    pool, tmp_path, monkeypatch
):
    (tmp_path / "pickle.py").write_text("raise SystemExit('the folder pickle.py was imported')\n")
    monkeypatch.chdir(tmp_path)  # the server's folder: the notebooks' root
    p = pool()
    assert await p.submit(sum, [1, 2]) == 3
