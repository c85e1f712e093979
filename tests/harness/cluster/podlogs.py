"""Container logs: each run of a container writes one log file, and the API server's
``pods/{name}/log`` answers as a kubelet does: the current run's log, or the one before it
(``previous``), its last ``tailLines``, streamed while the container runs with ``follow``.
A container that has not started is a 400 (``... is waiting to start: ContainerCreating``), as
is a ``previous`` log that does not exist or a container the pod does not have."""

from __future__ import annotations

import asyncio
from pathlib import Path

import kmock

from tests.harness.cluster.store import not_found, status_error

CHUNK = 1 << 16


class Log:
    """One container run's log: a file that grows, and followers waiting for more."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        self.size = 0
        self.ended = False
        self.changed = asyncio.Condition()

    async def write(self, data: bytes) -> None:
        with self.path.open("ab") as f:
            f.write(data)
        async with self.changed:
            self.size += len(data)
            self.changed.notify_all()

    async def end(self) -> None:
        async with self.changed:
            self.ended = True
            self.changed.notify_all()

    def start_of_tail(self, lines: int) -> int:
        """Where the last ``lines`` lines begin."""
        data = self.path.read_bytes()[: self.size]
        if lines <= 0:
            return len(data)
        ends = [i for i, b in enumerate(data) if b == 0x0A]
        if ends and ends[-1] == len(data) - 1:
            ends.pop()  # the last line's own newline
        return ends[-lines] + 1 if len(ends) >= lines else 0

    async def read(self, start: int, follow: bool):
        """The bytes from ``start``; with ``follow``, more as they come until the run ends."""
        at = start
        while True:
            if at < self.size:
                with self.path.open("rb") as f:
                    f.seek(at)
                    data = f.read(min(CHUNK, self.size - at))
                at += len(data)
                yield data
                continue
            if not follow or self.ended:
                return
            async with self.changed:
                await self.changed.wait_for(lambda seen=at: self.size > seen or self.ended)


def _true(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


class PodLogs:
    """The ``pods/log`` subresource, from the kubelet's logs."""

    def __init__(self, api, kubelet):
        self.api, self.kubelet = api, kubelet

    async def __call__(self, request):
        ns, name, params = request.namespace, request.name, request.params
        pod = self.api.get("v1/pods", ns, name)
        if pod is None:
            raise not_found(kmock.resource("v1/pods"), name)
        names = [c["name"] for c in pod["spec"]["containers"]]
        container = params.get("container") or (names[0] if len(names) == 1 else None)
        if container is None:
            raise status_error(400, "BadRequest", f"a container name must be specified for pod "
                               f"{name}, choose one of: {names}")  # fmt: skip
        if container not in names:
            raise status_error(
                400, "BadRequest", f"container {container} is not valid for pod {name}"
            )
        run = self.kubelet.runs.get((ns, name))
        logs = run.logs if run is not None else []
        if _true(params.get("previous")):
            if len(logs) < 2:
                raise status_error(400, "BadRequest", f'previous terminated container "{container}" '
                                   f'in pod "{name}" not found')  # fmt: skip
            log, follow = logs[-2], False
        else:
            if not logs:
                statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
                waiting = (statuses[0].get("state") or {}).get("waiting") or {}
                why = waiting.get("reason", "ContainerCreating")
                raise status_error(400, "BadRequest", f'container "{container}" in pod "{name}" is '
                                   f"waiting to start: {why}")  # fmt: skip
            log, follow = logs[-1], _true(params.get("follow"))
        tail = params.get("tailLines")
        start = log.start_of_tail(int(tail)) if tail not in (None, "") else 0

        async def stream():
            yield b""  # the headers go now, before the first line
            async for chunk in log.read(start, follow):
                yield chunk

        return kmock.Response(headers={"Content-Type": "text/plain"}, payload=stream())
