"""Progress to Kubeflow Trainer: rank 0 of a job on a cluster posts its progress, ETA and latest
metrics to the status URL the Trainer injects (feature gate ``TrainJobStatus``), which writes
them to the TrainJob's ``status.trainerStatus``, where ``kubectl``, the Kubeflow SDK and
kale_ext read them. They come from its ``report()`` records: progress from ``step``/``total``
or ``epoch``/``epochs`` and the ETA from the estimator of ``kale_ext/progress.py``, fed the
reading of each post; the metrics are the latest value of each name reported (``rank`` aside).

It sends what the Kubeflow SDK 0.5's ``update_trainjob_status`` sends, the same way: a POST of
``{"trainerStatus": {lastUpdatedTime, progressPercentage, estimatedRemainingSeconds,
metrics: [{name, value as a string}] (at most 256)}}`` as the SDK's JSON, with ``Authorization:
Bearer <the projected token>`` (read from ``KUBEFLOW_TRAINER_SERVER_TOKEN``, cached 5 min) and
``Content-Type: application/json``, TLS verified with ``KUBEFLOW_TRAINER_SERVER_CA_CERT``, at
most one post every 5 s. Unlike the SDK it never holds a training step: the post goes from a
background thread, which sends the latest values once the 5 s have passed (the SDK drops what
comes in between; a post that failed also waits 5 s here, where the SDK tries again at the next
call). When the process ends, a post under way may finish and values not yet sent go, within
1 s each. Metrics the TrainJob's CRD would refuse (a name or value of more than 64 characters,
or empty) are left out, so the others still arrive (the SDK sends them and the whole post is
refused, 422).

Each post is one request of ``kale_ext/peers.py``: within ``timeout`` in all (a server that
trickles its answer is cut there, not at each read), and a redirect is not followed, so the
token goes to the status URL only.

Nothing here can fail or slow a job: no URL (not on a cluster, or the gate is off), no token,
a refusal, a timeout or a bad certificate each mean progress is not shown there; a job says so
once on stderr. The poster is :func:`_kale_ext_trainer_status`, standard library only; compiled
jobs carry its source and progress.py's (``compile/codegen.py``) with :data:`SETTINGS`, so the
training image needs no kale_ext; :func:`post` is the same poster for code that imports
kale_ext (``kale_ext.report``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

URL_ENV = "KUBEFLOW_TRAINER_SERVER_URL"
CA_CERT_ENV = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
TOKEN_ENV = "KUBEFLOW_TRAINER_SERVER_TOKEN"

#: How the poster behaves, as the SDK 0.5 does (interval, token cache, metrics, timeout), plus
#: the CRD's bound on a metric's name and value, and how long the last post may take at exit.
SETTINGS = {
    "url_env": URL_ENV,
    "ca_env": CA_CERT_ENV,
    "token_env": TOKEN_ENV,
    "interval": 5.0,  # seconds between two posts (the SDK's _MIN_UPDATE_INTERVAL_SECONDS)
    "token_ttl": 300.0,  # seconds a token read is kept (_TOKEN_CACHE_TTL_SECONDS)
    "max_metrics": 256,  # (_MAX_METRICS_COUNT; the CRD's maxItems)
    "timeout": 5.0,  # seconds a post may take in all (the SDK's timeout=5 bounds each read)
    "exit_timeout": 1.0,  # seconds the last post may take in all when the process ends
    "metric_text_max": 64,  # the CRD's maxLength of a metric's name and value
}


def _kale_ext_trainer_status(
    environ, settings, progress, request, started=None
):  # kale_ext: progress
    """``post(record)`` for rank 0 when the Trainer's status URL is set, else None: ``record``
    is report()'s; its progress (kale_ext/progress.py: ``progress`` is that module's namespace,
    or its source) and its metrics go to the Trainer from a background thread, each post by
    ``request`` (kale_ext/peers.py: bounded by total time, redirects not followed). ``post.status
    (percent, eta, metrics)`` posts given values, as the SDK's ``update_trainjob_status``.
    ``started``: when the job's process started (monotonic), from which its ETA times the first
    advance."""
    import atexit
    import datetime
    import http.client
    import json
    import math
    import os
    import ssl
    import sys
    import threading
    import time
    import types

    url = environ.get(settings["url_env"])
    try:
        rank = int(environ.get("RANK") or 0)
    except ValueError:
        rank = 0
    if not url or rank != 0:
        return None
    ca_file, token_path = environ.get(settings["ca_env"]), environ.get(settings["token_env"])
    if isinstance(progress, str):  # a compiled job carries kale_ext/progress.py's source
        try:
            module = types.ModuleType("_kale_ext_progress")
            sys.modules[module.__name__] = module  # for its dataclasses
            exec(compile(progress, "kale_ext/progress.py", "exec"), module.__dict__)
            progress = vars(module)
        except Exception as e:  # the job goes on: its metrics still go, without progress
            print(f"kale_ext: no progress for Kubeflow Trainer: {e!r}", file=sys.stderr)
            progress = None
    wake, idle = threading.Event(), threading.Event()
    idle.set()
    state = {"next": None, "metrics": {}, "reading": None, "given": None, "estimator": None,
             "last": None, "thread": None, "token": None, "read": 0.0, "context": None,
             "said": set()}  # fmt: skip

    def say(what):
        if what not in state["said"]:
            state["said"].add(what)
            print(f"kale_ext: progress not sent to Kubeflow Trainer: {what}", file=sys.stderr)

    def token():
        now = time.monotonic()
        if state["token"] and now - state["read"] < settings["token_ttl"]:
            return state["token"]
        if not token_path or not os.path.exists(token_path):
            return None
        try:
            with open(token_path) as f:
                state["token"], state["read"] = f.read().strip(), now
        except OSError as e:
            say(f"its token cannot be read ({e})")
            return None
        return state["token"]

    def context():
        if state["context"] is None:
            if ca_file and os.path.exists(ca_file):
                with open(ca_file) as f:  # not cafile=: a path the C library opens itself
                    state["context"] = ssl.create_default_context(cadata=f.read())
            else:
                state["context"] = ssl.create_default_context()
        return state["context"]

    def whole(value, top=None):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value):
            return None
        value = max(0, int(value))
        return value if top is None else min(top, value)

    def measured():  # (percent, ETA) of the last record that set progress, by progress.py
        if state["given"] is not None:
            return state["given"]
        if state["reading"] is None or progress is None:
            return None, None
        record, at = state["reading"]
        reading = progress["of_record"](record)
        if reading is None:
            return None, None
        done, total, unit = reading
        if state["estimator"] is None:
            state["estimator"] = progress["EtaEstimator"](started)
        state["estimator"].observe(done, total, at)
        percent = progress["Progress"].of(done, total, unit, "report").percent
        return percent, state["estimator"].eta()

    def body(when):
        metrics = {k: v for k, v in dict(state["metrics"]).items() if k != "rank" and v is not None}
        percent, eta = measured()
        moment = datetime.datetime.fromtimestamp(when, datetime.timezone.utc)
        status = {"lastUpdatedTime": moment.isoformat()}
        percent, eta = whole(percent, 100), whole(eta)
        if percent is not None:
            status["progressPercentage"] = percent
        if eta is not None:
            status["estimatedRemainingSeconds"] = eta
        if metrics:
            top = settings["metric_text_max"]
            pairs = [(str(k), str(v)) for k, v in metrics.items()]
            pairs = [(k, v) for k, v in pairs if 0 < len(k) <= top and 0 < len(v) <= top]
            if pairs:
                status["metrics"] = [{"name": k, "value": v} for k, v in
                                     pairs[: settings["max_metrics"]]]  # fmt: skip
        return json.dumps({"trainerStatus": status}, allow_nan=False).encode("utf-8")

    def send(data, timeout):  # within ``timeout`` in all; a redirect is not followed
        bearer = token()
        if not bearer:
            say(f"no token at {token_path!r}")
            return False
        headers = {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"}
        try:
            code, answer, _ = request("POST", url, data, headers, timeout, context(), 1 << 16)
            if code == 200:
                return True
            moved = (
                f" (a redirect to {answer['location']!r}: not followed, the token goes to "
                "the status URL only)"
                if 300 <= code < 400 and "location" in answer
                else ""
            )
            say(f"HTTP {code} {http.client.responses.get(code, '')}".rstrip() + moved)
        except Exception as e:  # refused, timed out, TLS, anything: the job goes on
            say(f"{type(e).__name__}: {getattr(e, 'reason', None) or e}")
        return False

    def work():  # the latest values, once 5 s have passed since the last post ended
        while True:
            wake.wait()
            if state["last"] is not None:
                left = state["last"] + settings["interval"] - time.monotonic()
                if left > 0:
                    time.sleep(left)
            wake.clear()
            idle.clear()
            taken, state["next"] = state["next"], None
            if taken is not None:
                flush(taken, settings["timeout"])
                state["last"] = time.monotonic()
            idle.set()

    def flush(taken, timeout):
        try:
            send(body(taken), timeout)
        except Exception as e:  # a metric whose str() fails, ...: the job goes on
            say(f"{type(e).__name__}: {e}")

    def at_exit():  # a post under way may end; then what came after it goes
        idle.wait(settings["exit_timeout"])
        taken, state["next"] = state["next"], None
        if taken is not None:
            flush(taken, settings["exit_timeout"])

    def wake_up():
        if not wake.is_set():
            wake.set()
        if state["thread"] is None:
            state["thread"] = threading.Thread(target=work, name="kale-ext-trainer-status",
                                               daemon=True)  # fmt: skip
            state["thread"].start()
            atexit.register(at_exit)

    def post(record):  # a step pays for a dict update and an event check
        state["metrics"].update(record)
        if "total" in record or "epochs" in record:
            state["reading"] = (record, time.monotonic())
        state["next"] = time.time()
        wake_up()

    def status(percent=None, eta=None, metrics=None):
        if metrics:
            state["metrics"].update(metrics)
        state["given"], state["next"] = (percent, eta), time.time()
        wake_up()

    post.status = status
    return post


def embedded(name: str = "_kale_ext_status") -> str:
    """The module-level lines a compiled job carries (compile/codegen.py puts them after the
    function, beside its error hook): the poster's source and ``name = poster(os.environ,
    SETTINGS, progress.py's source)``, that source zlib-compressed into one base64 line (the
    job needs it for the ETA, a reader of the module does not)."""
    import base64
    import inspect
    import zlib

    from . import peers, progress

    packed = base64.b64encode(zlib.compress(inspect.getsource(progress).encode(), 9)).decode()
    return (
        inspect.getsource(peers._kale_ext_request)
        + "\n\n"
        + inspect.getsource(_kale_ext_trainer_status)
        + "\n\n# kale_ext/progress.py (stdlib only), for the ETA posted to Kubeflow Trainer\n"
        + f"{name} = _kale_ext_trainer_status(__import__('os').environ, {SETTINGS!r}, "
        + f"__import__('zlib').decompress(__import__('base64').b64decode({packed!r})).decode(), "
        + "_kale_ext_request, __import__('time').monotonic())\n"
    )


_poster: list = []  # [post or None], made on first use


def post(record: Mapping[str, object]) -> None:
    """Hand a report() record (rank 0's progress and metrics) to the Trainer's status URL;
    nothing when there is none (not on a cluster, not rank 0)."""
    if not _poster:
        from . import progress
        from .peers import _kale_ext_request

        poster = _kale_ext_trainer_status(os.environ, SETTINGS, vars(progress), _kale_ext_request)
        _poster.append(poster)
    if _poster[0] is not None:
        _poster[0](record)
