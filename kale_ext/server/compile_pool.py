"""The server's compile processes, driven by its event loop itself.

Each process (compile_worker.py) is a child of the server with a pipe each way; the event loop
writes a call's frame to an idle process and reads the answer when it comes (asyncio pipe
transports). No thread of the server takes part: concurrent.futures' ProcessPoolExecutor ran two
(a feeder that pickled and a manager that woke the loop), which competed with the loop for the
GIL and cost the server 0.18-0.32 ms of CPU a call; this way costs 0.09-0.13 ms, all of it on
the loop (issue 28; benchmarks/README.md).

What the pool guarantees:
- one call at a time per process (and the next one sent ahead, so it never waits for the
  loop); calls wait in line, served fairly: one per client in turn, so one client's burst does
  not hold back another's request;
- a call has a deadline, waiting included: past it, a waiting call is dropped and a running
  one's process is killed (and replaced); either way the caller gets a 504 reason (a call sent
  ahead still runs, its answer dropped);
- a cancelled call (its client left) is dropped while it waits; once sent to a process it
  runs and its answer is dropped, but its deadline still holds: past it, its process is killed
  (and replaced) whether or not its client stays, so a call that hangs never holds a process;
- a process that dies (killed, crashed) fails the call it ran with a 503 reason saying so
  (the one sent ahead goes back in line), and a new one takes its place (at most one start a
  second per place);
- each process first runs the warm-up (its imports and one compile), then serves calls; it
  ends with the server however the server ends (its stdin closes; warmup.py also watches the
  server's pid). When no process can start, or 3 in a row die warming up, the pool gives up
  (``failed`` says why, in the server's log too) and the server compiles in its threads.
"""

from __future__ import annotations

import asyncio
import pickle
import signal
import subprocess
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path

from .compile_worker import HEADER, MAX_FRAME, frame

#: Seconds between two starts of a process in the same place (a process that dies at once is
#: not restarted in a tight loop).
RESTART_EVERY = 1.0
#: Processes in a row that die before their warm-up ends, after which the pool gives up.
MAX_EARLY_DEATHS = 3
#: Calls sent to a process at once: the one it runs and the next.
PIPELINE = 2
#: The reason of a call's PoolError when the pool gave up (``failed``): nothing ran it.
GAVE_UP = "NoCompileProcess"
#: What each pipe to and from a process holds (Linux's default, 64 KiB, is less than the answer
#: of a 105-cell notebook's preview: 66 KB, written and read in two parts). Not more: the pages
#: a user's pipes may hold are limited (/proc/sys/fs/pipe-user-pages-soft), past it new pipes
#: get one page.
PIPE_BYTES = 256 * 1024


class PoolError(Exception):
    """A call the pool could not answer: ``status`` (503, 504) and ``reason`` for the reply."""

    def __init__(self, status: int, message: str, reason: str):
        super().__init__(message)
        self.status = status
        self.reason = reason


class _Call:
    __slots__ = ("frame", "client", "future", "timer", "worker")

    def __init__(self, frame: bytes, client: str, future: asyncio.Future | None):
        self.frame, self.client, self.future = frame, client, future  # no future: the warm-up
        self.timer: asyncio.TimerHandle | None = None
        self.worker: _Worker | None = None

    def done(self) -> bool:
        return self.future is None or self.future.done()


class _Worker(asyncio.Protocol):
    """One compile process: its pipes' protocol (the answers, read as they come) and the calls
    sent to it, in order (the first is the one it runs)."""

    def __init__(self, pool: CompilePool, place: int):
        self.pool, self.place = pool, place
        self.proc: subprocess.Popen | None = None
        self.writer: asyncio.WriteTransport | None = None
        self.reader: asyncio.ReadTransport | None = None
        self.buffer = bytearray()
        self.calls: deque[_Call] = deque()
        self.gone = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def warming(self) -> bool:
        """Not started yet, or running its warm-up."""
        return self.writer is None or bool(self.calls) and self.calls[0].future is None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= HEADER.size:
            size = HEADER.unpack_from(self.buffer)[0]
            if size >= MAX_FRAME or not self.calls:
                self.pool._lost(self, "sent a malformed answer")
                return
            if len(self.buffer) < HEADER.size + size:
                return
            body = self.buffer[HEADER.size : HEADER.size + size]  # one copy; unpickled as is
            del self.buffer[: HEADER.size + size]
            self.pool._answered(self, self.calls.popleft(), body)

    def eof_received(self) -> bool:
        self.pool._lost(self, "ended")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.gone:
            self.pool._lost(self, "ended")

    def send(self, call: _Call) -> None:
        call.worker = self
        self.calls.append(call)
        self.writer.write(call.frame)

    def kill(self) -> asyncio.Future | None:
        """Stop the process and close its pipes: a future done once it is reaped (in a thread:
        no zombie left), or None when there is no process or it is reaped already."""
        self.gone = True
        for transport in (self.writer, self.reader):
            if transport is not None:
                transport.close()
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                proc.kill()
            except OSError:
                pass
        try:
            return self.pool._loop.run_in_executor(None, proc.wait)
        except RuntimeError:  # the loop is closed
            proc.wait(5)
            return None

    def how_it_ended(self) -> str:
        """`killed by signal 9 (SIGKILL)`, `exited with 1`, or '' while it runs."""
        code = self.proc.poll() if self.proc is not None else None
        if code is None:
            return ""
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "?"
            return f"killed by signal {-code} ({name})"
        return f"exited with {code}"


class CompilePool:
    """``size`` compile processes; :meth:`submit` runs a call in one of them. Lives on (and
    must be used from) one event loop. ``warm_up``: ``(fn, args)`` each process runs first."""

    def __init__(self, size: int, warm_up: tuple[Callable, tuple], log=None):
        self.size = size
        self._warm_up = frame(warm_up)
        self._log = log
        self._workers: list[_Worker | None] = [None] * size
        self._waiting: OrderedDict[str, deque[_Call]] = OrderedDict()  # by client, in turn
        self._restart_at = [0.0] * size
        self._closed = False
        self._early_deaths = 0
        #: Why the pool gave up (no process could start, or each died warming up), else None.
        self.failed: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the API --

    def start(self) -> None:
        """Start every process now (each warms up first). Idempotent."""
        self._loop = self._loop or asyncio.get_running_loop()
        for place in range(self.size):
            if self._workers[place] is None and not self._closed:
                self._spawn(place)

    def submit(self, fn: Callable, *args, client: str = "", deadline: float = 600.0):
        """``fn(*args)`` in a compile process: an asyncio Future of its value (its exception;
        PoolError when the pool could not answer). Cancel the future to drop the call."""
        self.start()
        future = self._loop.create_future()
        call = _Call(frame((fn, args)), client, future)
        call.timer = self._loop.call_later(deadline, self._deadline, call, deadline)
        future.add_done_callback(lambda _: self._done(call))
        self._waiting.setdefault(client, deque()).append(call)
        self._dispatch()
        return future

    @property
    def ready(self) -> bool:
        """Whether every process has started and finished its warm-up."""
        return all(w is not None and not w.warming for w in self._workers)

    @property
    def pids(self) -> list[int | None]:
        return [w.pid if w is not None else None for w in self._workers]

    @property
    def busy(self) -> list[int]:
        """The pids of the processes running a call (the warm-up included)."""
        return [w.pid for w in self._workers if w is not None and w.calls and w.pid]

    def waiting(self) -> int:
        """Calls not yet sent to a process."""
        return sum(len(q) for q in self._waiting.values())

    def close(self, why: str = "the server is stopping", reason: str = "ServerStopping") -> None:
        """End every process (their stdin closes; they are killed too) and fail every call."""
        self._closed = True
        for place, worker in enumerate(self._workers):
            self._workers[place] = None
            if worker is not None:
                worker.kill()
                for call in worker.calls:
                    self._fail(call, 503, why, reason)
        for queue in list(self._waiting.values()):
            for call in list(queue):
                self._fail(call, 503, why, reason)
        self._waiting.clear()

    # -- processes --

    def _spawn(self, place: int) -> None:
        worker = _Worker(self, place)
        self._workers[place] = worker
        self._restart_at[place] = time.monotonic() + RESTART_EVERY
        self._loop.create_task(self._connect(worker))

    async def _connect(self, worker: _Worker) -> None:
        loop = self._loop
        try:
            worker.proc = await loop.run_in_executor(None, _popen)
            worker.writer, _ = await loop.connect_write_pipe(lambda: worker, worker.proc.stdin)
            worker.reader, _ = await loop.connect_read_pipe(lambda: worker, worker.proc.stdout)
        except Exception as e:  # no process can start here: the caller compiles elsewhere
            worker.kill()
            self._give_up(f"a compile process did not start: {e}")
            return
        if worker.gone or self._closed:
            worker.kill()
            return
        worker.send(_Call(self._warm_up, "", None))
        self._dispatch()

    def _lost(self, worker: _Worker, why: str) -> None:
        """A process ended (or misbehaved): once it is reaped, fail the call it ran saying how
        it ended, put the calls sent after it (never started) back in line, and start another
        process in its place."""
        if worker.gone:
            return
        if self._workers[worker.place] is worker:
            self._workers[worker.place] = None
        reaped = worker.kill()
        if reaped is None:
            self._after(worker, why)
        else:
            reaped.add_done_callback(lambda _: self._after(worker, why))

    def _after(self, worker: _Worker, why: str) -> None:
        ended = worker.how_it_ended()
        warming = worker.warming
        running = worker.calls.popleft() if worker.calls else None
        if running is not None and running.timer is not None:
            running.timer.cancel()
            running.timer = None
        if running is not None:
            self._fail(
                running,
                503,
                f"the compile process {why} while compiling this request"
                f"{f' ({ended})' if ended else ''}; another has started: send it again",
                "CompileProcessEnded",
            )
        for call in reversed(worker.calls):  # sent, never started: first in line again
            if not call.done():
                call.worker = None
                self._waiting.setdefault(call.client, deque()).appendleft(call)
                self._waiting.move_to_end(call.client, last=False)
        worker.calls.clear()
        if self._closed:
            return
        if warming:  # it never served: after a few such, stop starting them
            self._early_deaths += 1
            if self._early_deaths >= MAX_EARLY_DEATHS:
                self._give_up(f"{self._early_deaths} compile processes {why} while warming up "
                              f"({ended or 'no exit status'})")  # fmt: skip
                return
        self._warn(f"kale_ext: compile process {worker.pid} {why} ({ended}); starting another")
        delay = max(0.0, self._restart_at[worker.place] - time.monotonic())
        self._loop.call_later(delay, self._respawn, worker.place)

    def _give_up(self, why: str) -> None:
        """No more processes: ``failed`` says why, and every call waiting fails with the reason
        GAVE_UP (the caller then compiles in its threads)."""
        self.failed = why
        self._warn(f"kale_ext: {why}; compiling in the server's threads instead")
        self.close(why, GAVE_UP)

    def _respawn(self, place: int) -> None:
        if not self._closed and self._workers[place] is None:
            self._spawn(place)

    # -- calls --

    def _answered(self, worker: _Worker, call: _Call, body: bytes | bytearray) -> None:
        if call.timer is not None:  # it ended in time
            call.timer.cancel()
            call.timer = None
        if call.future is None:  # the warm-up
            self._early_deaths = 0
        elif not call.future.done():
            try:
                ok, value = pickle.loads(body)
            except Exception as e:
                ok, value = False, RuntimeError(f"an answer that does not unpickle: {e}")
            if ok:
                call.future.set_result(value)
            else:
                call.future.set_exception(value)
        self._dispatch()

    def _dispatch(self) -> None:
        """Send waiting calls to the processes, one client after another: each process holds at
        most PIPELINE calls (the one it runs, and the next, so that it never waits for the
        loop to send one)."""
        for depth in range(1, PIPELINE + 1):  # the idle processes first
            for worker in self._workers:
                if worker is None or worker.warming or len(worker.calls) >= depth:
                    continue
                call = self._next()
                if call is None:
                    return
                worker.send(call)

    def _next(self) -> _Call | None:
        while self._waiting:
            client, queue = next(iter(self._waiting.items()))
            call = queue.popleft()
            if queue:
                self._waiting.move_to_end(client)  # the next client's turn
            else:
                del self._waiting[client]
            if not call.done():  # a cancelled call is dropped here
                return call
        return None

    def _deadline(self, call: _Call, seconds: float) -> None:
        """Past a call's deadline: its caller gets a 504 (unless it left), and the process that
        runs it is killed, whether or not its caller stays. A call sent ahead, not yet started,
        whose caller left is looked at again after as long."""
        call.timer = None
        worker = call.worker
        self._fail(
            call,
            504,
            f"the compile did not finish in {seconds:g} s (KaleExtApp.work_deadline)",
            "DeadlinePassed",
        )
        if worker is None or worker.gone or call not in worker.calls:
            return
        if worker.calls[0] is call:  # it hangs
            self._lost(worker, f"was stopped after {seconds:g} s")
        else:  # sent ahead: its time runs from when it starts at the latest
            call.timer = self._loop.call_later(seconds, self._deadline, call, seconds)

    def _done(self, call: _Call) -> None:
        """The call's future is done: answered, failed, or cancelled (its client left). Its
        deadline stays while a process holds it (a cancelled call still runs there)."""
        held = call.worker is not None and not call.worker.gone and call in call.worker.calls
        if call.timer is not None and not held:
            call.timer.cancel()
            call.timer = None
        if call.worker is None:  # still waiting: out of its line now
            queue = self._waiting.get(call.client)
            if queue is not None and call in queue:
                queue.remove(call)
                if not queue:
                    del self._waiting[call.client]

    def _fail(self, call: _Call, status: int, message: str, reason: str) -> None:
        if not call.done():
            call.future.set_exception(PoolError(status, message, reason))

    def _warn(self, message: str) -> None:
        if self._log is not None:
            self._log.warning(message)


def _popen() -> subprocess.Popen:
    """A compile process: this Python, this environment; its stderr the server's. It starts in
    the folder that holds kale_ext (`-m` puts its working directory first on sys.path: the
    server's, the notebooks' root, could hold a `json.py` that would be imported instead)."""
    import kale_ext

    proc = subprocess.Popen(
        [sys.executable, "-m", "kale_ext.server.compile_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        close_fds=True,
        cwd=Path(kale_ext.__file__).resolve().parent.parent,
    )
    for pipe in (proc.stdin, proc.stdout):
        _widen(pipe.fileno())
    return proc


def _widen(fd: int) -> None:
    """Make a pipe hold PIPE_BYTES (Linux; elsewhere, or when the system refuses, it keeps its
    size): a frame larger than the pipe is written in parts, each part a wake-up of both ends."""
    import fcntl

    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError):  # not Linux; past the user's pipe pages
        pass
