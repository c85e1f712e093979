"""A compile process's own loop (kale_ext/server/compile_worker.py): frames in, frames out, in
order; what the called code prints never corrupts a frame; it ends when its stdin ends."""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys

import pytest

from kale_ext.server.compile_worker import GC_THRESHOLDS, HEADER, answer, frame


class Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("no pickling here")


def raises_unpicklable():
    raise Unpicklable("kept here")


def prints_then_returns(value):
    print("noise on stdout")
    os.write(1, b"noise on fd 1\n")
    return value


def read_answer(stream) -> tuple:
    size = HEADER.unpack(stream.read(HEADER.size))[0]
    return pickle.loads(stream.read(size))


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ((sum, ([1, 2],)), (True, 3)),
        ((int, ("x",)), (False, ValueError)),
        ((raises_unpicklable, ()), (False, RuntimeError)),  # said as a RuntimeError naming it
    ],
    ids=["value", "error", "an error that does not pickle"],
)
def test_an_answer_is_a_frame_of_its_pickle(call, expected):
    reply = answer(pickle.dumps(call))
    assert int.from_bytes(reply[:4], "big") == len(reply) - 4
    ok, value = pickle.loads(reply[4:])
    assert ok is expected[0]
    if ok:
        assert reply == frame((True, value)) and value == expected[1]
    else:
        assert type(value) is expected[1]
        if expected[1] is RuntimeError:
            assert "Unpicklable: kept here" in str(value)


def test_the_process_collects_cycles_rarely_and_never_rescans_its_imports():
    """A compile keeps each changed cell's work: at Python's default thresholds the collector
    scanned it every few requests (0.5 ms of CPU a request, a 200 ms pause now and then)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kale_ext.server.compile_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        for call in ((gc.get_freeze_count, ()), (gc.get_threshold, ()), (gc.get_freeze_count, ())):
            proc.stdin.write(frame(call))
        proc.stdin.close()
        before, thresholds, after = (read_answer(proc.stdout) for _ in range(3))
        assert before == (True, 0) and thresholds == (True, GC_THRESHOLDS)
        assert after[0] and after[1] > 1000  # what the first call found loaded is frozen
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_process_answers_in_order_keeps_prints_out_and_ends_with_its_stdin(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "kale_ext.server.compile_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for value in ("first", "second"):
            proc.stdin.write(frame((prints_then_returns, (value,))))
        proc.stdin.flush()
        assert read_answer(proc.stdout) == (True, "first")
        assert read_answer(proc.stdout) == (True, "second")
        proc.stdin.close()  # the server's end of the pipe closes: the process ends
        assert proc.wait(30) == 0
        assert proc.stdout.read() == b""
        assert b"noise on stdout" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
