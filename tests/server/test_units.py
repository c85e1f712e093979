"""Units of the server extension without a server: event ids and offsets, SSE framing, the
thread-to-event-loop log stream, the tag list and how the app picks its backend."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass

import pytest

from kale_ext.backends.base import Backend, BackendError, JobInfo, LogLine, NotFound, Status
from kale_ext.server import service
from kale_ext.server.app import KaleExtApp
from kale_ext.server.logstream import (
    LogStream,
    error_data,
    event,
    line_event,
    parse_event_id,
    parse_offsets,
)


@dataclass
class OffsetCase:
    text: str
    expected: dict | None  # None: a ValueError
    says: str = ""


OFFSET_CASES = [
    OffsetCase("", {}),
    OffsetCase("0:123", {0: 123}),
    OffsetCase("0:123,1:456", {0: 123, 1: 456}),
    OffsetCase(" 0 : 1 , 1:2 ,", {0: 1, 1: 2}),
    OffsetCase("0:1,0:2", None, "node 0 is given twice"),
    OffsetCase("0=1", None, "'0=1' is not <node>:<offset>"),
    OffsetCase("-1:5", None, "is not <node>:<offset>"),
    OffsetCase("a:b", None, "is not <node>:<offset>"),
    OffsetCase("0:1:2", None, "is not <node>:<offset>"),
]


@pytest.mark.parametrize("case", OFFSET_CASES, ids=lambda c: c.text or "empty")
def test_parse_offsets(case):
    if case.expected is None:
        with pytest.raises(ValueError, match=case.says):
            parse_offsets(case.text)
    else:
        assert parse_offsets(case.text) == case.expected


def test_event_id_round_trips():
    line = LogLine(node=1, text="loss 0.5", rank=3, offset=4096)
    text = line_event(line)
    assert text == (
        'id: 1:4096\ndata: {"node": 1, "rank": 3, "text": "loss 0.5", "offset": 4096}\n\n'
    )
    assert parse_event_id("1:4096") == (1, 4096)


LINE_TEXTS = [
    "",
    "plain",
    'quote " and \\ backslash',
    "tab\tand\x00nul\x1f",
    "é ü 日本 🚀",
    "\u2028\u2029",
    "\ud800 lone",
    "x" * 5000,
]


@pytest.mark.parametrize("text", LINE_TEXTS, ids=range(len(LINE_TEXTS)))
@pytest.mark.parametrize("rank", [None, 0, 7])
@pytest.mark.parametrize("partial", [False, True])
def test_a_line_event_is_the_event_of_its_fields(text, rank, partial):
    """line_event writes the event directly: the same text `event` gives for its fields."""
    line = LogLine(node=2, text=text, rank=rank, offset=123456789, partial=partial)
    data = {"node": 2, "rank": rank, "text": text, "offset": 123456789}
    if partial:
        data["partial"] = True
    assert line_event(line) == event(data, id="2:123456789")
    assert json.loads(line_event(line).split("data: ", 1)[1]) == data


def test_an_event_stays_one_data_line_whatever_the_text():
    text = event({"text": "a\nb\r\nc\u2028d"}, "end")
    assert text.count("\n") == 3 and text.startswith("event: end\ndata: ")


def test_error_data_never_carries_a_traceback():
    assert error_data(NotFound("no job x")) == {
        "message": "no job x",
        "status": 404,
        "reason": "NotFound",
    }
    assert error_data(ValueError("boom")) == {
        "message": "internal error in kale_ext: ValueError: boom",
        "status": 500,
    }


# -- LogStream: a blocking iterator in a thread, drained by the event loop --


class ScriptedBackend(Backend):
    """Logs from a list; `follow` waits on `more` until `done`; records when it is closed."""

    name = "scripted"

    def __init__(self, count: int = 5, follow_forever: bool = False):
        self.count = count
        self.follow_forever = follow_forever
        self.more = threading.Event()
        self.closed = threading.Event()
        self.status = Status.COMPLETE

    def logs(self, name, node=None, follow=False, tail=None, offsets=None):
        if name == "missing":
            raise NotFound("no job missing")
        try:
            start = (offsets or {}).get(0, 0)
            for i in range(start + 1, self.count + 1):
                yield LogLine(0, f"line {i}", 0, i)
            while follow and self.follow_forever:
                self.more.wait(5)
                self.more.clear()
                yield LogLine(0, "more", 0, 0)
        finally:
            self.closed.set()

    def get_job(self, name):
        return JobInfo(name, self.status, self.name, reason="done")

    def list_runtimes(self):
        return []

    def submit(self, spec, notebook_path=None):
        raise NotImplementedError

    def list_jobs(self):
        return []

    def events(self, name):
        return []

    def delete(self, name):
        pass


async def drain(stream: LogStream) -> list:
    items = []
    while not items or items[-1][0] == "line":
        items += await asyncio.wait_for(stream.batch(), 10)
    return items


def text_of(item) -> str:
    """The line a ("line", event) item carries."""
    kind, event = item
    assert kind == "line"
    return json.loads(event.decode().split("data: ", 1)[1])["text"]


async def test_every_line_then_end():
    backend = ScriptedBackend(count=50)
    stream = LogStream(backend, "job", offsets={0: 10}, budget=300)  # ~3 events: backpressure
    stream.start()
    items = await drain(stream)
    assert [text_of(i) for i in items[:-1]] == [f"line {n}" for n in range(11, 51)]
    assert items[-1] == ("end", {"status": "Complete", "status_text": "Complete", "reason": "done"})
    assert backend.closed.wait(5)


async def test_an_error_is_the_last_item():
    stream = LogStream(ScriptedBackend(), "missing")
    stream.start()
    items = await drain(stream)
    assert items[0][0] == "error" and isinstance(items[0][1], NotFound)


async def test_stop_releases_the_reader_at_its_next_line():
    backend = ScriptedBackend(count=1, follow_forever=True)
    stream = LogStream(backend, "job", follow=True)
    stream.start()
    first = await asyncio.wait_for(stream.batch(), 10)
    assert text_of(first[0]) == "line 1"
    stream.stop()
    assert await stream.batch(1) == []  # stopped: returns at once
    assert not backend.closed.is_set()  # the reader still waits inside the backend
    backend.more.set()  # its next line: it sees the stop, closes the iterator, leaves
    assert await asyncio.get_running_loop().run_in_executor(None, backend.closed.wait, 5)


async def test_a_full_buffer_does_not_hold_a_stopped_reader():
    backend = ScriptedBackend(count=100)
    stream = LogStream(backend, "job", budget=100)
    stream.start()
    await asyncio.sleep(0)  # nobody drains: the reader blocks on the full buffer
    stream.stop()
    assert await asyncio.get_running_loop().run_in_executor(None, backend.closed.wait, 5)


# -- the tag list and the backend choice --


def test_tags_show_how_to_write_each_tag():
    tags = {t["tag"]: t for t in service.tags()}
    assert {"imports", "step:<name>", "limit:<key>:<value>", "image:<value>"} <= set(tags)
    assert tags["cache:<enabled|disabled>"]["effect"] == "ignored"
    assert tags["label:<key>:<value>"]["help"].startswith("a label")
    assert all(t["help"] for t in tags.values())


def app_of(**config) -> KaleExtApp:
    app = KaleExtApp(**config)
    app.initialize_settings()  # what the server does when it loads the extension
    return app


def test_the_app_passes_each_backend_the_settings_it_takes(tmp_path, monkeypatch):
    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    app = app_of(backend="local", jobs_dir=str(tmp_path), namespace="ns")
    backend, reason = app.get_backend()
    assert backend.name == "local" and backend.jobs_dir == tmp_path
    assert reason == "set in the server configuration"

    monkeypatch.setenv("HOME", str(tmp_path))  # no kubeconfig: auto runs here
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    backend, reason = app_of(jobs_dir=str(tmp_path)).get_backend()
    assert backend.name == "local" and reason == "no kubeconfig found: runs here"

    class Strict(ScriptedBackend):
        def __init__(self, poll_interval):  # takes one setting only
            super().__init__()
            self.poll_interval = poll_interval

    app = app_of(backend_class=Strict, poll_interval=0.5, namespace="ns")
    backend, reason = app.get_backend()
    assert backend.poll_interval == 0.5 and reason == "configured: Strict"


def test_the_backend_follows_the_users_jupyterlab_settings(tmp_path, monkeypatch):
    from kale_ext.job.defaults import lab_settings_file

    monkeypatch.delenv("KALE_EXT_BACKEND", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no kubeconfig
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    app = app_of(jobs_dir=str(tmp_path / "jobs"))
    first, reason = app.get_backend()
    assert reason == "no kubeconfig found: runs here"
    assert app.get_backend()[0] is first  # made once
    settings = lab_settings_file()
    settings.parent.mkdir(parents=True)
    settings.write_text('{"backend": "local"}')
    backend, reason = app.get_backend()
    assert backend is not first and reason == "set in the JupyterLab settings"
    assert backend.nice == 10  # local jobs below the server, unless set
    settings.write_text('{"backend": "local", "local_nice": 3}')
    os.utime(settings, ns=(1, 10**18))  # a different mtime even on a coarse clock
    assert app.get_backend()[0] is backend and backend.nice == 3  # the next job's priority


def test_backend_errors_keep_their_status():
    e = BackendError("quota exceeded", 403, "Forbidden")
    from kale_ext.server.base import to_api_error

    api = to_api_error(e)
    assert (api.status_code, api.message, api.json_reason) == (403, "quota exceeded", "Forbidden")
    odd = to_api_error(BackendError("connection refused", 0))
    assert odd.status_code == 500


def test_loop_lag_figures():
    from kale_ext.server.debug import LoopLag

    lag = LoopLag()
    assert lag.stats() == {"interval_ms": 10.0, "count": 0}
    lag.samples.extend([0.001, 0.002, 0.030])
    lag.busy.extend([0.0, 0.001, 0.004])
    stats = lag.stats()
    assert (stats["count"], stats["max_ms"], stats["busy_max_ms"]) == (3, 30.0, 4.0)
    lag.own.extend([0.001, 0.002, 0.006])  # the process's CPU time in each period
    assert (lag.stats()["own_max_ms"], lag.stats()["own_p99_ms"]) == (6.0, 6.0)
    lag.reset()
    assert lag.stats()["count"] == 0


# -- reusing compile results --


def test_a_compile_result_is_reused_for_the_same_content(monkeypatch):
    from tests.conftest import notebook

    nb = notebook(("x = 1", ["parameters"]), "print(x)")
    first = service.compile_cached(nb, "a.ipynb")
    assert service.compile_cached(json_copy(nb), "a.ipynb") is first  # same content
    assert service.compile_cached(nb, "b.ipynb") is not first  # another name: another function
    changed = notebook(("x = 2", ["parameters"]), "print(x)")
    assert service.compile_cached(changed, "a.ipynb").parameters == {"x": 2}
    monkeypatch.setattr(service, "_environment_stamp", lambda: ("packages changed",))
    assert service.compile_cached(nb, "a.ipynb") is not first  # pins may differ now


def json_copy(value):
    import json

    return json.loads(json.dumps(value))


@pytest.mark.parametrize(
    ("options", "metadata", "expected"),
    [
        (None, {}, "torch-distributed"),
        ({"runtime": "a"}, {"kale_ext": {"options": {"runtime": "b"}}}, "a"),
        ({}, {"kale_ext": {"options": {"runtime": "b"}}}, "b"),
        ({"runtime": None}, {"kale_ext": {"options": "not a dict"}}, "torch-distributed"),
        ({"runtime": 3}, {}, 3),  # not a name: runtime_for says so
    ],
)
def test_runtime_name_precedence(options, metadata, expected):
    from kale_ext.job.defaults import Defaults
    from kale_ext.job.spec import runtime_name

    assert runtime_name(options, metadata.get("kale_ext")) == expected
    site = Defaults(runtime="site")
    assert runtime_name(options, metadata.get("kale_ext"), site) == (
        "site" if expected == "torch-distributed" else expected
    )


def test_runtime_for_reports_a_missing_runtime_as_a_config_error():
    from kale_ext.backends.local.backend import LocalBackend
    from kale_ext.errors import ConfigError

    backend = LocalBackend()
    assert service.runtime_for(backend, b"{}", None)[0].name == "torch-distributed"
    missing, installed = service.runtime_for(backend, {"metadata": {}}, {"runtime": "nope"})
    assert isinstance(missing, ConfigError) and missing.field == "runtime" and installed is None
    assert isinstance(service.runtime_for(backend, b"not json", {"runtime": 3})[0], ConfigError)


def test_the_warm_up_starts_once_on_the_first_request(monkeypatch):
    import sys

    from kale_ext.server import warmup

    app = KaleExtApp(warm_up=True, compile_processes=0)
    app.initialize_settings()
    calls = []
    monkeypatch.setattr(app._executor, "submit", lambda fn, *args: calls.append((fn, args)))
    app.warm()
    app.warm()
    assert calls == [(warmup.warm_up, (True,))]
    warmup.warm_up(False)  # imports and collects (no gc.freeze in the test process)
    assert (
        "kubeflow_trainer_api.models" in sys.modules and "kale_ext.compile.compiler" in sys.modules
    )
    app._executor.shutdown()


def test_compile_processes_default_to_two_when_two_cpus_are_usable(monkeypatch):
    from kale_ext.server import app as app_module

    monkeypatch.setattr(app_module, "usable_cpus", lambda: 1.5)  # e.g. a 1.5-CPU container
    assert KaleExtApp().compile_processes == 0
    monkeypatch.setattr(app_module, "usable_cpus", lambda: 8)
    assert KaleExtApp().compile_processes == 2
    assert KaleExtApp(compile_processes=0).compile_processes == 0
    monkeypatch.undo()
    assert 0 < app_module.usable_cpus() <= (os.cpu_count() or 1)
