"""Every Kubernetes API call within a total time (backends/kubernetes/deadline.py): an API
server that accepts and never answers, or trickles its answer a byte at a time, is an error
naming the server once config.CALL_SECONDS pass, not a hang; a call that answers in time is
untouched, and the client's connections serve the next call."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kale_ext.backends.base import BackendError
from kale_ext.backends.kubernetes import config
from kale_ext.backends.kubernetes.config import Cluster
from tests.harness.peers import silent, trickling

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "%s"}}]
users: [{name: u, user: {token: a-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team}}]
current-context: x
"""


@contextmanager
def answering() -> Iterator[str]:
    """The URL of a server that answers every GET with an empty pod list."""

    class Pods(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pods)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def cluster_at(tmp_path, url: str) -> Cluster:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG % url)
    return Cluster(config_file=str(path))


def in_a_thread(call, limit: float = 30):
    """``call()``'s result or exception; fails when it has not returned within ``limit`` s."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = call()
        except Exception as e:  # noqa: BLE001 (the test looks at it)
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"the call did not return in {limit} s: it hangs"
    return out


@pytest.mark.parametrize("peer", [silent, lambda: trickling(every=0.5)], ids=["silent", "trickles"])
def test_a_hung_api_server_is_an_error_naming_it_not_a_hang(tmp_path, monkeypatch, peer):
    """Issue 42: the Kubernetes client bounded each read alone (60 s): a server that never
    answered held a call 60 s a try, and one that trickles held it for good."""
    monkeypatch.setattr(config, "CALL_SECONDS", 1.0)
    with peer() as url:
        cluster = cluster_at(tmp_path, url.removesuffix("/status"))
        out = in_a_thread(lambda: cluster.pods("app=x"))
    error = out.get("error")
    assert isinstance(error, BackendError), out
    assert (error.status, error.reason) == (504, "Timeout")
    assert str(error) == (
        f"cannot list the pods in team (app=x): the Kubernetes API server at {cluster.host} did "
        "not answer within 1 s (kubernetes.config.CALL_SECONDS)"
    )


def test_a_call_that_answers_in_time_is_untouched_and_the_connection_serves_the_next(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(config, "CALL_SECONDS", 0.5)
    with answering() as url:
        cluster = cluster_at(tmp_path, url)
        for _ in range(3):  # past the first call's time: its timer was cancelled, not fired
            assert in_a_thread(lambda: cluster.pods("app=x")).get("value") == []
            threading.Event().wait(0.3)


def test_the_call_time_is_data_beside_the_client_timeouts():
    assert config.CALL_SECONDS >= config.REQUEST_TIMEOUT[0]
    assert isinstance(config.CALL_SECONDS, float)
