"""The kubelet's HTTPS endpoint, where the API server proxies ``pods/log``:
``GET /containerLogs/{namespace}/{pod}/{container}`` with ``follow``, ``tailLines``,
``previous`` and ``limitBytes``, answered from the process kubelet's logs (``podlogs.Log``: one
file per run of a container). As a kubelet: a container that has not started is a 400
(``container "c" in pod "p" is waiting to start: ContainerCreating``), a ``previous`` run that
does not exist is a 400, an unknown pod a 404."""

from __future__ import annotations

import ssl

from aiohttp import web


def _true(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


class LogServer:
    def __init__(self, kubelet, port: int, cert, key, ca):
        self.kubelet, self.port = kubelet, port
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(ca))
        self.context.load_cert_chain(str(cert), str(key))
        self.context.verify_mode = ssl.CERT_OPTIONAL  # the API server shows its client cert
        self.runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self.logs)
        app.router.add_get("/healthz", lambda _: web.Response(text="ok"))
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port, ssl_context=self.context).start()

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def logs(self, request: web.Request) -> web.StreamResponse:
        ns, pod, container = (request.match_info[k] for k in ("namespace", "pod", "container"))
        query = request.query
        logs = self.kubelet.logs_of(ns, pod, container)
        if logs is None:
            raise web.HTTPNotFound(text=f'pod "{pod}" in namespace "{ns}" not found on this node')
        if _true(query.get("previous")):
            if len(logs) < 2:
                raise web.HTTPBadRequest(text=f'previous terminated container "{container}" in '
                                         f'pod "{pod}" not found')  # fmt: skip
            log, follow = logs[-2], False
        else:
            if not logs:
                run = self.kubelet.runs.get((ns, pod))
                c = run.containers.get(container) if run is not None else None
                why = ((c.state if c else {}).get("waiting") or {}).get(
                    "reason", "ContainerCreating"
                )
                raise web.HTTPBadRequest(text=f'container "{container}" in pod "{pod}" is waiting '
                                         f"to start: {why}")  # fmt: skip
            log, follow = logs[-1], _true(query.get("follow"))
        tail = query.get("tailLines")
        start = log.start_of_tail(int(tail)) if tail not in (None, "") else 0
        limit = int(query["limitBytes"]) if query.get("limitBytes") else None
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        sent = 0
        async for chunk in log.read(start, follow):
            if limit is not None:
                chunk = chunk[: max(limit - sent, 0)]
            if chunk:
                await response.write(chunk)
                sent += len(chunk)
            if limit is not None and sent >= limit:
                break
        await response.write_eof()
        return response
