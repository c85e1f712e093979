"""What the kubernetes client sees of the fake API server: a kubeconfig pointing at it, failure
answers (``ApiException`` with a real-looking ``Status`` body), container logs read as streams."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from http import HTTPStatus

import urllib3
from kubernetes.client.exceptions import ApiException


class _Answer:
    """What urllib3 hands to ApiException(http_resp=...)."""

    def __init__(self, status: int, data: bytes, content_type: str = "application/json"):
        self.status, self.reason, self.data = status, HTTPStatus(status).phrase, data
        self.content_type = content_type

    def getheaders(self) -> dict:
        return {"Content-Type": self.content_type}


def status_error(code: int, reason: str, message: str, causes: list | None = None) -> ApiException:
    """An ApiException as the client raises it for a `Status` failure answer."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if causes:
        body["details"] = {"causes": causes}
    return ApiException(http_resp=_Answer(code, json.dumps(body).encode()))


def plain_error(code: int, text: str) -> ApiException:
    """A failure answered in plain text, e.g. a 404 for an API group the server does not serve."""
    return ApiException(http_resp=_Answer(code, text.encode(), "text/plain; charset=utf-8"))


def not_found(kind: str, name: str) -> ApiException:
    return status_error(404, "NotFound", f'{kind} "{name}" not found')


class ContainerLog:
    """One container's log. Followed streams wait for new lines until it ends."""

    def __init__(self):
        self.data = b""
        self.previous: bytes | None = None
        self.started = False
        self.ended = False
        self.changed = threading.Condition()
        self.stamps: list[str] = []  # when each line was written, as the kubelet stamps it

    def write(self, *lines: str, newline: bool = True, at: str | None = None) -> None:
        """Append ``lines``, written ``at`` (RFC 3339; default: now)."""
        stamp = at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with self.changed:
            self.started = True
            self.data += "\n".join(lines).encode() + (b"\n" if newline else b"")
            self.stamps += [stamp] * len(lines)
            self.changed.notify_all()

    def lines(self, data: bytes | None, tail: int | None, timestamps: bool) -> bytes:
        """The log (or ``data``, the previous one) as `tailLines` and `timestamps` give it."""
        lines = (self.data if data is None else data).decode().splitlines()
        stamps = (self.stamps if data is None else [])[: len(lines)]
        stamps += ["2026-01-01T00:00:00.000000Z"] * (len(lines) - len(stamps))
        pairs = (
            list(zip(stamps, lines, strict=True))[-tail:]
            if tail
            else list(zip(stamps, lines, strict=True))
        )
        return "".join(f"{s} {t}\n" if timestamps else f"{t}\n" for s, t in pairs).encode()

    def end(self) -> None:
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def restart(self) -> None:
        """The container died and waits to restart: its log becomes the previous one."""
        with self.changed:
            self.previous, self.data, self.started, self.ended = self.data, b"", False, False
            self.stamps = []
            self.changed.notify_all()


class LogStream:
    """A log answer read with _preload_content=False (the part of urllib3's answer we use)."""

    CHUNK = 7  # small odd chunks: lines arrive split, as they do over HTTP

    def __init__(self, log: ContainerLog, data: bytes | None, follow: bool):
        self.log, self.fixed, self.follow = log, data, follow
        self.closed = False
        self.sent = 0  # bytes handed to the reader so far

    def delivered(self, log: ContainerLog) -> bool:
        """Whether this stream has handed the reader all of ``log`` as it is now."""
        return self.log is log and self.fixed is None and self.sent >= len(log.data)

    def stream(self, amt=None, decode_content=None):
        sent = 0
        while True:
            with self.log.changed:
                data = self.fixed if self.fixed is not None else self.log.data
                while self.follow and sent == len(data) and not (self.log.ended or self.closed):
                    self.log.changed.wait()
                    data = self.log.data
                if self.closed:
                    raise urllib3.exceptions.ProtocolError("connection closed")
                chunk = data[sent : sent + self.CHUNK]
            if not chunk:
                return
            sent += len(chunk)
            self.sent = sent
            yield chunk

    def close(self) -> None:
        with self.log.changed:
            self.closed = True
            self.log.changed.notify_all()

    def release_conn(self) -> None:
        pass


#: A kubeconfig for the fake cluster (two contexts: with and without a namespace).
KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: main
contexts:
- name: main
  context: {cluster: c, user: u, namespace: team}
- name: bare
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://cluster.invalid:6443"}
users:
- name: u
  user: {token: not-a-real-token}
"""
