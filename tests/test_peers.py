"""kale_ext/peers.py: one HTTP request to a peer, bounded by total time (not per read), its
answer bounded, a redirect never followed (its credentials go nowhere else)."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from kale_ext.peers import _kale_ext_request
from tests.harness.peers import redirecting, trickling


def test_a_peer_that_trickles_is_cut_at_the_deadline_not_at_each_read():
    with trickling(every=0.5) as url:
        began = time.monotonic()
        with pytest.raises(TimeoutError, match="no whole answer within 1.5 s"):
            _kale_ext_request("POST", url, b"{}", {"Authorization": "Bearer t"}, timeout=1.5)
        took = time.monotonic() - began
    assert 1.4 < took < 4, took  # urlopen(timeout=1.5) waited as long as the peer trickled


def test_a_redirect_comes_back_as_it_is_and_its_target_sees_nothing():
    with redirecting() as (url, seen):
        code, headers, _ = _kale_ext_request(
            "POST", url, b"{}", {"Authorization": "Bearer secret"}, timeout=5
        )
    assert code == 302 and headers["location"].endswith("/stolen")
    assert seen == []  # urllib followed it, the token with it


@pytest.fixture
def answering():
    """A server that answers ``body`` (set by the test) to any GET."""
    state = {"body": b"{}"}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            self.wfile.write(state["body"])

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/x?a=1"
    server.shutdown()
    server.server_close()


def test_an_answer_is_read_up_to_its_bound(answering):
    state, url = answering
    assert _kale_ext_request("GET", url, timeout=5)[::2] == (200, b"{}")
    state["body"] = b"x" * 2000
    with pytest.raises(OSError, match="longer than 1000 bytes"):
        _kale_ext_request("GET", url, timeout=5, limit=1000)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://host/x", "http://"])
def test_only_http_urls(url):
    with pytest.raises(OSError, match="not an http"):
        _kale_ext_request("GET", url)
