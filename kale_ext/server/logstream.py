"""Log streaming: a backend's blocking log iterator, read in a thread, served as server-sent events.

    backend.logs(..., follow=...)  ──thread──►  bounded buffer  ──event loop──►  SSE events

The thread never touches the HTTP connection, and the event loop never waits on the backend: the
thread encodes each line as its event, and the loop wakes once per batch of events (not once per
line) and writes, then flushes, them all. A stream holds at most `budget` bytes (512 KiB) of
events: those waiting in the buffer (counted as the memory they take, not their characters) and
those written but not yet taken by the client's socket (the next `batch()` call says they were),
so a client that stops reading stops the reader there and costs the server about 1 MiB in all.
Backends read logs in bounded pieces (backends/logpieces.py): the server's memory does not grow
with a log's size, however large it or one of its lines is.

Each event's `id:` is `<node>:<offset>` (the byte offset after the line in the node's log), so a
client that reconnects with `Last-Event-ID` or `offsets=` resumes exactly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from collections import deque
from json.encoder import encode_basestring as _json_text  # a str as JSON, in C

log = logging.getLogger(__name__)

#: What one buffered event costs beyond its text: the `(kind, text)` tuple and its queue slot.
_ITEM_COST = sys.getsizeof(("line", b"")) + 8

#: `<node>:<offset>`, each at most 18 digits (a file offset fits in 63 bits).
_OFFSET = re.compile(r"^\s*(\d{1,18})\s*:\s*(\d{1,18})\s*$", re.ASCII)


def parse_offsets(text: str) -> dict[int, int]:
    """`"0:123,1:456"` → `{0: 123, 1: 456}` (ValueError with a message when malformed)."""
    offsets: dict[int, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        node, offset = parse_event_id(part)
        if node in offsets:
            raise ValueError(f"node {node} is given twice")
        offsets[node] = offset
    return offsets


def parse_event_id(text: str) -> tuple[int, int]:
    """`"1:456"` → `(1, 456)`: the id of a log event, `<node>:<offset>`."""
    m = _OFFSET.match(text)
    if not m:
        raise ValueError(
            f"{_short(text)} is not <node>:<offset> (two whole numbers of at most 18 digits, "
            "e.g. 0:1234)"
        )
    return int(m.group(1)), int(m.group(2))


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def event(data: dict, name: str | None = None, id: str | None = None) -> str:
    """One server-sent event; the JSON data stays on one line (newlines are escaped)."""
    head = (f"event: {name}\n" if name else "") + (f"id: {id}\n" if id else "")
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"


def line_event(line) -> str:
    """A log line's event: what `event` makes of its fields, written out directly (a stream
    of a job printing flat out makes thousands a second, in the thread that reads its log)."""
    node, offset, rank = int(line.node), int(line.offset), line.rank
    rank = "null" if rank is None else int(rank)
    more = ', "partial": true' if getattr(line, "partial", False) else ""
    return (
        f'id: {node}:{offset}\ndata: {{"node": {node}, "rank": {rank}, '
        f'"text": {_json_text(line.text)}, "offset": {offset}{more}}}\n\n'
    )


def error_data(e: BaseException) -> dict:
    """The `error` event's data: the KaleExtError's message and status, never a traceback."""
    from ..errors import KaleExtError

    if isinstance(e, KaleExtError):
        status = getattr(e, "status", None)
        data = {"message": str(e), "status": status if isinstance(status, int) else 400}
        if getattr(e, "reason", None):
            data["reason"] = e.reason
        return data
    return {"message": f"internal error in kale_ext: {type(e).__name__}: {e}", "status": 500}


class LogStream:
    """Reads `backend.logs(...)` in its own thread into a bounded buffer the event loop drains.

    Items are `("line", the line's event as UTF-8)`, then one `("end", {"status", "reason"})` when
    the lines run out (for `follow`, when the job has ended), or `("error", exception)`.
    """

    def __init__(
        self,
        backend,
        name: str,
        *,
        node=None,
        follow=False,
        tail=None,
        offsets=None,
        budget: int = 512 * 1024,
    ):
        self._backend = backend
        self._name = name
        self._args = {"node": node, "follow": follow, "tail": tail, "offsets": offsets}
        self._loop = asyncio.get_running_loop()
        self._items: deque = deque()
        self._lock = threading.Lock()
        # backpressure: the reader waits while `budget` bytes of events are queued or in flight
        self._space = threading.Condition(self._lock)
        self._budget, self._buffered, self._taken = budget, 0, 0
        self._ready = asyncio.Event()
        self._signalled = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"kale_ext-logs-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop reading (called on the event loop: client gone, or server stopping).

        The thread leaves at the backend iterator's next line, or when it ends; a backend that
        waits for lines holds the thread until then, never the event loop."""
        self._stopped.set()
        self._ready.set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    async def batch(self, timeout: float | None = None) -> list:
        """Every item that is ready, waiting up to ``timeout`` s for one ([] on timeout/stop).

        The items still count against the budget until the next call, which says they were
        written and flushed (the client's socket took them): call it once they are."""
        with self._lock:  # the previous batch left the server
            self._buffered -= self._taken
            self._taken = 0
            self._space.notify_all()
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except asyncio.TimeoutError:
            return []
        with self._lock:
            self._ready.clear()
            items = list(self._items)
            self._items.clear()
            self._signalled = False
            self._taken = self._buffered
        if self.stopped:
            self._ready.set()  # stay awake: the caller checks `stopped`
        return items

    # -- the reader thread --

    def _run(self) -> None:
        lines = None
        try:
            lines = self._backend.logs(self._name, **self._args)
            for line in lines:
                data = line_event(line).encode("utf-8", "replace")  # here, not on the loop
                if not self._push(("line", data), sys.getsizeof(data) + _ITEM_COST):
                    return
            if self.stopped:
                return
            info = self._backend.get_job(self._name)
            self._push(("end", {"status": info.status.value, "status_text": info.status_text,
                                 "reason": info.reason}))  # fmt: skip
        except Exception as e:  # reported to the client as an `error` event
            if not isinstance(e, _expected()):
                log.exception("kale_ext: reading the logs of %s failed", self._name)
            self._push(("error", e))
        finally:
            close = getattr(lines, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # closing a finished or failed generator: nothing to do
                    pass

    def _push(self, item, size: int = 0) -> bool:
        with self._space:
            while self._buffered and self._buffered + size > self._budget:
                if self.stopped:
                    return False
                self._space.wait(0.25)
            if self.stopped:
                return False
            self._items.append(item)
            self._buffered += size
            wake = not self._signalled
            self._signalled = True
        if wake:
            try:
                self._loop.call_soon_threadsafe(self._ready.set)
            except RuntimeError:  # the event loop is closed: the server stopped
                self._stopped.set()
                return False
        return True


def _expected() -> tuple[type, ...]:
    from ..errors import KaleExtError

    return (KaleExtError,)
