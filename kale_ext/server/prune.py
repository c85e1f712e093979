"""REST handler of POST jobs/prune: remove finished jobs older than an age (kale-ext prune,
kale_ext/backends/prune.py), or list them (``dry_run``). Its path is a job's path too: GET and
DELETE jobs/prune are those of the job named `prune`, as for any other name (handlers.py)."""

from __future__ import annotations

import tornado.web

from .base import ApiError, KaleExtHandler

BODY = "#/components/schemas/PruneBody"
FIELDS = ("older_than", "statuses", "dry_run", "outputs")


def prune(backend, body: dict) -> dict:
    from ..backends.prune import STATUSES, parse_age, parse_statuses
    from ..backends.prune import prune as prune_jobs

    older_than = parse_age(body["older_than"], "older_than")
    statuses = parse_statuses(body.get("statuses", list(STATUSES)), "statuses")
    dry_run, outputs = body.get("dry_run", False), body.get("outputs", False)
    done = prune_jobs(backend, older_than, statuses, dry_run, outputs)
    return {"dry_run": dry_run, "jobs": [p.to_dict() for p in done]}


class PruneJobs(KaleExtHandler):
    """POST jobs/prune (handlers.PruneHandler adds GET and DELETE: the job named prune's)."""

    @tornado.web.authenticated
    async def post(self):
        from .schema import check

        body = await self.json_body(FIELDS)
        if "older_than" not in body:  # the schema's `required` would name the body
            raise ApiError(400, "older_than: is required: an age such as 7d, 12h or 0s",
                           "InvalidBody", field="older_than")  # fmt: skip
        error = check(body, BODY)
        if error is not None:
            raise ApiError(400, str(error), "InvalidBody", field=error.field)
        backend = await self.backend()
        self.reply(await self.work(prune, backend, body))
