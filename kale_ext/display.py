"""Text the front ends show the same way: the jobs table, one job's status with its failure
summary, and a log line (the CLI prints them, the magics return them)."""

from __future__ import annotations

from .backends.base import STOPPED_TEXT, Failure, JobInfo, JobOutputs, LogLine, Status
from .backends.prune import Pruned
from .job.procs import shape_text
from .lineage import checkpoint_text, lineage_text, step_of
from .progress import Progress, bar, eta_text, percent_text, summary
from .terminal import printable

JOB_COLUMNS = ("NAME", "STATUS", "NODES", "PROGRESS", "ETA", "CREATED", "PARENT", "DISK", "REASON")
#: The PROGRESS column's bar, in characters between its brackets.
TABLE_BAR = 10
#: What `kale-ext jobs --status` filters by: a backend's statuses, and `stalled` (running, quiet).
STATUSES = (*(s.value.lower() for s in Status), "stalled", STOPPED_TEXT.lower())


def job_rows(jobs: list[JobInfo]) -> list[tuple[str, ...]]:
    """A row per job; PROGRESS and ETA read ``-`` unless it runs and has reported progress.
    Every cell is printable (kale_ext/terminal.py): a name or reason from a record may hold
    control characters."""
    return [
        tuple(printable(cell) for cell in (
            j.name, j.status_text, str(j.num_nodes), *progress_cells(j.progress_shown),
            j.created or "", parent_cell(j), disk_text(j.disk_bytes, j.disk_partial),
            j.reason or ""))
        for j in jobs
    ]  # fmt: skip


def disk_text(size: int | None, partial: bool = False) -> str:
    """A job's disk use: `12.0 MiB`, `>= 1.2 GiB` when its count stopped at the bound, `-`
    when unknown (a cluster's job: its files are on volumes only a pod reads)."""
    from .job.workspace import size_text

    if size is None:
        return "-"
    return (">= " if partial else "") + size_text(size)


def parent_cell(info: JobInfo) -> str:
    """The PARENT cell: the job it was resumed from and the step (``first-x (step 12)``), or
    ``-``."""
    if info.parent is None:
        return "-"
    step = step_of(info.resume_step)
    return info.parent + (f" (step {step})" if step is not None else "")


def lineage_line(info: JobInfo) -> str | None:
    """``resumed from parent-x (lineage L), from step 12`` (kale_ext/lineage.py), or None for a
    job of its own lineage."""
    return lineage_text(info.name, info.lineage or info.name, info.parent, info.resume_step)


def progress_cells(progress: Progress | None) -> tuple[str, str]:
    """The PROGRESS and ETA cells: ``[####------]  45%`` and ``1m 05s``, or ``-``."""
    if progress is None:
        return "-", "-"
    shown = f"{bar(progress.percent, TABLE_BAR)} {percent_text(progress):>5}"
    return shown, eta_text(progress.eta_seconds)


def progress_line(info: JobInfo) -> str | None:
    """How far a job is, as ``status`` shows it: a bar with percent, counts and ETA while it
    runs; how far it got once it ended (no bar, no ETA); None when it never reported."""
    if info.progress_shown is not None:
        return f"progress      {bar(info.progress.percent)} {summary(info.progress)}"
    if info.progress is not None and info.status.finished:
        return f"progress      reached {summary(info.progress, eta=False)}"
    return None


def select_jobs(jobs: list[JobInfo], status: str | None) -> list[JobInfo]:
    """The jobs in ``status`` (one of STATUSES; `running` includes the stalled ones)."""
    if status is None:
        return jobs
    if status == "stalled":
        return [j for j in jobs if j.status is Status.RUNNING and j.stalled_after is not None]
    stopped = STOPPED_TEXT.lower()  # someone stopped it: not among the failed
    return [j for j in jobs if (stopped if j.status_text == STOPPED_TEXT else
                                j.status.value.lower()) == status]  # fmt: skip


def failure_lines(failure: Failure, tail: bool = True) -> list[str]:
    """A failure summary on one screen: who failed first, where and why, the last lines
    (unless ``tail`` is False: a view that shows the logs anyway)."""
    who = f"node {failure.node}" if failure.node is not None else "a node"
    rank = f", rank {failure.rank}" if failure.rank is not None else ""
    lines = [f"failed first  {who}{rank}"]
    if failure.cell_index is not None:
        cell = f'cell {failure.cell_index + 1} ("{failure.cell_label}"), line {failure.line}'
        lines.append(
            f"where         {cell}" + (f" (cell id {failure.cell_id})" if failure.cell_id else "")
        )
    for label, value in (
        ("error", failure.exception),
        ("reason", failure.reason),
        ("ended", _ending(failure)),
    ):
        if value:
            lines.append(f"{label:<14}{value}")
    if failure.log_tail and tail:
        whose = f"rank {failure.rank}" if failure.rank is not None else who
        lines.append(f"last {len(failure.log_tail)} line(s) of {whose}:")
        lines += [f"  {text}" for text in failure.log_tail]
    return [printable(line) for line in lines]


def _ending(failure: Failure) -> str | None:
    if failure.signal:
        return (
            failure.signal if failure.signal.startswith("killed") else f"killed by {failure.signal}"
        )
    return f"exit code {failure.exit_code}" if failure.exit_code is not None else None


def job_status(info: JobInfo) -> str:
    """One job's status as `kale-ext status NAME` and `%kale_status NAME` show it."""
    shape = shape_text(info.num_nodes, info.procs_per_node)
    if info.procs_why:
        shape += f" ({info.procs_why})"
    where = ", ".join(x for x in (info.backend, info.runtime, shape) if x)
    lines = [f"{info.name}: {info.status_text} ({where})"]
    times = [f"{k} {v}" for k, v in (("created", info.created), ("finished", info.finished)) if v]
    if info.last_output and not info.finished:
        times.append(f"last output {info.last_output}")
    if times:
        lines.append(", ".join(times))
    if (lineage := lineage_line(info)) is not None:
        lines.append(f"lineage       {lineage}")
    if (progress := progress_line(info)) is not None:
        lines.append(progress)
    if info.checkpoint is not None:  # "checkpoint: step 12, 3 min ago"
        lines.append(checkpoint_text(info.checkpoint).replace(": ", "    ", 1))
    if info.trainer_metrics:
        shown = ", ".join(f"{k} {v}" for k, v in info.trainer_metrics.items())
        lines.append(f"trainer       {shown}")
    if info.failure is not None:
        lines.append(info.failure.summary)
        lines += failure_lines(info.failure)
    elif info.reason:
        lines.append(info.reason)
    nodes = [
        f"node {n.index} {n.state}" + (f": {n.reason}" if n.reason else "") for n in info.nodes
    ]
    if nodes and info.failure is None:
        lines += nodes
    return "\n".join(printable(line) for line in lines)


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


def pruned_table(done: list[Pruned], dry_run: bool) -> str:
    """What a prune removed (or, ``dry_run``, would remove): name, status, age, disk, and what
    became of each job's outputs."""
    if not done:
        return "no finished job to prune"
    rows = [("NAME", "STATUS", "AGE", "DISK", "OUTPUTS" if not dry_run else "")]
    for p in done:
        note = "" if dry_run else (p.note or ("" if p.deleted else "left"))
        rows.append(tuple(printable(c) for c in (
            p.name, p.status, age_text(p.age_seconds), disk_text(p.disk_bytes, p.disk_partial),
            note)))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join([*(v.ljust(w) for v, w in zip(row, widths, strict=False)), row[4]]).rstrip()
             for row in rows]  # fmt: skip
    from .job.workspace import size_text

    counted = [p for p in done if dry_run or p.deleted]
    sizes = [p.disk_bytes for p in counted if p.disk_bytes is not None]
    size = f", {size_text(sum(sizes))}" if sizes else ""  # a cluster's: unknown here
    if dry_run:
        lines.append(f"would remove {len(done)} job(s){size} (a dry run: nothing removed)")
    else:
        lines.append(
            f"removed {len(counted)} of {len(done)} job(s){size and ', freeing' + size[1:]}"
        )
    return "\n".join(lines)


def age_text(seconds: float) -> str:
    """`3d 4h`, `2h 05m`, `12m`, `40s`: how long ago a job finished."""
    s = int(seconds)
    if s >= 86400:
        return f"{s // 86400}d {s % 86400 // 3600}h"
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 60}m" if s >= 60 else f"{s}s"


def log_text(line: LogLine, raw: bool = False) -> str:
    """A log line as shown: rank-prefixed; kale_ext.report lines as `step N: loss 0.31`; its
    control characters escaped unless ``raw`` (what the job wrote, colours and all: where the
    user asked for it, `kale-ext logs --raw`, or where no terminal reads it)."""
    return line.shown if raw else printable(line.shown)


def outputs_text(found: JobOutputs) -> str:
    """A job's outputs: where they are, each file with its size, and what to know."""
    from .job.workspace import size_text

    lines = [printable(found.location or "(no outputs location)")]
    paths = [printable(f.path) for f in found.files]
    width = max(map(len, paths), default=0)
    sizes = [size_text(f.size) for f in found.files]
    lines += [f"  {p.ljust(width)}  {s:>9}" for p, s in zip(paths, sizes, strict=True)]
    if not found.files and found.location and found.listed:
        lines.append("  (no files)")
    return "\n".join(lines + ([printable(found.note)] if found.note else []))
