"""kale_ext/trainer_status.py: rank 0's progress to Kubeflow Trainer's status URL, as the
Kubeflow SDK 0.5's update_trainjob_status sends it, never failing or holding the job."""

from __future__ import annotations

import datetime
import http.server
import inspect
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import pytest

from kale_ext import progress
from kale_ext.peers import _kale_ext_request
from kale_ext.trainer_status import (
    CA_CERT_ENV,
    SETTINGS,
    TOKEN_ENV,
    URL_ENV,
    _kale_ext_trainer_status,
)
from tests.harness.tls import make_certificates

PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/fit/status"
FAST = {**SETTINGS, "interval": 0.2, "timeout": 0.5, "exit_timeout": 0.5}
PROGRESS = vars(progress)
REQUEST = _kale_ext_request


@dataclass
class Seen:
    method: str
    path: str
    headers: dict
    body: bytes
    at: float


@dataclass
class Recorder:
    """An HTTPS server that records each request and answers ``code`` (or holds it)."""

    code: int = 200
    token: str = "secret-token"  # another Bearer token is a 403
    hold: bool = False  # never answer (until the test ends)
    seen: list[Seen] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    release: threading.Event = field(default_factory=threading.Event)

    def wait(self, count: int, timeout: float = 30) -> list[Seen]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.seen) >= count, timeout), self.seen
            return list(self.seen)


@pytest.fixture
def certs(tmp_path):
    return make_certificates(tmp_path / "tls", "status")


@pytest.fixture
def recorder(certs):
    """(Recorder, URL) of a running recording server, TLS with ``certs``."""
    record = Recorder()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen = Seen("POST", self.path, dict(self.headers), body, time.monotonic())
            with record.arrived:
                record.seen.append(seen)
                record.arrived.notify_all()
            if record.hold:
                record.release.wait(30)
                return
            code = record.code
            if self.headers.get("Authorization") != f"Bearer {record.token}":
                code = 403
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = certs.server_context().wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield record, f"https://127.0.0.1:{server.server_address[1]}{PATH}"
    record.release.set()
    server.shutdown()
    server.server_close()


def environ(tmp_path, url: str, certs, token: str | None = "secret-token", **more) -> dict:
    """The env the Trainer's plugin gives a pod: the URL, the CA file, the token file."""
    env = {URL_ENV: url, CA_CERT_ENV: str(certs.ca), TOKEN_ENV: str(tmp_path / "token"), **more}
    if token is not None:
        (tmp_path / "token").write_text(token + "\n")
    return env


def sent(seen: Seen) -> dict:
    return json.loads(seen.body)["trainerStatus"]


def test_no_url_or_another_rank_means_no_poster(tmp_path, certs):
    assert _kale_ext_trainer_status({}, SETTINGS, PROGRESS, REQUEST) is None
    env = environ(tmp_path, "https://127.0.0.1:1/x", certs)
    assert _kale_ext_trainer_status({**env, "RANK": "1"}, SETTINGS, PROGRESS, REQUEST) is None
    assert _kale_ext_trainer_status({**env, "RANK": "0"}, SETTINGS, PROGRESS, REQUEST) is not None


@dataclass
class BodyCase:
    name: str
    args: tuple
    expected: dict  # the trainerStatus sent, without lastUpdatedTime


BODY_CASES = [
    BodyCase("progress", (50, None, None), {"progressPercentage": 50}),
    BodyCase("percent clamped above 100", (150, None, None), {"progressPercentage": 100}),
    BodyCase("percent clamped below 0", (-10, None, None), {"progressPercentage": 0}),
    BodyCase("a fraction of a percent rounds down", (99.9, None, None), {"progressPercentage": 99}),
    BodyCase("ETA", (50, 3600, None), {"progressPercentage": 50, "estimatedRemainingSeconds": 3600}),
    BodyCase("negative ETA clamped to 0", (50, -30, None),
             {"progressPercentage": 50, "estimatedRemainingSeconds": 0}),
    BodyCase("no ETA while unknown (NaN)", (50, float("nan"), None), {"progressPercentage": 50}),
    BodyCase("metric values are strings", (None, None, {"loss": 0.234, "step": 100, "acc": "0.95"}),
             {"metrics": [{"name": "loss", "value": "0.234"}, {"name": "step", "value": "100"},
                          {"name": "acc", "value": "0.95"}]}),
    BodyCase("no metrics key for empty metrics", (75, None, {}), {"progressPercentage": 75}),
    BodyCase("at most 256 metrics", (None, None, {f"m{i}": i for i in range(300)}),
             {"metrics": [{"name": f"m{i}", "value": str(i)} for i in range(256)]}),
    BodyCase("metrics the CRD refuses are left out", (None, None, {"x" * 65: 1, "ok": 2, "e": ""}),
             {"metrics": [{"name": "ok", "value": "2"}]}),
]  # fmt: skip


@pytest.mark.parametrize("case", BODY_CASES, ids=lambda c: c.name)
def test_what_is_sent(tmp_path, certs, recorder, case: BodyCase):
    record, url = recorder
    post = _kale_ext_trainer_status(environ(tmp_path, url, certs), FAST, PROGRESS, REQUEST)
    post.status(*case.args)
    [seen] = record.wait(1)
    status = sent(seen)
    when = datetime.datetime.fromisoformat(status.pop("lastUpdatedTime"))
    assert when.utcoffset() == datetime.timedelta(0)
    assert abs(time.time() - when.timestamp()) < 60
    assert status == case.expected
    assert (seen.method, seen.path) == ("POST", PATH)
    assert seen.headers["Authorization"] == "Bearer secret-token"
    assert seen.headers["Content-Type"] == "application/json"


def test_posts_wait_their_turn_and_carry_the_latest_values_and_every_metric(
    tmp_path, certs, recorder
):
    record, url = recorder
    post = _kale_ext_trainer_status(environ(tmp_path, url, certs), FAST, PROGRESS, REQUEST)
    post({"step": 1, "rank": 0, "total": 10, "loss": 1.0})
    record.wait(1)
    post({"step": 2, "rank": 0, "accuracy": 0.5})  # while the 0.2 s since the first post run
    post({"step": 3, "rank": 0, "total": 10, "loss": 0.5})
    post({"step": 4, "rank": 0, "note": None})
    first, second = record.wait(2)
    assert second.at - first.at >= FAST["interval"]
    assert sent(first)["progressPercentage"] == 10 and "estimatedRemainingSeconds" not in sent(
        first
    )
    assert sent(second)["progressPercentage"] == 30  # the last record that set progress
    assert sent(second)["metrics"] == [{"name": "step", "value": "4"},
                                       {"name": "total", "value": "10"},
                                       {"name": "loss", "value": "0.5"},
                                       {"name": "accuracy", "value": "0.5"}]  # fmt: skip


def test_an_eta_once_the_rate_is_known_from_progress_py(tmp_path, certs, recorder):
    """progress.py's estimator, fed one reading per post: no ETA until 3 advances over 2 s."""
    record, url = recorder
    post = _kale_ext_trainer_status(environ(tmp_path, url, certs), FAST, PROGRESS, REQUEST)
    began = time.monotonic()
    for step in range(1, 1000):
        post({"step": step, "rank": 0, "total": 1000})
        seen = record.seen[-1:] if record.seen else []
        if seen and "estimatedRemainingSeconds" in sent(seen[0]):
            break
        time.sleep(0.01)
    status = sent(record.seen[-1])
    assert time.monotonic() - began >= progress.MIN_SECONDS
    assert 0 < status["estimatedRemainingSeconds"] < 3600, status


DRIVER = """
import json, os, sys, time
{source}
post = _kale_ext_trainer_status(os.environ, json.loads(sys.argv[1]), {progress!r},
                                _kale_ext_request)
worst = 0.0
for step in range(40):
    began = time.perf_counter()
    if post is not None:
        post({{"step": step, "rank": 0, "total": 40, "loss": 1 / (step + 1)}})
    worst = max(worst, time.perf_counter() - began)
    time.sleep(0.02)
print(json.dumps({{"worst": worst}}))
"""


@dataclass
class JobCase:
    name: str
    server: str  # ok, 403, 500, hang, refused, absent
    token: str | None = "secret-token"
    ca: str = "right"  # right, wrong
    said: str | None = None  # what the job says on stderr (once), None: nothing


JOB_CASES = [
    JobCase("the status server takes it", "ok"),
    JobCase("no URL: not on a cluster, or the feature gate is off", "absent"),
    JobCase("the server refuses (403)", "403", said="HTTP 403"),
    JobCase("the server fails (500)", "500", said="HTTP 500"),
    JobCase("the server never answers", "hang", said="timed out"),
    JobCase("nothing listens", "refused", said="Connection refused"),
    JobCase("a token the server does not know", "ok", token="stale-token", said="HTTP 403"),
    JobCase("no token file", "ok", token=None, said="no token at"),
    JobCase("a certificate the CA did not sign", "ok", ca="wrong", said="CERTIFICATE_VERIFY_FAILED"),
]  # fmt: skip


@pytest.mark.parametrize("case", JOB_CASES, ids=lambda c: c.name)
def test_the_poster_never_fails_or_holds_the_job(tmp_path, certs, recorder, case: JobCase):
    record, url = recorder
    record.code = {"403": 403, "500": 500}.get(case.server, 200)
    record.hold = case.server == "hang"
    if case.server == "refused":
        import socket

        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            url = f"https://127.0.0.1:{s.getsockname()[1]}{PATH}"
    env = environ(tmp_path, url, certs, token=case.token)
    if case.ca == "wrong":
        env[CA_CERT_ENV] = str(make_certificates(tmp_path / "other", "other").ca)
    if case.server == "absent":
        env = {}
    source = inspect.getsource(_kale_ext_request) + inspect.getsource(_kale_ext_trainer_status)
    driver = DRIVER.format(source=source, progress=inspect.getsource(progress))
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", driver, json.dumps(FAST)],
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    # no step waits for a post: one that did would wait as long as the post's timeout
    assert json.loads(done.stdout)["worst"] < FAST["timeout"]
    assert took < 20  # a held post does not hold the job's end (the server holds 30 s)
    said = [line for line in done.stderr.splitlines() if "progress not sent" in line]
    if case.said is None:
        assert said == [], done.stderr
    else:
        assert len(said) == 1 and case.said in said[0], done.stderr
    if case.server == "ok" and case.token == "secret-token" and case.ca == "right":
        posts = record.wait(2)
        assert all(
            b.at - a.at >= FAST["interval"] for a, b in zip(posts[:-2], posts[1:-1], strict=True)
        )
        assert sent(posts[-1])["progressPercentage"] == 97  # the last step's, sent at exit
        assert sent(posts[-1])["metrics"] == [{"name": "step", "value": "39"},
                                              {"name": "total", "value": "40"},
                                              {"name": "loss", "value": str(1 / 40)}]  # fmt: skip


def test_the_embedded_poster_needs_only_the_standard_library():
    source = inspect.getsource(_kale_ext_request) + inspect.getsource(_kale_ext_trainer_status)
    imported = {line.split()[1].split(".")[0] for line in source.splitlines()
                if line.strip().startswith("import ")}  # fmt: skip
    assert imported <= set(sys.stdlib_module_names), imported
    namespace: dict = {}
    exec(compile(source, "<compiled job>", "exec"), namespace)  # no module-level names needed
    assert namespace["_kale_ext_trainer_status"]({}, SETTINGS, None, None) is None


def _job(tmp_path, certs, url: str, settings: dict) -> tuple[subprocess.CompletedProcess, float]:
    """DRIVER's job posting to ``url``: how it ended, and how long it took (at most 60 s)."""
    source = inspect.getsource(_kale_ext_request) + inspect.getsource(_kale_ext_trainer_status)
    driver = DRIVER.format(source=source, progress=inspect.getsource(progress))
    env = {"PATH": os.environ["PATH"], **environ(tmp_path, url, certs)}
    began = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", driver, json.dumps(settings)], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the job never ended: a post held it")
    return done, time.monotonic() - began


def test_a_status_server_that_trickles_holds_no_post_and_not_the_jobs_end(tmp_path, certs):
    """One byte every 0.5 s kept a finished job Running for good: each read waited less than
    the timeout, so the post at exit never ended. Now a post ends within its timeout in all."""
    from tests.harness.peers import trickling

    settings = {**FAST, "timeout": 1.0, "exit_timeout": 1.0}  # more than each byte's wait
    with trickling(every=0.5) as url:
        done, took = _job(tmp_path, certs, url, settings)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["worst"] < settings["timeout"]  # no step waited
    assert took < 12, took  # its start, the steps (1 s), the last post (within 2 s)
    said = [line for line in done.stderr.splitlines() if "progress not sent" in line]
    assert len(said) == 1 and "timed out" in said[0], done.stderr


def test_a_redirect_is_not_followed_and_the_token_goes_nowhere_else(tmp_path, certs):
    """The poster sent its bearer token on to the host a 302 pointed at."""
    from tests.harness.peers import redirecting

    with redirecting() as (url, seen):
        done, _ = _job(tmp_path, certs, url, FAST)
    assert done.returncode == 0, done.stderr
    assert seen == []  # nothing reached the other host: no token, no request at all
    said = [line for line in done.stderr.splitlines() if "progress not sent" in line]
    assert len(said) == 1 and "HTTP 302" in said[0] and "not followed" in said[0], done.stderr


pytest_plugins = ["tests.harness.emulated"]  # the emulated_cluster fixture


@pytest.mark.parametrize("emulated_cluster", [{"trainer_status": True}], indirect=True)
def test_the_same_request_as_the_kubeflow_sdks_update_trainjob_status(
    emulated_cluster, tmp_path, monkeypatch
):
    """Both send to the emulated Trainer's status server, at one frozen moment: the requests
    are byte for byte the same (body, method, path, auth and content headers), and so is what
    the TrainJob then holds."""
    from kubeflow.trainer.backends.kubernetes import utils

    from tests.harness.emulated import TRAINJOBS, trainer_status, trainer_status_env, trainjob

    job = trainjob("fit")
    job["spec"]["suspend"] = True  # the server writes its status; no pod needed
    emulated_cluster.create(TRAINJOBS, job)
    env = trainer_status_env(emulated_cluster, "fit", tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    moment = datetime.datetime(2026, 11, 27, 12, 0, 0, 250000, tzinfo=datetime.timezone.utc)

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return moment

        @classmethod
        def fromtimestamp(cls, t, tz=None):
            return moment

    monkeypatch.setattr(utils, "datetime", Frozen)
    for name, value in (("_last_update_time", 0.0), ("_cached_token", None),
                        ("_token_read_time", 0.0), ("_http_session", None)):  # fmt: skip
        monkeypatch.setattr(utils, name, value)
    metrics = {"loss": 0.25, "step": 100, "lr": 1e-05, "note": "warm-up"}
    assert utils.update_trainjob_status(45, 120, metrics) is True
    by_sdk = trainer_status(emulated_cluster, "fit")
    monkeypatch.setattr(datetime, "datetime", Frozen)
    post = _kale_ext_trainer_status(dict(os.environ), SETTINGS, PROGRESS, REQUEST)
    post.status(45, 120, metrics)
    received = emulated_cluster.status_server.received
    emulated_cluster.wait_for(lambda: len(received) >= 2, 30, "our post")
    sdk, ours = received
    assert (ours.method, ours.path, ours.code) == (sdk.method, sdk.path, sdk.code) == (
        "POST", PATH, 200)  # fmt: skip
    assert ours.body == sdk.body
    for header in ("Authorization", "Content-Type", "Content-Length"):
        assert ours.headers[header] == sdk.headers[header], header
    assert trainer_status(emulated_cluster, "fit") == by_sdk
    assert by_sdk["progressPercentage"] == 45 and by_sdk["metrics"][3]["value"] == "warm-up"


def test_a_compiled_jobs_report_posts_without_kale_ext_in_the_image(tmp_path, certs, recorder):
    """The compiled module carries the poster and progress.py: run with no site-packages
    (``python -S``: no kale_ext, no requests), its rank 0 posts its progress and metrics."""
    from kale_ext.compile import codegen

    record, url = recorder
    body = "for step in range(1, 5):\n    report(step=step, total=4, loss=1 / step)\nprint('done')"
    source, _ = codegen.render_module(
        "train", {}, [codegen.Section(0, "training", body)], {"report"}, "train.ipynb"
    )
    (tmp_path / "train.py").write_text(source)
    env = {"PATH": os.environ["PATH"], "RANK": "0", **environ(tmp_path, url, certs)}
    done = subprocess.run([sys.executable, "-S", str(tmp_path / "train.py")], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and "done" in done.stdout, done.stderr
    assert "progress not sent" not in done.stderr
    posts = record.wait(1)  # all of them: the process waited for its last post's answer
    assert sent(posts[0])["progressPercentage"] in (25, 50, 75, 100)  # what was there at once
    assert sent(posts[-1])["progressPercentage"] == 100  # the last, at the latest as it ended
    assert {"name": "loss", "value": "0.25"} in sent(posts[-1])["metrics"]
    quiet = subprocess.run([sys.executable, "-S", str(tmp_path / "train.py")], timeout=60,
                           env={"PATH": os.environ["PATH"]}, capture_output=True, text=True)  # fmt: skip
    assert quiet.returncode == 0 and quiet.stderr == "" and len(record.seen) == len(posts)


def test_its_settings_are_the_kubeflow_sdks():
    from kubeflow.trainer.backends.kubernetes import utils

    assert (URL_ENV, CA_CERT_ENV, TOKEN_ENV) == (
        utils._ENV_SERVER_URL, utils._ENV_CA_CERT, utils._ENV_TOKEN_PATH)  # fmt: skip
    assert SETTINGS["interval"] == utils._MIN_UPDATE_INTERVAL_SECONDS
    assert SETTINGS["token_ttl"] == utils._TOKEN_CACHE_TTL_SECONDS
    assert SETTINGS["max_metrics"] == utils._MAX_METRICS_COUNT
    assert "timeout=5," in inspect.getsource(utils.update_trainjob_status)
    assert SETTINGS["timeout"] == 5
