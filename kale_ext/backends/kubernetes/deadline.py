"""Every call to the Kubernetes API ends within a total time (config.CALL_SECONDS): connecting,
sending and every byte of the answer. The client's own timeouts bound each read alone, so an API
server that trickles (a byte now and then) or a proxy that holds the answer kept a call, and the
thread making it, for good.

The client's connections tell the call under way in their thread which socket they use
(``install``); when the call's time is up a timer shuts those sockets, and the call fails at
once (``within`` says whether its time ran out). A followed log, which may stay quiet for hours,
is the one call given no total time.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

_current = threading.local()


class Call:
    """One call's connections and whether its time ran out."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conns: list = []
        self.expired = self.done = False

    def using(self, conn) -> None:
        with self.lock:
            if self.expired:  # a retry after the time ran out: not sent
                raise TimeoutError("the call's time ran out")
            self.conns.append(conn)

    def expire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.expired = True
            for conn in self.conns:
                sock = getattr(conn, "sock", None)
                if sock is not None:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)  # its read returns at once
                    except OSError:
                        pass


@contextmanager
def within(seconds: float | None) -> Iterator[Call | None]:
    """The calls this thread makes in the block end within ``seconds`` in all (None: no
    bound); the Call tells whether its time ran out."""
    if seconds is None:
        yield None
        return
    call, before = Call(), getattr(_current, "call", None)
    _current.call = call
    timer = threading.Timer(seconds, call.expire)
    timer.daemon = True
    timer.start()
    try:
        yield call
    finally:
        with call.lock:
            call.done = True
        timer.cancel()
        _current.call = before


def _tracked(base: type) -> type:
    class Tracked(base):  # type: ignore[misc,valid-type]
        def request(self, *args, **kwargs):
            call = getattr(_current, "call", None)
            if call is not None:
                call.using(self)
            return super().request(*args, **kwargs)

    Tracked.__name__ = f"Deadline{base.__name__}"
    return Tracked


@cache
def pool_classes() -> dict[str, type]:
    """urllib3's connection pools, by scheme, whose connections heed ``within`` (made once a
    process, for every client)."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Pool(HTTPConnectionPool):
        ConnectionCls = _tracked(HTTPConnection)

    class TlsPool(HTTPSConnectionPool):
        ConnectionCls = _tracked(HTTPSConnection)

    return {"http": Pool, "https": TlsPool}


def install(api_client) -> None:
    """Make ``api_client``'s connections (kubernetes.client.ApiClient) heed ``within``."""
    api_client.rest_client.pool_manager.pool_classes_by_scheme = dict(pool_classes())
