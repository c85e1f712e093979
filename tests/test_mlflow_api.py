"""kale_ext/mlflow_api.py against peers that misbehave: each call ends within its timeout in all
(not per read), and a redirect is not followed (the tracking credentials go nowhere else)."""

from __future__ import annotations

import threading
import time

import pytest

from kale_ext.mlflow_api import Tracking, TrackingError
from tests.harness.peers import redirecting, trickling


def bounded(call, limit: float):
    """What ``call()`` raised, waiting at most ``limit`` s for it (a call still running then
    fails the test, which does not wait for it)."""
    raised: list[BaseException | None] = []

    def run():
        try:
            call()
            raised.append(None)
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    if not raised:
        pytest.fail(f"the call still waited after {limit} s")
    return raised[0]


def test_a_server_that_trickles_is_cut_within_the_calls_timeout(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "secret")
    with trickling(every=0.5) as url:
        tracking = Tracking(url.removesuffix("/status"), timeout=1.5)
        began = time.monotonic()
        error = bounded(lambda: tracking.end_run("r1", "FINISHED"), 15)
        took = time.monotonic() - began
    assert isinstance(error, TrackingError) and "timed out" in str(error), error
    assert took < 5, took


def test_a_redirect_is_refused_and_the_credentials_go_nowhere_else(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "secret")
    with redirecting() as (url, seen):
        error = bounded(lambda: Tracking(url).end_run("r1", "FINISHED"), 15)
    assert seen == [], seen  # urllib followed the 302 with `Authorization: Bearer secret`
    assert isinstance(error, TrackingError), error
    assert "answered 302" in str(error) and "not followed" in str(error)
