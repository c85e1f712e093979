"""REST handlers of the kale_ext server extension. docs/rest-api.md is the contract and
openapi.yaml (next to this file) its machine-readable form.

Every verb is `@tornado.web.authenticated`; errors are JSON (`{"message", "status", "reason",
...}`), never an HTML page or a traceback; blocking work (compiling, backend calls, reading files
and logs) runs in threads, never on the event loop.
"""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path, PurePosixPath, PureWindowsPath

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from jupyter_server.utils import url_path_join
from tornado.iostream import StreamClosedError

from .logstream import LogStream, line_event, parse_event_id, parse_offsets
from .logstream import error_data as stream_error_data
from .logstream import event as sse_event

NAMESPACE = "kale-ext"
#: A TrainJob name: an RFC 1035 label (Kubeflow Trainer names its JobSet and pods after it).
JOB_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
#: A (Cluster)TrainingRuntime name: an RFC 1123 subdomain.
RUNTIME_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
#: Query parameters every endpoint accepts: Jupyter's own (authentication, activity tracking).
JUPYTER_PARAMS = frozenset({"token", "_xsrf", "no_track_activity"})
#: Bodies larger than this are parsed in a thread, not on the event loop.
PARSE_IN_THREAD = 64 * 1024
SSE_TYPE = "text/event-stream; charset=utf-8"
AUTH_REQUIRED = "authentication required: send Jupyter's token or login cookie"


class ApiError(tornado.web.HTTPError):
    """An error response: `{"message", "status", "reason", **extra}`."""

    def __init__(self, status: int, message: str, reason: str | None = None, **extra):
        if not 400 <= status <= 599:
            status = 500
        phrase = http.client.responses.get(status, "Error")
        # log_message is %-formatted by tornado's logging: keep a message's own % signs
        super().__init__(status, message.replace("%", "%%"), reason=phrase)
        self.message = message
        self.json_reason = reason or phrase
        self.extra = extra


def to_api_error(e: Exception) -> ApiError:
    """The KaleExtError family as responses: CompileError 422 with its diagnostics,
    ConfigError 400 naming the field, NotebookError 422, BackendError its own status."""
    from ..errors import CompileError, ConfigError, NotebookError
    from .service import config_diagnostic

    if isinstance(e, CompileError):
        errors = [d.to_dict() for d in e.errors]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return ApiError(
            422,
            f"the notebook does not compile: {e.errors[0] if e.errors else e}{more}",
            "CompileError",
            errors=errors,
            warnings=[d.to_dict() for d in e.diagnostics if d.severity != "error"],
        )
    if isinstance(e, ConfigError):
        return ApiError(400, str(e), "ConfigError", field=e.field, errors=[config_diagnostic(e)])
    if isinstance(e, NotebookError):
        from ..errors import Diagnostic

        diag = Diagnostic("error", str(e), code="notebook").to_dict()
        return ApiError(422, str(e), "NotebookError", errors=[diag])
    status = getattr(e, "status", None)
    if isinstance(status, int):  # BackendError
        return ApiError(status, str(e), getattr(e, "reason", None) or None)
    return ApiError(400, str(e), type(e).__name__)


@tornado.web.stream_request_body  # to refuse a large body before reading it
class KaleExtHandler(ExtensionHandlerMixin, APIHandler):
    """Base: query parameter and body checks, JSON errors, the thread pool and the backend."""

    #: Query parameters each verb takes; any other is a 400.
    params: dict[str, frozenset[str]] = {}
    _stream: LogStream | None = None

    @property
    def app(self):
        """The KaleExtApp."""
        return self.extensionapp

    async def prepare(self):
        self._chunks: list[bytes] = []
        self._size = 0
        self._too_large = False
        try:
            await super().prepare()  # identifies the user; checks host, origin and XSRF
        except tornado.web.HTTPError as e:
            if e.status_code == 403 and not getattr(self, "_jupyter_current_user", None):
                raise ApiError(403, AUTH_REQUIRED) from None  # say what is missing first
            raise
        if self.request.method == "OPTIONS":  # CORS preflight: Jupyter's own handling
            return
        if not self.current_user:  # refuse before reading any body; every verb checks again
            raise ApiError(403, AUTH_REQUIRED)
        self._check_query()
        length = self.request.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > self.app.max_body_bytes:
            raise self._too_large_error(int(length))
        self.app.warm()

    def data_received(self, chunk: bytes) -> None:
        if self._too_large:
            return
        self._size += len(chunk)
        if self._size > self.app.max_body_bytes:
            self._too_large, self._chunks = True, []
        else:
            self._chunks.append(chunk)

    def _too_large_error(self, size: int | None = None) -> ApiError:
        limit = self.app.max_body_bytes
        got = f"{size} bytes" if size is not None else "larger than that"
        return ApiError(
            413,
            f"the request body is {got}; the limit is {limit} bytes (KaleExtApp.max_body_bytes): "
            "send the notebook's path instead of its content",
        )

    def _check_query(self) -> None:
        method = self.request.method or "GET"
        allowed = self.params.get(method, frozenset())
        unknown = sorted(set(self.request.query_arguments) - allowed - JUPYTER_PARAMS)
        unknown = [k for k in unknown if not k.isdigit()]  # JupyterLab's `?<timestamp>` buster
        if unknown:
            takes = ", ".join(sorted(allowed)) or "none"
            raise ApiError(
                400,
                f"unknown query parameter {unknown[0]!r} (this endpoint takes: {takes})",
                field=unknown[0],
            )

    def query_arg(self, name: str) -> str | None:
        values = self.request.query_arguments.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise ApiError(400, f"query parameter {name!r} is given more than once", field=name)
        return values[0].decode("utf-8", "replace")

    def int_arg(self, name: str) -> int | None:
        text = self.query_arg(name)
        if text is None:
            return None
        if not text.isdigit() or not text.isascii() or len(text) > 18:
            raise ApiError(
                400,
                f"query parameter {name!r} must be a whole number ≥ 0, not {text!r}",
                field=name,
            )
        return int(text)

    def bool_arg(self, name: str) -> bool:
        text = self.query_arg(name)
        if text is None or text.lower() in ("0", "false"):
            return False
        if text.lower() in ("1", "true"):
            return True
        raise ApiError(400, f"query parameter {name!r} must be 0 or 1, not {text!r}", field=name)

    async def json_body(self, fields: tuple[str, ...]) -> dict:
        """The body as a JSON object with only ``fields`` (400 otherwise, 413 when too large)."""
        if self._too_large:
            raise self._too_large_error()
        raw = b"".join(self._chunks)
        if not raw.strip():
            raise ApiError(400, f"the request needs a JSON object body with {', '.join(fields)}")
        try:
            if len(raw) > PARSE_IN_THREAD:
                data = await self.app.run(json.loads, raw)
            else:
                data = json.loads(raw)
        except json.JSONDecodeError as e:
            raise ApiError(
                400, f"the body is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
            ) from None
        except UnicodeDecodeError:
            raise ApiError(400, "the body is not valid JSON: it is not UTF-8 text") from None
        except RecursionError:
            raise ApiError(400, "the body is not valid JSON: it is nested too deeply") from None
        if not isinstance(data, dict):
            raise ApiError(400, f"the body must be a JSON object, not {_json_type(data)}")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ApiError(
                400,
                f"unknown field {unknown[0]!r} in the body (expected: {', '.join(fields)})",
                field=unknown[0],
            )
        return data

    async def call(self, fn, *args, **kwargs):
        """Run blocking work in the thread pool; the KaleExtError family becomes a response."""
        from ..errors import KaleExtError

        try:
            return await self.app.run(fn, *args, **kwargs)
        except KaleExtError as e:
            raise to_api_error(e) from None

    async def backend(self):
        backend, _ = await self.call(self.app.get_backend)
        return backend

    def reply(self, data, status: int = 200) -> None:
        """Send ``data`` as JSON (``bytes``: JSON already)."""
        self.set_status(status)
        self.finish(data if isinstance(data, bytes) else json.dumps(data, default=str))

    def write_error(self, status_code: int, **kwargs) -> None:
        """JSON, always: `{"message", "status", "reason", ...}`; never a traceback."""
        exc = (kwargs.get("exc_info") or (None, None, None))[1]
        reply = {
            "message": http.client.responses.get(status_code, "Error"),
            "status": status_code,
            "reason": http.client.responses.get(status_code, "Error"),
        }
        if isinstance(exc, ApiError):
            reply.update(exc.extra, message=exc.message, reason=exc.json_reason)
        elif isinstance(exc, tornado.web.HTTPError):
            if exc.log_message:
                reply["message"] = exc.log_message % exc.args if exc.args else exc.log_message
            elif status_code == 403 and not self.current_user:
                reply["message"] = AUTH_REQUIRED
            elif status_code == 405:
                reply["message"] = f"{self.request.method} is not allowed here"
        elif exc is not None:  # a bug: the traceback is in the server log, not in the reply
            reply["message"] = f"internal error in kale_ext: {type(exc).__name__}: {exc}"
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(reply))

    def on_connection_close(self) -> None:
        if self._stream is not None:
            self._stream.stop()
        super().on_connection_close()


def _json_type(value) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def check_job_name(name: str) -> str:
    if not JOB_NAME.match(name):
        raise ApiError(
            400,
            f"{name!r} is not a valid job name: at most 63 lowercase letters, digits and '-', "
            "starting with a letter and ending with a letter or digit",
            field="name",
        )
    return name


def check_runtime_name(name: str) -> str:
    if not RUNTIME_NAME.match(name) or len(name) > 253:
        raise ApiError(400, f"{name!r} is not a valid runtime name", field="name")
    return name


# -- notebooks: a path under the server root, or the notebook's JSON --


def resolve_notebook(root: str, path, allow_hidden: bool) -> Path:
    """The notebook file ``path`` names under ``root`` (blocking: it touches the file system).

    Absolute paths are a 400; `..`, and symbolic links that lead outside the root, a 403; hidden
    files a 403 unless the contents manager allows them; a missing file a 404."""
    if not isinstance(path, str) or not path.strip():
        raise ApiError(400, "path must be a non-empty string", field="path")
    if "\x00" in path or len(path) > 4096:
        raise ApiError(400, "path is not a valid file path", field="path")
    if path.startswith(("/", "\\", "~")) or PureWindowsPath(path).is_absolute():
        raise ApiError(400, f"path must be relative to the server root, not {path!r}", field="path")
    parts = PurePosixPath(path).parts
    if ".." in parts:
        raise ApiError(403, f"path {path!r} leads outside the server root", field="path")
    if not allow_hidden and any(p.startswith(".") for p in parts):
        raise ApiError(
            403,
            f"path {path!r} is hidden: hidden files are not served "
            "(ContentsManager.allow_hidden is off)",
            field="path",
        )
    base = Path(root).resolve()
    full = (base / path).resolve()
    if full != base and base not in full.parents:
        raise ApiError(
            403, f"path {path!r} leads outside the server root (a symbolic link)", field="path"
        )
    if not full.exists():
        raise ApiError(404, f"notebook not found: {path}", "NotFound", field="path")
    if full.is_dir():
        raise ApiError(400, f"{path} is a directory, not a notebook", field="path")
    if full.suffix != ".ipynb":
        raise ApiError(400, f"{path} is not a notebook (.ipynb file)", field="path")
    return full


def read_notebook_bytes(root: str, path, allow_hidden: bool) -> bytes:
    full = resolve_notebook(root, path, allow_hidden)
    try:
        return full.read_bytes()
    except OSError as e:
        raise ApiError(403, f"cannot read {path}: {e.strerror}", field="path") from None


def _relative_path(path) -> str:
    """A path under the server root, checked as text (the notebook's content came as JSON)."""
    if not isinstance(path, str) or not path.strip():
        raise ApiError(400, "path must be a non-empty string", field="path")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("\\"):
        raise ApiError(400, f"path must be relative to the server root, not {path!r}", field="path")
    if ".." in pure.parts:
        raise ApiError(403, f"path {path!r} leads outside the server root", field="path")
    return path


class NotebookHandler(KaleExtHandler):
    """Base of POST compile and POST jobs: the same body."""

    fields = ("path", "notebook", "options")

    async def notebook_of(self, body: dict):
        """(data, name, path) of the body's notebook: file bytes or nbformat JSON. With both, the
        JSON is the content (unsaved changes count) and the path names the job and its origin."""
        has_path, has_nb = body.get("path") is not None, body.get("notebook") is not None
        if not (has_path or has_nb):
            raise ApiError(
                400,
                "give either path (a notebook under the server root) or notebook (its JSON)",
                field="path",
            )
        options = body.get("options")
        if options is not None and not isinstance(options, dict):
            raise ApiError(
                400, f"options must be an object, not {_json_type(options)}", field="options"
            )
        if has_nb:
            if not isinstance(body["notebook"], dict):
                kind = _json_type(body["notebook"])
                raise ApiError(
                    400,
                    f"notebook must be the notebook's JSON object, not {kind}",
                    field="notebook",
                )
            if not has_path:
                return body["notebook"], "notebook.ipynb", None
            path = _relative_path(body["path"])
            return body["notebook"], PurePosixPath(path).name, path
        path = body["path"]
        cm = self.contents_manager
        root = getattr(cm, "root_dir", None) or self.serverapp.root_dir
        data = await self.app.run(
            read_notebook_bytes, root, path, bool(getattr(cm, "allow_hidden", False))
        )
        return data, PurePosixPath(path).name, path


class CompileHandler(NotebookHandler):
    @tornado.web.authenticated
    async def post(self):
        from . import service

        body = await self.json_body(self.fields)
        data, name, path = await self.notebook_of(body)
        options = body.get("options")
        backend = await self.backend()
        defaults = await self.call(self.app.defaults)
        runtime, installed = await self.call(service.runtime_for, backend, data, options, defaults)
        reply = await self.app.compute(
            service.preview_json, data, name, path, options, runtime, defaults, installed
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
        backend = await self.backend()
        defaults = await self.call(self.app.defaults)
        result = await self.call(
            service.submit, backend, data, name, path, body.get("options"), defaults
        )
        base = self.settings.get("base_url", "/")
        self.set_header("Location", url_path_join(base, NAMESPACE, "jobs", result["name"]))
        self.reply(result, 201)


class JobHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self, name: str):
        name = check_job_name(name)
        backend = await self.backend()
        info = await self.call(backend.get_job, name)
        self.reply(info.to_dict())

    @tornado.web.authenticated
    async def delete(self, name: str):
        from ..errors import KaleExtError

        name = check_job_name(name)
        backend = await self.backend()
        try:
            await self.app.run(backend.delete, name)
        except KaleExtError as e:
            if getattr(e, "status", None) == 404:
                raise ApiError(
                    404,
                    f"job {name} does not exist: it was never created or is deleted already",
                    "NotFound",
                ) from None
            raise to_api_error(e) from None
        self.reply({"deleted": name})


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
            done = False
            for kind, payload in items:
                if kind == "line":
                    self.write(line_event(payload))
                elif kind == "end":
                    self.write(sse_event(payload, "end"))
                    done = True
                else:
                    self.write(sse_event(stream_error_data(payload), "error"))
                    done = True
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
        find = service.probe_runtime_packages if self.bool_arg("probe") else service.known_packages
        backend = await self.backend()
        self.reply(await self.call(find, backend, name))


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

        self.reply({"tags": await self.app.run(service.tags)})


class LoopLagHandler(KaleExtHandler):
    """Debug only (KaleExtApp.debug_loop_lag): the event loop's measured stalls."""

    @tornado.web.authenticated
    async def get(self):
        self.reply({**self.app.loop_lag().stats(), "warmed_up": self.app.warmed_up})

    @tornado.web.authenticated
    async def delete(self):
        self.app.loop_lag().reset()
        self.reply({"reset": True})


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
    ("jobs", JobsHandler),
    ("jobs/{name}", JobHandler),
    ("jobs/{name}/logs", LogsHandler),
    ("jobs/{name}/events", EventsHandler),
    ("backend", BackendHandler),
    ("defaults", DefaultsHandler),
    ("tags", TagsHandler),
]
DEBUG_ROUTES: list[tuple[str, type[KaleExtHandler]]] = [("debug/loop-lag", LoopLagHandler)]


def pattern(template: str) -> str:
    """`jobs/{name}/logs` → the tornado pattern below the base URL."""
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
    return url_path_join(NAMESPACE, regex) + "/?"


def handlers(debug: bool = False) -> list[tuple[str, type]]:
    routes = ROUTES + (DEBUG_ROUTES if debug else [])
    return [(pattern(t), h) for t, h in routes] + [(NAMESPACE + "(?:/.*)?", NotFoundHandler)]
