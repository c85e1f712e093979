"""Peers that misbehave, on 127.0.0.1 (kale_ext/peers.py's tests, and its callers'): one that
accepts and never answers, one that trickles its answer, and one that redirects to another (which
records who came, and with what headers)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def _accepting(serve: Callable[[socket.socket, threading.Event], None]) -> Iterator[int]:
    """The port of a listener whose accept loop hands each connection to ``serve(conn, done)``
    in a thread of its own; when the block ends ``done`` is set, and the listener and every
    connection it accepted are closed."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    accepted: list[socket.socket] = []

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            threading.Thread(target=serve, args=(conn, done), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        try:
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop
        except OSError:
            pass
        listener.close()
        for conn in accepted:
            conn.close()


@contextmanager
def silent() -> Iterator[str]:
    """The URL of a server that accepts connections and never answers (nor closes them until
    the block ends)."""
    with _accepting(lambda conn, done: None) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def trickling(every: float = 0.5) -> Iterator[str]:
    """The URL of a server that reads a request, then answers one byte every ``every`` seconds
    (a status line, then a header that never ends) until the client leaves or the block ends."""

    def serve(conn: socket.socket, done: threading.Event) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)  # the request (enough of it)
                answer = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100_000
                for byte in answer:
                    if done.wait(every):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:  # the client went away: what a bounded one does
                return

    with _accepting(serve) as port:
        yield f"http://127.0.0.1:{port}/status"


@contextmanager
def redirecting() -> Iterator[tuple[str, list[dict]]]:
    """(the URL of a server that answers every request with a 302 to another server on
    another port, the requests that other server saw: each one's headers)."""
    seen: list[dict] = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append({"method": self.command, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = do_PUT = _any  # noqa: N815

        def log_message(self, *args) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    target = f"http://127.0.0.1:{other.server_address[1]}/stolen"

    class Redirect(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = _any  # noqa: N815

        def log_message(self, *args) -> None:
            pass

    first = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    servers = (other, first)
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{first.server_address[1]}/api", seen
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
