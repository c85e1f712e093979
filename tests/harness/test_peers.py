"""The misbehaving peers (tests/harness/peers.py), one accept loop for all: a silent one holds
each connection without a byte until its block ends; a trickling one answers a byte at a time;
both let go of every connection and their port when the block ends."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from tests.harness.peers import silent, trickling


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    conn = socket.create_connection((parts.hostname, parts.port), timeout=10)
    conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    return conn


def ended(conn: socket.socket) -> bool:
    """Whether the peer closed ``conn``: an end, or a reset (it closed with our request
    unread)."""
    conn.settimeout(10)
    try:
        return conn.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_silent_peer_accepts_and_never_answers_until_its_block_ends():
    with silent() as url:
        conn = connect(url)
        conn.settimeout(0.5)
        with pytest.raises(TimeoutError):
            conn.recv(1)  # held open: no answer and no end
        second = connect(url)  # it keeps accepting
    assert ended(conn) and ended(second)  # closed when the block ended
    with pytest.raises(OSError):
        connect(url)  # and its port let go
    conn.close(), second.close()


def test_a_trickling_peer_answers_a_byte_at_a_time_and_lets_go_at_the_end():
    with trickling(every=0.01) as url:
        assert url.endswith("/status")
        conn = connect(url)
        got = b""
        while len(got) < len(b"HTTP/1.1 200"):
            got += conn.recv(1)
        assert got == b"HTTP/1.1 200"
    conn.settimeout(10)
    while chunk := conn.recv(65536):  # what was in flight, then the end
        assert b"\r\n\r\n" not in chunk  # a header that never ends
    conn.close()
