"""The emulated cluster's API server: kmock's ``KubernetesEmulator`` (the HTTP server, request
parsing, discovery, storage with history, watch streams, its reaction DSL for tests), with what
the kubernetes client and kale_ext rely on from a real API server and kmock 0.8 lacks:

- creates answer **201** (kmock answers 200: kubernetes ≥ 36 then reads a custom-object create
  as None, since its generated client maps only 201 to a body) with the metadata the server
  sets (namespace, uid, resourceVersion, creationTimestamp, generation); a name taken is a 409
  ``AlreadyExists``, an unknown namespace a 404, and every failure a ``Status`` body;
- admission (``admission.py``) before anything is stored: 400, 403 and 422 as a real cluster
  with Kubeflow Trainer's webhooks answers;
- lists with ``labelSelector`` and ``fieldSelector``, ``kind: ...List`` and a resourceVersion;
  watches also for ``watch=True`` (how the Python client spells it; kmock waits for
  ``watch=true``), filtered by the same selectors, from a resourceVersion, for
  ``timeoutSeconds``;
- PATCH as JSON patch (``test`` guards answer 422), merge patch and strategic merge patch;
  DELETE of one object or of a collection, with ``propagationPolicy`` (Foreground keeps the
  object, with a finalizer, until the garbage collector let it go), and the garbage collector's
  rule for owner references: an object goes when its last owner goes;
- Events recorded by the emulated controllers (``record_event``), counted as the API server
  aggregates them;
- the ``pods/log`` subresource, Kueue's visibility API (a LocalQueue's ``pendingworkloads``,
  with Kueue on) and faults (``faults.py``), through hooks the cluster sets.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

import aiohttp.web
import attrs
import jsonpatch
import kmock

from tests.harness.cluster.objects import (
    field_values,
    merge_patch,
    parse_selector,
    selected,
    strategic_merge,
    within,
)
from tests.harness.cluster.store import (
    RESOURCES,
    VERBS,
    Store,
    not_found,
    qualified,
    random_suffix,
    status_error,
)

__all__ = ["ApiServer", "RESOURCES", "not_found", "qualified", "status_error"]


@attrs.define(kw_only=True)
class ApiServer(Store, kmock.KubernetesEmulator):
    """The API server. The store's methods (``get``, ``items``, ``put``, ``remove``) are for the
    emulated controllers, on the server's event loop; ``watchers`` hear every change."""

    admission: Any = None  # admission.Admission
    faults: Any = None  # faults.Faults
    pod_logs: Callable | None = None  # (request) -> payload: the pods/log subresource
    pending_workloads: Callable | None = None  # (request) -> payload: Kueue's visibility API
    tokens: Any = None  # trainer_status.Tokens: the service-account token issuer, when on
    graceful: Callable | None = None  # (pod) -> bool: whether a kubelet stops it before it goes
    watchers: list = attrs.field(factory=list)  # (event type, resource, object) after a change
    _counter: Any = attrs.field(factory=lambda: itertools.count(1), init=False)
    _version: int = attrs.field(default=0, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for key, (kind, namespaced) in RESOURCES.items():
            info = kmock.ResourceInfo(kind=kind, namespaced=namespaced, verbs=VERBS)
            if kind == "Pod":
                info.subresources = {"log", "status"}
            self.resources[key] = info
        # after any reaction a test adds, before kmock's own fallbacks
        (self**-1)[lambda r: r.subresource == "log"] << self._serve_log
        (self**-1)[lambda r: r.subresource == "pendingworkloads"] << self._serve_pending
        (self**-1)[lambda r: r.method == "DELETE" and r.resource and not r.name] << self._collection

    # ----- requests ---------------------------------------------------------------------------

    async def _render_error(self, exc: Exception):  # type: ignore[override]
        """The API server's own answers as it writes them (kmock adds a traceback to every
        ``details``; a bug of the harness still gets one)."""
        if not isinstance(exc, kmock.KubernetesError):
            return await super()._render_error(exc)
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": exc.message, "reason": exc.reason, "code": exc.status}  # fmt: skip
        if exc.details:
            body["details"] = exc.details
        return aiohttp.web.json_response(body, status=exc.status)

    async def _handle(self, request):  # type: ignore[override]
        """Faults first; kmock's emulator changes its store before any reaction runs, so its
        step is skipped: the verbs below change the store, after admission."""
        if self.faults is not None:
            await self.faults.api_answer(request)
        watch = request.params.get("watch", "").lower() in ("true", "1")
        if request.method == "GET" and watch and request.action != kmock.action.WATCH:
            # reactions find a request by identity among the ones recorded: record this one
            request = attrs.evolve(request, action=kmock.action.WATCH)
            self._requests[request.id] = request
        return await kmock.RawHandler._handle(self, request)

    async def _serve_log(self, request):
        if self.pod_logs is None:
            raise status_error(404, "NotFound", "the server could not find the requested resource")
        return await self.pod_logs(request)

    async def _serve_pending(self, request):
        if self.pending_workloads is None or request.method != "GET":
            raise status_error(404, "NotFound", "the server could not find the requested resource")
        return self.pending_workloads(request)

    async def _serve_list(self, request):  # type: ignore[override]
        kind, _ = self._info(request.resource)
        labels, fields = self._selectors(request)
        items = [
            o
            for o in self.items(request.resource, request.namespace)
            if selected((o["metadata"].get("labels") or {}), labels)
            and selected(field_values(o, fields), fields)
        ]
        version = request.resource.group and f"{request.resource.group}/" + request.resource.version
        return {
            "apiVersion": version or "v1",
            "kind": f"{kind}List",
            "metadata": {"resourceVersion": str(self._version)},
            "items": items,
        }

    @staticmethod
    def _selectors(request) -> tuple[list, list]:
        try:
            return (
                parse_selector(request.params.get("labelSelector")),
                parse_selector(request.params.get("fieldSelector")),
            )
        except ValueError as e:
            raise status_error(400, "BadRequest", str(e)) from None

    async def _serve_watch(self, request):  # type: ignore[override]
        self._info(request.resource)
        labels, fields = self._selectors(request)
        since = int(request.params.get("resourceVersion") or 0)
        timeout = float(request.params.get("timeoutSeconds") or 0) or None
        ends = time.monotonic() + timeout if timeout else None

        def wanted(obj: dict) -> bool:
            meta = obj.get("metadata") or {}
            where = request.namespace is None or meta.get("namespace") == request.namespace
            named = request.name is None or meta.get("name") == request.name
            return (
                where
                and named
                and selected(meta.get("labels") or {}, labels)
                and selected(field_values(obj, fields), fields)
            )

        yield b""  # the headers go now, even while nothing happens
        bus = self._buses[request.resource]
        marker = await bus.mark()
        try:
            for obj in self.items(request.resource, request.namespace):
                if wanted(obj) and int(obj["metadata"]["resourceVersion"]) > since:
                    yield {"type": "ADDED", "object": obj}
            stream = aiter(bus.stream(since=marker))
            while True:
                left = None if ends is None else ends - time.monotonic()
                if left is not None and left <= 0:
                    return
                got = await within(anext(stream), left)
                if got is None:
                    return
                if wanted(got.result()["object"]):
                    yield got.result()
        finally:
            await bus.unmark(marker)

    async def _serve_fetch(self, request):  # type: ignore[override]
        self._info(request.resource)
        obj = self.get(request.resource, request.namespace, request.name)
        if obj is None:
            raise not_found(request.resource, request.name)
        return obj

    async def _serve_create(self, request):  # type: ignore[override]
        obj, res, ns = request.data, request.resource, request.namespace
        if not isinstance(obj, dict):
            raise status_error(400, "BadRequest", "the body of the request is not a JSON object")
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + random_suffix()
        if meta.get("namespace") not in (None, ns):
            raise status_error(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the "
                "request",
            )
        if self.admission is not None:
            self.admission.admit("CREATE", res, ns, obj, None, request.params)
        created = await self.create(res, ns, obj)
        return kmock.Response(status=201, payload=created)

    async def _serve_update(self, request):  # type: ignore[override]
        res, ns, name = request.resource, request.namespace, request.name
        current = self.get(res, ns, name)
        if current is None:
            raise not_found(res, name)
        kind = request.headers.get("Content-Type", "").split(";")[0]
        try:
            if kind == "application/json-patch+json":
                patched = jsonpatch.apply_patch(current, request.data)
            elif kind == "application/merge-patch+json":
                patched = merge_patch(current, request.data)
            elif kind == "application/strategic-merge-patch+json" and not res.group:
                patched = strategic_merge(current, request.data)
            else:
                raise status_error(415, "UnsupportedMediaType", "the body of the request was in "
                                   "an unknown format - accepted media types include: "
                                   "application/json-patch+json, application/merge-patch+json")  # fmt: skip
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
            raise status_error(
                422,
                "Invalid",
                f"the server rejected our request due to an error in our request: {e}",
            ) from None
        if request.subresource == "status":
            patched = {**current, "status": patched.get("status")}
        wanted = (patched.get("metadata") or {}).get("resourceVersion")
        if wanted != current["metadata"]["resourceVersion"]:
            raise status_error(409, "Conflict", f'Operation cannot be fulfilled on {qualified(res)} '
                               f'"{name}": the object has been modified; please apply your '
                               f"changes to the latest version and try again")  # fmt: skip
        for field in ("name", "namespace", "uid", "creationTimestamp"):
            patched["metadata"][field] = current["metadata"].get(field)
        if self.admission is not None:
            self.admission.admit("UPDATE", res, ns, patched, current, request.params)
        return await self.put(res, ns, patched)

    async def _serve_delete(self, request):  # type: ignore[override]
        res, ns, name = request.resource, request.namespace, request.name
        if self.get(res, ns, name) is None:
            raise not_found(res, name)
        body = request.data if isinstance(request.data, dict) else {}
        policy = request.params.get("propagationPolicy") or body.get("propagationPolicy")
        return await self.delete(res, ns, name, policy)

    async def _collection(self, request):
        self._info(request.resource)
        labels, fields = self._selectors(request)
        for obj in self.items(request.resource, request.namespace):
            if selected(obj["metadata"].get("labels") or {}, labels) and selected(
                field_values(obj, fields), fields
            ):
                await self.delete(request.resource, request.namespace, obj["metadata"]["name"])
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
