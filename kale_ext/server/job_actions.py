"""REST handlers of a job's actions: POST jobs/{name}/rerun submits it again as recorded
(kale_ext/runs/rerun.py), POST jobs/{name}/resume resumes it from its last checkpoint (a rerun in
its lineage, kale_ext/runs/resume.py), POST jobs/{name}/stop stops it and keeps it
(kale_ext/runs/stop.py)."""

from __future__ import annotations

import os

import tornado.web
from jupyter_server.utils import url_path_join

from .base import ApiError, KaleExtHandler, check_job_name
from .notebooks import NotebookHandler

NAMESPACE = "kale-ext"


def rerun(backend, name: str, body: dict, defaults, root: str | None = None) -> dict:
    from ..runs.rerun import rerun as rerun_job

    job = rerun_job(backend, name, body.get("name"), body.get("parameters"), defaults, root)
    return {"name": job.name, "backend": job.backend, "warnings": job.warnings}


def resume(backend, name: str, body: dict, defaults, root: str | None = None) -> dict:
    from ..runs.resume import resume as resume_job

    job = resume_job(backend, name, body.get("name"), body.get("parameters"), body.get("nodes"),
                     defaults, root)  # fmt: skip
    return {"name": job.name, "backend": job.backend, "warnings": job.warnings}


def stop(backend, name: str) -> dict:
    from ..runs.stop import stop as stop_job
    from ..runs.stop import who_am_i

    # a single-user server: its user stops the job (JupyterHub names the user it runs for)
    return stop_job(backend, name, os.environ.get("JUPYTERHUB_USER") or who_am_i()).to_dict()


class RerunHandler(NotebookHandler):  # its root_dir: the folders a rerun reads lie under it
    fields = ("name", "parameters")
    body = "#/components/schemas/RerunBody"
    action = staticmethod(rerun)

    @tornado.web.authenticated
    async def post(self, name: str):
        from .schema import check

        name = check_job_name(name)
        body = await self.json_body(self.fields) if self.has_body() else {}
        error = check(body, self.body)
        if error is not None:
            raise ApiError(400, str(error), "InvalidBody", field=error.field)
        backend = await self.backend()
        defaults = await self.call(self.app.defaults)
        result = await self.work(self.action, backend, name, body, defaults, self.root_dir())
        base = self.settings.get("base_url", "/")
        self.set_header("Location", url_path_join(base, NAMESPACE, "jobs", result["name"]))
        self.reply(result, 201)


class ResumeHandler(RerunHandler):
    fields = ("name", "parameters", "nodes")
    body = "#/components/schemas/ResumeBody"
    action = staticmethod(resume)


class StopHandler(KaleExtHandler):
    @tornado.web.authenticated
    async def post(self, name: str):
        name = check_job_name(name)
        backend = await self.backend()
        self.reply(await self.call(stop, backend, name))
