"""A compile process: `python -m kale_ext.server.compile_worker`, started by the server's compile
pool (compile_pool.py). It reads calls from its stdin and writes their results to its stdout,
one at a time, each a frame: its length (4 bytes, big-endian), then a pickle.

A call is ``(fn, args)``; its answer ``(True, value)`` or ``(False, exception)``. The process
ends when its stdin ends: the server closed it, or the server died (however it died: the kernel
closes a dead process's pipes). What the called code prints goes to stderr, never into a frame.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import struct

HEADER = struct.Struct("!I")
#: A frame larger than this is refused by both sides (a request body is at most
#: KaleExtApp.max_body_bytes; an answer is the preview's JSON).
MAX_FRAME = 1 << 31
#: The cyclic collector's thresholds in a compile process. A compile keeps each changed cell's
#: work (compile/kept.py): hundreds of new long-lived objects a request. At Python's default
#: (700, 10, 10) a preview with every cell changed of the 105-cell benchmark notebook ran a young
#: collection every ~14 requests (3-6 ms each) and, every ~1,200, a full one of 200 ms: 0.5 ms of
#: CPU a request. With these, and the imports frozen after the first call (never scanned again):
#: 0.06 ms, the longest pause 42 ms. What it leaves uncollected meanwhile is bounded by the first
#: threshold (the only cycles a compile makes are ast.literal_eval's, a few dozen objects).
GC_THRESHOLDS = (20_000, 10, 10)


def frame(value) -> bytes:
    """``value`` pickled, behind its length."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) >= MAX_FRAME:
        raise ValueError(f"a frame of {len(data)} bytes is larger than {MAX_FRAME}")
    return HEADER.pack(len(data)) + data


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``; None when it ends first."""
    parts, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def answer(call: bytes) -> bytes:
    """The frame that answers one call's pickle (an exception that does not pickle is sent as
    a RuntimeError naming it)."""
    try:
        fn, args = pickle.loads(call)
        reply = (True, fn(*args))
    except Exception as e:
        reply = (False, e)
    try:
        return frame(reply)
    except Exception as e:  # the value or the exception does not pickle
        what = reply[1] if not reply[0] else e
        return frame((False, RuntimeError(f"{type(what).__name__}: {what}")))


def serve(calls: int, answers: int) -> None:
    """Answer the calls read from fd ``calls`` on fd ``answers`` until ``calls`` ends. What the
    first call imported is frozen (the collector does not scan it again)."""
    first = True
    while True:
        header = _read_exactly(calls, HEADER.size)
        if header is None:
            return
        body = _read_exactly(calls, HEADER.unpack(header)[0])
        if body is None:
            return
        _write_all(answers, answer(body))
        if first:
            gc.freeze()
            first = False


def main() -> None:
    # the frames travel on copies of stdin and stdout; fd 1 becomes stderr (prints go there)
    calls, answers = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    # Ctrl-C in the server's terminal reaches this process too: the server's end ends it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*GC_THRESHOLDS)
    serve(calls, answers)
    os._exit(0)  # no interpreter tear-down (its garbage collection of the frozen objects)


if __name__ == "__main__":
    main()
