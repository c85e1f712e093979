"""``report()`` → MLflow, inside a tracked job: rank 0 queues each record (one append, no I/O)
and a background thread sends them in ``log-batch`` requests every second and at exit. It never
blocks the training loop and never raises into it: when the server cannot be reached it says so
once on stderr and the job goes on untracked.

A compiled job's ``report`` shim imports :data:`track` only when the job's environment names a
run (``KALE_EXT_MLFLOW_RUN_ID``, set at submit when tracking is on); it is None on other ranks.
Standard library only (through mlflow_api): the job needs no mlflow to report.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from .metrics import INTERNAL_KEYS
from .mlflow_api import (
    END_ENV,
    MAX_BATCH,
    RUN_ID_ENV,
    URI_ENV,
    Tracking,
    TrackingError,
    finish,
)

#: Seconds between sends while the job runs; how long one send may take (the loop never waits
#: for it); how long the job's exit may wait for what is left.
INTERVAL = 1.0
SEND_TIMEOUT = 30.0
EXIT_WAIT = 30.0
_JSON_NUMBER = {math.inf: "Infinity", -math.inf: "-Infinity"}
#: The keys of a record that are not metrics: its step, its rank, and kale_ext's own keys
#: (metrics.INTERNAL_KEYS: progress and the checkpoint's step, shown as such).
NOT_METRICS = frozenset(("step", "rank", *INTERNAL_KEYS))


def _value(raw: object) -> str | None:
    """A reported value as JSON text MLflow takes (NaN and infinities as strings), or None."""
    if raw.__class__ is float and raw - raw == 0:  # the common case: a finite float
        return repr(raw)
    if isinstance(raw, (str, bytes, bool)):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isfinite(value):
        return repr(value)
    return '"NaN"' if math.isnan(value) else f'"{_JSON_NUMBER[value]}"'


def _step(step: object, index: int) -> int:
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
        return index
    return int(step)


_PREFIXES: dict[str, str] = {}


def _prefix(key: str) -> str:
    """``{"key":"<key>","value":`` (kept: a job reports the same few names again and again)."""
    found = _PREFIXES.get(key)
    if found is None:
        found = _PREFIXES[key] = '{"key":' + json.dumps(key) + ',"value":'
    return found


def encode_metrics(records: list[tuple[float, dict]], first_index: int = 0) -> list[str]:
    """Queued (time, record) pairs as MLflow metrics, each a JSON object's text (built as text:
    the sender must cost the training loop little); a record without a step takes its place in
    the job's sequence of reports as its step. kale_ext's own keys (progress, checkpoint_step)
    are no metrics: MLflow is not sent them."""
    out = []
    append = out.append
    prefixes = _PREFIXES
    for i, (when, record) in enumerate(records, first_index):
        step = record.get("step")
        if step.__class__ is not int:
            step = _step(step, i)
        tail = f',"timestamp":{int(when * 1000)},"step":{step}}}'
        for key, raw in record.items():
            if key in NOT_METRICS:
                continue
            if raw.__class__ is float and raw - raw == 0:  # the common case
                text = repr(raw)
            elif (text := _value(raw)) is None:
                continue
            append((prefixes.get(key) or _prefix(key)) + text + tail)
    return out


class Sink:
    """Records queued by the training loop, sent by a daemon thread."""

    def __init__(self, tracking: Tracking, run_id: str, warn: Callable[[str], None]):
        self.tracking = tracking
        self.run_id = run_id
        self.warn = warn
        self.off = False
        self.sent = 0  # records sent (or given up) so far: the next record's index
        self._pending: deque = deque()
        self._stop = threading.Event()
        self._until: float | None = None  # at exit: when to stop sending
        self._lock = threading.Lock()  # one sender at a time: the thread, or the flush at exit
        self._thread = threading.Thread(target=self._run, name="kale-ext-mlflow", daemon=True)
        self._thread.start()

    def track(self, record: dict) -> None:
        """Queue one report (the hot path: a flag test and an append)."""
        if not self.off:
            self._pending.append((time.time(), record))

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            self.send()

    def send(self) -> None:
        """Send what is queued (by the exit's deadline, once the job exits); on the first
        failure, say so once and stop tracking."""
        with self._lock:
            records = []
            while self._pending:
                records.append(self._pending.popleft())
            if not records or self.off:
                return
            metrics = encode_metrics(records, self.sent)
            self.sent += len(records)
            for i in range(0, len(metrics), MAX_BATCH):
                if self._until is not None and time.monotonic() > self._until:
                    self.warn(f"MLflow: {len(metrics) - i} metric values were not sent in time")
                    return
                try:
                    self.tracking.log_encoded(self.run_id, metrics[i : i + MAX_BATCH])
                except TrackingError as e:
                    self.off = True
                    self._pending.clear()
                    self.warn(f"MLflow tracking is off for this job ({e}); training goes on")
                    return

    def close(self) -> None:
        """Stop the thread and send what is left (at exit)."""
        self._until = time.monotonic() + EXIT_WAIT
        self._stop.set()
        self._thread.join(timeout=EXIT_WAIT)
        if self._thread.is_alive():  # a send still waits for the server: the job exits anyway
            self.warn("MLflow: stopped waiting for the server at exit")
            return
        self.send()


def _warn(message: str) -> None:
    print(f"kale_ext: {message}", file=sys.stderr, flush=True)


def _failed_on_exception() -> Callable[[], bool]:
    """Wrap sys.excepthook to see whether the process ends on an uncaught exception."""
    seen = []
    previous = sys.excepthook

    def hook(kind, value, tb):
        seen.append(kind)
        previous(kind, value, tb)

    sys.excepthook = hook
    return lambda: bool(seen)


def _at_exit(sink: Sink, failed: Callable[[], bool] | None) -> None:
    sink.close()
    if failed is None:  # the supervisor ends the run
        return
    outputs = os.environ.get("KALE_EXT_OUTPUT_DIR")
    status = "Failed" if failed() else "Complete"
    warning = finish(os.environ, status, Path(outputs) if outputs else None)
    if warning:
        _warn(f"MLflow: {warning}")


def start() -> Callable[[dict], None] | None:
    """The sink's ``track`` on rank 0 of a tracked job (with its exit hook), else None."""
    run_id, uri = os.environ.get(RUN_ID_ENV), os.environ.get(URI_ENV)
    if not run_id or not uri or os.environ.get("RANK", "0") != "0":
        return None
    try:
        sink = Sink(Tracking(uri, SEND_TIMEOUT), run_id, _warn)
    except TrackingError as e:
        _warn(f"MLflow tracking is off for this job ({e}); training goes on")
        return None
    failed = _failed_on_exception() if os.environ.get(END_ENV) else None
    atexit.register(_at_exit, sink, failed)
    return sink.track


#: What the compiled ``report`` shim calls with each record (None: not tracked here).
track = start()
