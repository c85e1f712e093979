"""Text the front ends show the same way: the jobs table and a log line (the CLI prints them,
the magics return them)."""

from __future__ import annotations

from .backends.base import JobInfo, LogLine

JOB_COLUMNS = ("NAME", "STATUS", "NODES", "CREATED", "REASON")


def job_rows(jobs: list[JobInfo]) -> list[tuple[str, ...]]:
    return [
        (j.name, j.status.value, str(j.num_nodes), j.created or "", j.reason or "") for j in jobs
    ]


def jobs_table(jobs: list[JobInfo]) -> str:
    """The jobs as aligned columns, each as wide as its longest value."""
    if not jobs:
        return "no jobs"
    rows = [JOB_COLUMNS, *job_rows(jobs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(JOB_COLUMNS) - 1)]
    lines = []
    for row in rows:
        cells = [
            value.rjust(width) if i == 2 else value.ljust(width)
            for i, (value, width) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def log_text(line: LogLine) -> str:
    """A log line as shown: rank-prefixed; kale_ext.report lines as `step N: loss 0.31`."""
    return line.shown
