"""Peers that misbehave, on 127.0.0.1 (kale_ext/peers.py's tests, and its callers'): one that
trickles its answer, and one that redirects to another (which records who came, and with what
headers)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def trickling(every: float = 0.5) -> Iterator[str]:
    """The URL of a server that reads a request, then answers one byte every ``every`` seconds
    (a status line, then a header that never ends) until the client leaves or the block ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve(conn: socket.socket) -> None:
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

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/status"
    finally:
        done.set()
        listener.close()


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
