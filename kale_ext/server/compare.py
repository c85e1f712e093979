"""GET kale-ext/diff?jobs=a,b[,c...]: what differs between jobs, and their final metrics
(kale_ext/runs/diff.py), for the panel's side-by-side view."""

from __future__ import annotations

import tornado.web

from .base import ApiError, KaleExtHandler, check_job_name


def comparison(backend, names: list[str]) -> dict:
    from ..runs.diff import compare

    return compare(backend, names).to_dict()


class DiffHandler(KaleExtHandler):
    params = {"GET": frozenset({"jobs"})}

    @tornado.web.authenticated
    async def get(self):
        given = self.query_arg("jobs")
        if not given:
            raise ApiError(400, "give the jobs to compare: ?jobs=NAME,NAME[,...]", field="jobs")
        names = [check_job_name(n.strip()) for n in given.split(",")]
        backend = await self.backend()
        self.reply(await self.call(comparison, backend, names))
