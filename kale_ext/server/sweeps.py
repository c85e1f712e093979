"""REST handlers of sweeps (kale_ext/runs/sweep.py): POST sweeps starts one, GET sweeps lists
them, GET sweeps/{name} gives one with its trials (parameters, status, metric), best first,
DELETE sweeps/{name} cancels one (its running trials stopped and kept)."""

from __future__ import annotations

import json

import tornado.web
from jupyter_server.utils import url_path_join

from .base import ApiError, KaleExtHandler, check_job_name
from .notebooks import NotebookHandler

BODY = "#/components/schemas/SweepBody"
NAMESPACE = "kale-ext"


def start(backend, data, name: str, path: str | None, options, sweep: dict, defaults, root):
    """POST sweeps: check everything, then start the sweep's driver; its summary."""
    from ..runs import record as rec
    from ..runs import sweep as sweeps
    from . import service

    service.load(data, name)  # a NotebookError (422) when it is not a notebook
    content = data if isinstance(data, dict) else json.loads(data)
    chosen = {k: v for k, v in sweep.items() if k != "params"}
    with rec.using(getattr(backend, "jobs_dir", None)):  # beside the server's local jobs
        started = sweeps.start(backend, content, sweep["params"], options, notebook_path=path,
                               place=service.place(root, path), defaults=defaults,
                               **chosen)  # fmt: skip
    return rec.summary(started)


def one(backend, name: str) -> dict:
    from ..runs import record as rec
    from ..runs import sweep as sweeps

    with rec.using(getattr(backend, "jobs_dir", None)):
        return rec.summary(sweeps.get(name))


def cancel(backend, name: str) -> dict:
    from ..runs import record as rec
    from ..runs import sweep as sweeps

    with rec.using(getattr(backend, "jobs_dir", None)):
        return rec.summary(sweeps.cancel(name))


def every(backend) -> list[dict]:
    from ..runs import record as rec
    from ..runs.sweep import listing

    with rec.using(getattr(backend, "jobs_dir", None)):
        return listing()


class SweepsHandler(NotebookHandler):
    """GET the sweeps; POST starts one: a notebook, its options and the sweep."""

    fields = ("path", "notebook", "options", "sweep")

    @tornado.web.authenticated
    async def get(self):
        backend = await self.backend()
        self.reply({"sweeps": await self.call(every, backend)})

    @tornado.web.authenticated
    async def post(self):
        from .schema import check

        body = await self.json_body(self.fields)
        error = check(body, BODY)
        if error is not None:
            raise ApiError(400, str(error), "InvalidBody", field=error.field)
        data, name, path = await self.notebook_of(body)
        backend = await self.backend()
        defaults = await self.call(self.app.defaults)
        root = self.root_dir()
        result = await self.work(start, backend, data, name, path, body.get("options"),
                                 body["sweep"], defaults, root)  # fmt: skip
        base = self.settings.get("base_url", "/")
        self.set_header("Location", url_path_join(base, NAMESPACE, "sweeps", result["name"]))
        self.reply(result, 201)


class SweepHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def get(self, name: str):
        name = check_job_name(name)
        backend = await self.backend()
        self.reply(await self.call(one, backend, name))

    @tornado.web.authenticated
    async def delete(self, name: str):
        name = check_job_name(name)
        backend = await self.backend()
        self.reply(await self.call(cancel, backend, name))
