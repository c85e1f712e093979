"""REST handlers of the kale_ext server extension. docs/rest-api.md is the contract and
openapi.yaml (next to this file) its machine-readable form. Every verb is
`@tornado.web.authenticated` (base.py); blocking work (compiling, backend calls, reading files
and logs) runs in threads, never on the event loop.
"""

from __future__ import annotations

import re

import tornado.web
from jupyter_server.utils import url_path_join
from tornado.iostream import StreamClosedError

from .base import (
    ApiError,
    KaleExtHandler,
    check_job_name,
    check_runtime_name,
    to_api_error,
)
from .compare import DiffHandler
from .job_actions import RerunHandler, ResumeHandler, StopHandler
from .logstream import LogStream, parse_event_id, parse_offsets
from .logstream import error_data as stream_error_data
from .logstream import event as sse_event
from .notebooks import NotebookHandler
from .panel_state import PanelStateHandler
from .prune import PruneJobs
from .sweeps import SweepHandler, SweepsHandler

NAMESPACE = "kale-ext"
SSE_TYPE = "text/event-stream; charset=utf-8"
#: The most log lines `tail` may ask for.
MAX_TAIL = 10_000


class CompileHandler(NotebookHandler):
    @tornado.web.authenticated
    async def post(self):
        from . import compile_inputs, service

        body = await self.json_body(self.fields)
        data, name, path = await self.notebook_of(body)
        options_error = self.check_options(body)
        options = body.get("options")
        runtime, installed, defaults = await self.call(
            compile_inputs.preview_inputs, self.app, data, options, options_error
        )
        reply = await self.compute(
            service.preview_json,
            *(data, name, path, options, runtime, defaults, installed, self.root_dir()),
        )
        self.reply(reply)


class JobsHandler(NotebookHandler):
    @tornado.web.authenticated
    async def get(self):
        from . import service

        backend = await self.backend()
        self.reply({"jobs": await self.call(service.job_list, backend)})

    @tornado.web.authenticated
    async def post(self):
        from . import service

        body = await self.json_body(self.fields)
        data, name, path = await self.notebook_of(body)
        options_error = self.check_options(body)
        if options_error is not None:
            raise to_api_error(options_error)
        backend = await self.backend()
        defaults = await self.call(self.app.defaults)
        options, root = body.get("options"), self.root_dir()
        result = await self.work(service.submit, backend, data, name, path, options, defaults, root)
        base = self.settings.get("base_url", "/")
        self.set_header("Location", url_path_join(base, NAMESPACE, "jobs", result["name"]))
        self.reply(result, 201)


class JobHandler(KaleExtHandler):
    params = {"DELETE": frozenset({"outputs"})}

    @tornado.web.authenticated
    async def get(self, name: str):
        name = check_job_name(name)
        backend = await self.backend()
        info = await self.call(backend.get_job, name)
        from ..backends.results import summary  # what it returned: saved, or why not

        self.reply({**info.to_dict(), "result": await self.call(summary, backend, info)})

    @tornado.web.authenticated
    async def delete(self, name: str):
        from ..errors import KaleExtError

        name = check_job_name(name)
        outputs = self.bool_arg("outputs")
        backend = await self.backend()
        gone = f"job {name} does not exist: it was never created or is deleted already"
        if name in self.app.deleting:  # one DELETE deletes; those at the same time get a 404
            raise ApiError(404, f"{gone} (another request is deleting it)", "NotFound")
        self.app.deleting.add(name)
        try:
            note = await self.app.run(backend.delete, name, outputs)
        except KaleExtError as e:
            if getattr(e, "status", None) == 404:
                raise ApiError(404, gone, "NotFound") from None
            raise to_api_error(e) from None
        finally:
            self.app.deleting.discard(name)
        self.reply({"deleted": name, "outputs": note})


class PruneHandler(PruneJobs, JobHandler):
    """POST jobs/prune (prune.py); GET and DELETE are the job named prune's, as for any name."""

    @tornado.web.authenticated
    async def get(self):
        await JobHandler.get(self, "prune")

    @tornado.web.authenticated
    async def delete(self):
        await JobHandler.delete(self, "prune")


class OutputsHandler(NotebookHandler):  # its root_dir: the outputs' files, served under it
    @tornado.web.authenticated
    async def get(self, name: str):
        from .paths import under_root

        name = check_job_name(name)
        backend = await self.backend()
        found = await self.call(backend.outputs, name)
        # their files can be opened where Jupyter serves them, once gathered into `location`
        hidden = bool(getattr(self.contents_manager, "allow_hidden", False))
        gathered = found.listed and found.note is None
        root_path = (
            await self.call(under_root, found.location, self.root_dir(), hidden)
            if gathered
            else None
        )
        self.reply({**found.to_dict(), "root_path": root_path})


class EventsHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self, name: str):
        from . import service

        name = check_job_name(name)
        backend = await self.backend()
        self.reply({"events": await self.call(service.events, backend, name)})


class LogsHandler(KaleExtHandler):
    """Server-sent events: one per log line, then `end` (or `error`)."""

    params = {"GET": frozenset({"node", "follow", "tail", "offsets"})}
    #: Seconds between keep-alive comments while a followed job is quiet.
    heartbeat = 15.0

    @tornado.web.authenticated
    async def get(self, name: str):
        name = check_job_name(name)
        node = self.int_arg("node")
        follow = self.bool_arg("follow")
        tail = self.int_arg("tail")
        if tail is not None and tail > MAX_TAIL:
            raise ApiError(400, f"tail must be at most {MAX_TAIL:,} lines, got {tail}: follow the "
                           "log from an offset (offsets=) to read more", field="tail")  # fmt: skip
        try:
            offsets = parse_offsets(self.query_arg("offsets") or "")
        except ValueError as e:
            raise ApiError(400, f"offsets: {e}", field="offsets") from None
        last_id = self.request.headers.get("Last-Event-ID", "").strip()
        if last_id:
            try:
                k, offset = parse_event_id(last_id)
            except ValueError as e:
                raise ApiError(400, f"Last-Event-ID: {e}", field="Last-Event-ID") from None
            offsets[k] = max(offsets.get(k, 0), offset)
        backend = await self.backend()
        info = await self.call(backend.get_job, name)
        if info.status.value == "Unreadable":  # its record says nothing of its logs
            raise ApiError(409, info.reason or "its record cannot be read", "UnreadableRecord")
        if node is not None and node >= info.num_nodes:
            raise ApiError(
                404, f"job {name} has no node {node} (it has {info.num_nodes})", field="node"
            )
        wrong = sorted(k for k in offsets if k >= info.num_nodes)
        if wrong:
            raise ApiError(
                400,
                f"offsets name node {wrong[0]}; job {name} has {info.num_nodes}",
                field="offsets",
            )
        if node is not None:
            offsets = {k: v for k, v in offsets.items() if k == node}
        self.set_header("Content-Type", SSE_TYPE)
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")  # nginx: do not buffer the stream
        stream = LogStream(
            backend,
            name,
            node=node,
            follow=follow,
            tail=None if offsets else tail,  # resuming is exact: no tail
            offsets=offsets or None,
        )
        self._stream = stream
        self.app._streams.add(stream)
        try:
            await self.flush()  # the headers: the client knows the stream is open
            stream.start()
            await self._pump(stream)
        except StreamClosedError:
            pass
        finally:
            stream.stop()
            self.app._streams.discard(stream)
        if not self._finished:
            self.finish(set_content_type=SSE_TYPE)

    async def _pump(self, stream: LogStream) -> None:
        while not stream.stopped:
            items = await stream.batch(self.heartbeat)
            if not items:
                if not stream.stopped:
                    self.write(": keep-alive\n\n")
                    await self.flush()
                continue
            # the lines' events, encoded by the reader thread, in one write; an end or an error
            # is the last item
            kind, payload = items[-1]
            done = kind != "line"
            self.write(b"".join(data for _, data in (items[:-1] if done else items)))
            if kind == "end":
                self.write(sse_event(payload, "end"))
            elif done:
                self.write(sse_event(stream_error_data(payload), "error"))
            del items, payload  # written: only their bytes stay while the client reads them
            await self.flush()  # every event that arrived goes out now
            if done:
                return


class RuntimesHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self):
        backend = await self.backend()
        runtimes = await self.call(backend.list_runtimes)
        self.reply({"runtimes": [r.to_dict() for r in runtimes]})


class RuntimeHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self, name: str):
        name = check_runtime_name(name)
        backend = await self.backend()
        runtime = await self.call(backend.get_runtime, name)
        self.reply(runtime.to_dict())


class RuntimePackagesHandler(KaleExtHandler):
    """The Python packages of a runtime's image. Without `probe=1`, only what the backend knows
    already (`packages: null` when nothing): no job is started. With it, an unknown list is found
    by a probe job on the runtime (a pod: it may take minutes), in a worker thread."""

    params = {"GET": frozenset({"probe"})}

    @tornado.web.authenticated
    async def get(self, name: str):
        from . import service

        name = check_runtime_name(name)
        backend = await self.backend()
        if self.bool_arg("probe"):
            self.reply(await self.work(service.probe_runtime_packages, backend, name))
        else:
            self.reply(await self.call(service.known_packages, backend, name))


class QueuesHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self):
        """The queues a job may name (Kueue's LocalQueues of the namespace), and why there
        are none when none can be listed (the local backend, a cluster without Kueue)."""
        backend = await self.backend()
        queues, reason = await self.call(backend.list_queues)
        self.reply({"queues": [q.to_dict() for q in queues], "reason": reason})


class BackendHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self):
        backend, reason = await self.call(self.app.get_backend)
        namespace = getattr(backend, "namespace", None)
        self.reply(
            {
                "name": backend.name,
                "reason": reason,
                "namespace": namespace if isinstance(namespace, str) else None,
            }
        )


class DefaultsHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self):
        """The defaults every job starts from, and which layer set each (kale_ext.defaults)."""
        self.reply((await self.call(self.app.defaults)).to_dict())


class TagsHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self):
        from . import service

        self.reply({"tags": await self.app.read(service.tags)})


class LoopLagHandler(KaleExtHandler):
    """Debug only: the event loop's measured stalls (a 404 unless KaleExtApp.debug_loop_lag)."""

    def _probe(self):
        if not self.app.debug_loop_lag:
            raise ApiError(
                404,
                "the loop-lag probe is off: start the server with "
                "--KaleExtApp.debug_loop_lag=True to measure",
                "DebugOff",
            )
        return self.app.loop_lag()

    @tornado.web.authenticated
    async def get(self):
        self.reply({**self._probe().stats(), "warmed_up": self.app.warmed_up})

    @tornado.web.authenticated
    async def delete(self):
        self._probe().reset()
        self.reply({"reset": True})


class OpenApiHandler(KaleExtHandler):
    """The OpenAPI document of this API (openapi.yaml, next to this module), as served."""

    @tornado.web.authenticated
    async def get(self):
        from .schema import OPENAPI

        text = await self.app.read(OPENAPI.read_bytes)
        self.finish(text, set_content_type="application/yaml; charset=utf-8")


class NotFoundHandler(KaleExtHandler):
    """Anything else under kale-ext/: a JSON 404, not Jupyter's HTML page."""

    def _missing(self):
        raise ApiError(404, f"no such endpoint: {self.request.method} {self.request.path}")

    @tornado.web.authenticated
    def get(self, *args):
        self._missing()

    @tornado.web.authenticated
    def post(self, *args):
        self._missing()

    @tornado.web.authenticated
    def put(self, *args):
        self._missing()

    @tornado.web.authenticated
    def patch(self, *args):
        self._missing()

    @tornado.web.authenticated
    def delete(self, *args):
        self._missing()

    def _check_query(self) -> None:  # the 404 says more than an unknown parameter would
        pass


#: (path below kale-ext/, handler): every endpoint of docs/rest-api.md.
ROUTES: list[tuple[str, type[KaleExtHandler]]] = [
    ("compile", CompileHandler),
    ("runtimes", RuntimesHandler),
    ("runtimes/{name}", RuntimeHandler),
    ("runtimes/{name}/packages", RuntimePackagesHandler),
    ("queues", QueuesHandler),
    ("jobs", JobsHandler),
    ("jobs/prune", PruneHandler),  # before jobs/{name}: GET and DELETE are the job prune's
    ("jobs/{name}", JobHandler),
    ("jobs/{name}/logs", LogsHandler),
    ("jobs/{name}/events", EventsHandler),
    ("jobs/{name}/outputs", OutputsHandler),
    ("jobs/{name}/rerun", RerunHandler),
    ("jobs/{name}/resume", ResumeHandler),
    ("jobs/{name}/stop", StopHandler),
    ("sweeps", SweepsHandler),
    ("sweeps/{name}", SweepHandler),
    ("diff", DiffHandler),
    ("backend", BackendHandler),
    ("defaults", DefaultsHandler),
    ("tags", TagsHandler),
    ("panel-state", PanelStateHandler),
    ("debug/loop-lag", LoopLagHandler),
    ("openapi.yaml", OpenApiHandler),
]


def pattern(template: str) -> str:
    """`jobs/{name}/logs` → the tornado pattern below the base URL. A name may be empty (the
    handler's 400 says so): `jobs/` is the job named "", not the list of jobs."""
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]*)", template)
    return url_path_join(NAMESPACE, regex) + ("/?" if "{" in template else "")


def handlers() -> list[tuple[str, type]]:
    return [(pattern(t), h) for t, h in ROUTES] + [(NAMESPACE + "(?:/.*)?", NotFoundHandler)]
