"""The base of every kale_ext handler: authentication first, query and body checks, errors as
JSON (`{"message", "status", "reason", ...}`), never an HTML page or a traceback; blocking work
in the extension's threads."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin

from ..job.k8s_values import matches
from .logstream import LogStream
from .schema import json_type

#: Query parameters every endpoint accepts: Jupyter's own (authentication, activity tracking).
JUPYTER_PARAMS = frozenset({"token", "_xsrf", "no_track_activity"})
#: Bodies larger than this are parsed in a thread, not on the event loop.
PARSE_IN_THREAD = 64 * 1024
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
    _work = None  # the heavy work this request waits for (a Future: cancel drops it)

    @property
    def app(self):
        """The KaleExtApp."""
        return self.extensionapp

    async def prepare(self):
        self._chunks: list[bytes] = []
        self._size = 0
        self._too_large = False
        self._refusal: tornado.web.HTTPError | None = None
        try:
            await self._admit()
        except tornado.web.HTTPError as e:
            if not self._read_before_refusing():
                raise
            # answered once the body is read, by the verb's stand-in: the verb never runs
            self._refusal = e
            setattr(self, (self.request.method or "GET").lower(), self._refuse)
        self._admitted = True

    def _read_before_refusing(self) -> bool:
        """Whether a refusal waits until the request's body is read. Answered before it, tornado
        closes a keep-alive connection with the body unread in it, which the client sees as a
        reset (3 of 30 XSRF-refused POSTs were) or as its next request failing. A body past
        max_body_bytes, or of no declared length, is not read: the refusal is at once, with
        `Connection: close`."""
        if "Transfer-Encoding" in self.request.headers:
            return False
        length = self.request.headers.get("Content-Length", "0")
        return length.isdigit() and int(length) <= self.app.max_body_bytes

    def _refuse(self, *args, **kwargs):
        raise self._refusal

    async def _admit(self) -> None:
        """Authentication and the checks before any body is read (HTTPError when refused)."""
        try:
            await super().prepare()  # identifies the user; checks host, origin and XSRF
        except tornado.web.HTTPError as e:
            if e.status_code == 403 and not self.check_host():
                host = self.request.host
                raise ApiError(
                    403,
                    f"this server does not answer to the Host {host!r}: open it by the address it "
                    "listens on (ServerApp.local_hostnames and allow_remote_access widen that)",
                    "HostNotAllowed",
                    field="Host",
                ) from None
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
        if self._too_large or self._refusal is not None:  # read, not kept
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

    def has_body(self) -> bool:
        """Whether the request came with a body (for an endpoint whose body is optional)."""
        return self._too_large or any(chunk.strip() for chunk in self._chunks)

    async def json_body(self, fields: tuple[str, ...]) -> dict:
        """The body as a JSON object with only ``fields`` (400 otherwise, 413 when too large)."""
        if self._too_large:
            raise self._too_large_error()
        from ..errors import ConfigError
        from .schema import parse

        raw = b"".join(self._chunks)
        if not raw.strip():
            raise ApiError(400, f"the request needs a JSON object body with {', '.join(fields)}")
        try:
            if len(raw) > PARSE_IN_THREAD:
                data = await self.app.run(parse, raw)
            else:
                data = parse(raw)
        except ConfigError as e:  # an over-long number, a string that is not text
            raise ApiError(400, str(e), "InvalidBody", field=e.field) from None
        except json.JSONDecodeError as e:
            raise ApiError(
                400, f"the body is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
            ) from None
        except UnicodeDecodeError:
            raise ApiError(400, "the body is not valid JSON: it is not UTF-8 text") from None
        except RecursionError:
            raise ApiError(400, "the body is not valid JSON: it is nested too deeply") from None
        if not isinstance(data, dict):
            raise ApiError(400, f"the body must be a JSON object, not {json_type(data)}")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ApiError(
                400,
                f"unknown field {unknown[0]!r} in the body (expected: {', '.join(fields)})",
                field=unknown[0],
            )
        return data

    async def call(self, fn, *args, **kwargs):
        """A cheap blocking read (in the reads' threads); the KaleExtError family becomes a
        response."""
        from ..errors import KaleExtError
        from ..files import storage_error

        try:
            return await self.app.read(fn, *args, **kwargs)
        except KaleExtError as e:
            raise to_api_error(e) from None
        except OSError as e:  # a full or read-only folder: 507 naming it, never a 500
            full = storage_error(e)
            if full is None:
                raise
            raise to_api_error(full) from None

    async def work(self, fn, *args):
        """Heavy blocking work (a submit, a sweep, a probe) in the heavy threads: at most
        ``client_share`` per client address at once (429), within ``work_deadline`` (504),
        dropped while it waits when the client leaves."""

        app = self.app
        user = self.request.remote_ip or ""  # a client (a token's users can be anonymous)
        if app.heavy_by_client.get(user, 0) >= app.client_share:
            raise ApiError(429, f"{app.client_share} heavy requests from your address are "
                           "running or waiting: try again when one ends (KaleExtApp.client_share)",
                           "TooManyRequests")  # fmt: skip
        app.heavy_by_client[user] = app.heavy_by_client.get(user, 0) + 1
        future = app.start_work(fn, *args)
        self._work = future
        try:
            with self._answering():
                return await asyncio.wait_for(asyncio.wrap_future(future), app.work_deadline)
        except asyncio.TimeoutError:
            app.overdue(future)  # its thread goes on: another takes its place meanwhile
            raise ApiError(504, f"the request did not finish in {app.work_deadline:g} s "
                           "(KaleExtApp.work_deadline)", "DeadlinePassed") from None  # fmt: skip
        finally:
            left = app.heavy_by_client.get(user, 1) - 1
            if left > 0:
                app.heavy_by_client[user] = left
            else:
                app.heavy_by_client.pop(user, None)

    async def compute(self, fn, *args):
        """CPU-bound work (a compile) in the compile processes (app.compute): dropped while it
        waits when the client leaves; a process that died or hung is a 503 or 504 saying so."""
        from .compile_pool import GAVE_UP, PoolError

        client = self.request.remote_ip or ""
        self._work = self.app.compute(fn, *args, client=client)
        with self._answering():
            try:
                return await self._work
            except PoolError as e:
                if e.reason != GAVE_UP:
                    raise ApiError(e.status, str(e), e.reason) from None
            self._work = self.app.compute(fn, *args, client=client)  # now in a thread
            try:
                return await self._work
            except PoolError as e:
                raise ApiError(e.status, str(e), e.reason) from None

    @contextlib.contextmanager
    def _answering(self):
        """Around awaiting ``self._work``: kale_ext's errors as their API errors, a client that
        left before its work started as 503 ClientGone; no work held afterwards."""
        from ..errors import KaleExtError
        from ..files import storage_error

        try:
            yield
        except KaleExtError as e:
            raise to_api_error(e) from None
        except OSError as e:  # a full or read-only folder: 507 naming it, never a 500
            full = storage_error(e)
            if full is None:
                raise
            raise to_api_error(full) from None
        except asyncio.CancelledError:  # its client left before it started: nobody to answer
            raise ApiError(503, "the client left before its work started", "ClientGone") from None
        finally:
            self._work = None

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
            "field": None,
        }
        if isinstance(exc, ApiError):
            reply.update(exc.extra, message=exc.message, reason=exc.json_reason)
        elif isinstance(exc, tornado.web.HTTPError):
            if exc.log_message:
                reply["message"] = exc.log_message % exc.args if exc.args else exc.log_message
            elif status_code == 403 and not self.current_user:
                reply["message"] = AUTH_REQUIRED
            elif status_code == 405:
                allowed = ", ".join(self.allowed_methods())
                self.set_header("Allow", allowed)
                reply["message"] = f"{self.request.method} is not allowed here (allowed: {allowed})"
        elif exc is not None:  # a bug: the traceback is in the server log, not in the reply
            reply["message"] = f"internal error in kale_ext: {type(exc).__name__}: {exc}"
        self.set_header("Content-Type", "application/json")
        if not getattr(self, "_admitted", False):  # refused with its body unread: tornado closes
            self.set_header("Connection", "close")
        self.finish(json.dumps(reply))

    def allowed_methods(self) -> list[str]:
        """The verbs this handler answers (the `Allow` header of a 405)."""
        verbs = ("GET", "POST", "PUT", "PATCH", "DELETE")
        base = tornado.web.RequestHandler
        return [v for v in verbs if getattr(type(self), v.lower()) is not getattr(base, v.lower())]

    def on_connection_close(self) -> None:
        if self._stream is not None:
            self._stream.stop()
        if self._work is not None:  # the client left: its work, if it still waits, never runs
            self._work.cancel()
        super().on_connection_close()


def check_job_name(name: str) -> str:
    """A TrainJob name: an RFC 1035 label (Kubeflow Trainer names its JobSet and pods after it)."""
    if not name:
        raise ApiError(400, "the job name is empty: give it after jobs/", field="name")
    if not matches("job_name", name):
        raise ApiError(
            400,
            f"{name!r} is not a valid job name: at most 63 lowercase letters, digits and '-', "
            "starting with a letter and ending with a letter or digit",
            field="name",
        )
    return name


def check_runtime_name(name: str) -> str:
    """A (Cluster)TrainingRuntime name: an RFC 1123 subdomain."""
    if not name:
        raise ApiError(400, "the runtime name is empty: give it after runtimes/", field="name")
    if not matches("dns_subdomain", name):
        raise ApiError(400, f"{name!r} is not a valid runtime name", field="name")
    return name
