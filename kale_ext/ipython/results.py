"""What the magics return: objects that display themselves (Markdown or HTML in a notebook,
plain text in a terminal)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..display import JOB_COLUMNS, job_rows, job_status, jobs_table

if TYPE_CHECKING:
    from ..backends.base import JobInfo
    from ..job.preview import Preview


@dataclass
class DryRun:
    """What a job would be: its summary, its function's source and its TrainJob (Markdown in a
    notebook, plain text in a terminal)."""

    preview: Preview
    warnings: list[str] = field(default_factory=list)

    # the job's facts, for code that reads a dry run
    name = property(lambda self: self.preview.spec.name)
    runtime = property(lambda self: self.preview.spec.runtime.name)
    shape = property(lambda self: self.preview.shape)
    function_name = property(lambda self: self.preview.spec.job.function_name)
    source = property(lambda self: self.preview.spec.job.source)
    yaml = property(lambda self: self.preview.yaml)
    packages = property(lambda self: self.preview.spec.requirements)

    @property
    def parameters(self) -> dict:
        return {**self.preview.spec.job.parameters, **self.preview.spec.func_args}

    def _head(self) -> list[str]:
        spec = self.preview.spec
        head = f"dry run: {spec.name} on {spec.runtime.name}, {self.preview.shape}"
        return [head, *self.preview.summary()[2:], *(f"warning: {w}" for w in self.warnings)]

    def _repr_markdown_(self) -> str:
        fence = "````"
        spec = self.preview.spec
        head = "\n".join(f"- {line}" for line in self._head()[1:])
        where = f"job `{spec.name}` on `{spec.runtime.name}`, {self.preview.shape}"
        return (
            f"**kale_ext dry run** — {where}\n\n"
            f"{head}\n\n**Function** `{spec.job.function_name}`\n\n{fence}python\n"
            f"{spec.job.source}\n{fence}\n\n**TrainJob**\n\n{fence}yaml\n{self.preview.yaml}{fence}\n"
        )

    def __str__(self) -> str:
        rule = "-" * 72
        source, yaml = self.preview.spec.job.source, self.preview.yaml.rstrip("\n")
        return "\n".join([*self._head(), rule, source, rule, yaml])

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


class JobTable(list):
    """Jobs, shown as a table (HTML in a notebook, text in a terminal)."""

    def __str__(self) -> str:
        return jobs_table(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        import html

        if not self:
            return "<p>no jobs</p>"
        head = "".join(f"<th>{c.lower()}</th>" for c in JOB_COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
            for row in job_rows(self)
        )
        return f'<table class="kale-ext-jobs"><tr>{head}</tr>{body}</table>'


@dataclass
class JobStatus:
    """One job's status, with its failure summary (plain text; preformatted in a notebook)."""

    info: JobInfo

    def __str__(self) -> str:
        return job_status(self.info)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        import html

        return f'<pre class="kale-ext-status">{html.escape(str(self))}</pre>'
