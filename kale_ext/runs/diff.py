"""What differs between jobs: their definitions as resolved at submit (runtime, image, nodes,
parameters, packages, resources), where they came from (notebook, its and the source's sha256),
a unified diff of the generated function when the source changed, and their final metrics
(each metric's last value, from the lines ``kale_ext.report`` wrote to the logs).

Everything is read back from what the backend recorded: a local job's record, a TrainJob's
``kale-ext.io/*`` annotations and container command.
"""

from __future__ import annotations

import ast
import difflib
import json
from dataclasses import asdict, dataclass, field

from ..backends.base import Backend, Status, lines_left
from ..errors import ConfigError
from ..job.definition import with_defaults
from ..job.trainjob import ANNOTATION, DEFINITION
from ..lineage import step_of
from ..metrics import metric_values, parse_metric
from ..terminal import printable, printable_lines

#: Provenance compared as it is (the notebook, its hashes, the kale_ext that compiled it).
PROVENANCE = ("notebook", "notebook-sha256", "source-sha256", "function", "version")
MAX_JOBS = 10


@dataclass
class JobFacts:
    """One job as the comparison sees it."""

    name: str
    status: str
    fields: dict[str, str]  # "parameters.epochs" -> "3", "image" -> ..., flattened, as text
    metrics: dict[str, float]  # each metric's last value (rank 0's when it reported it)
    source: str | None = field(default=None, repr=False)
    lineage: str | None = None  # `first-x`, `first-x (resumed from first-x, step 12)`
    defaulted: set[str] = field(default_factory=set, repr=False)  # fields left at the default


@dataclass
class Comparison:
    jobs: list[JobFacts]
    differences: list[dict]  # {"field", "values": [one per job, None: not set]}
    metrics: list[dict]  # {"metric", "values": [one per job, None: not reported]}
    source_diffs: list[dict]  # {"from", "to", "diff"}: each job's function against the first's

    def to_dict(self) -> dict:
        jobs = [
            {k: v for k, v in asdict(j).items() if k not in ("source", "defaulted")}
            for j in self.jobs
        ]
        return {
            "jobs": jobs,
            "differences": self.differences,
            "metrics": self.metrics,
            "source_diffs": self.source_diffs,
        }


def _flatten(prefix: str, value, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            _flatten(f"{prefix}.{key}" if prefix else str(key), value[key], out)
    elif isinstance(value, list) and value:
        out[prefix] = ", ".join(
            v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in value
        )
    elif value is not None and value != {}:
        out[prefix] = value if isinstance(value, str) else json.dumps(value)


def parameter_defaults(source: str | None, function: str | None) -> dict[str, str]:
    """The generated function's parameters and their literal defaults, as text (as _flatten
    shows a value): what a job that set none of them ran with."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or (function and node.name != function):
            continue
        a = node.args  # keyword-only, or the notebook's own function's signature as written
        positional = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        pairs = [
            *zip(positional, defaults, strict=True),
            *zip(a.kwonlyargs, a.kw_defaults, strict=True),
        ]
        for arg, default in pairs:
            try:
                value = ast.literal_eval(default) if default is not None else None
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if value is not None:
                _flatten(arg.arg, value, found)
        break
    return found


def final_metrics(backend: Backend, name: str) -> dict[str, float]:
    """Each metric's last value in the job's logs: rank 0's, else the lowest rank's."""
    by_rank: dict[int, dict[str, float]] = {}
    for line in lines_left(backend, name):
        record = parse_metric(line.text)
        if record is None:
            continue
        got = metric_values(record)
        rank = got.rank if got.rank is not None else (line.rank or 0)
        by_rank.setdefault(rank, {}).update(got.values)
    last: dict[str, float] = {}
    for rank in sorted(by_rank, reverse=True):  # the lowest rank's values win
        last.update(by_rank[rank])
    return dict(sorted(last.items()))


def job_facts(backend: Backend, name: str) -> JobFacts:
    info = backend.get_job(name)  # NotFound names the job
    fields: dict[str, str] = {}
    if info.status is Status.UNREADABLE:  # listed with why and how to remove it; nothing else
        fields["unreadable"] = info.reason or ""
        return JobFacts(name=name, status=info.status_text, fields=fields, metrics={}, source=None)
    try:
        definition = json.loads(info.provenance.get(DEFINITION) or "{}")
    except ValueError:
        definition = {}
    if not definition:  # a job submitted before definitions were recorded
        definition = {"runtime": info.runtime, "nodes": info.num_nodes}
        definition["procs_per_node"] = info.procs_per_node
    definition, unset = with_defaults(definition)  # one recorded before a key joined it
    _flatten("", definition, fields)
    for key in PROVENANCE:
        if info.provenance.get(ANNOTATION + key):
            fields[key] = info.provenance[ANNOTATION + key]
    source = backend.job_source(name)
    defaults = parameter_defaults(source, fields.get("function"))
    defaulted = {f"parameters.{k}" for k in defaults} - set(fields) | unset
    fields.update(
        {f"parameters.{k}": v for k, v in defaults.items() if f"parameters.{k}" in defaulted}
    )
    return JobFacts(
        name=name,
        status=info.status_text,
        lineage=_lineage(info),
        fields=dict(sorted(fields.items())),
        metrics=final_metrics(backend, name),
        source=source,
        defaulted=defaulted,
    )


def _lineage(info) -> str:
    """A job's lineage as the comparison shows it: its id, and whom it was resumed from."""
    lineage = info.lineage or info.name
    if info.parent is None:
        return lineage
    step = step_of(info.resume_step)
    return f"{lineage} (resumed from {info.parent}" + (
        f", step {step})" if step is not None else ")"
    )


def _source_diff(a: JobFacts, b: JobFacts) -> str | None:
    if a.source is None or b.source is None or a.source == b.source:
        return None
    lines = difflib.unified_diff(
        a.source.splitlines(keepends=True),
        b.source.splitlines(keepends=True),
        fromfile=f"{a.name}/function.py",
        tofile=f"{b.name}/function.py",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def compare(backend: Backend, names: list[str]) -> Comparison:
    """Compare two or more jobs (each against the first for the source)."""
    names = [n.strip() for n in names if n and n.strip()]
    if not 2 <= len(names) <= MAX_JOBS or len(set(names)) != len(names):
        raise ConfigError(
            "jobs", f"name 2 to {MAX_JOBS} different jobs to compare, got {', '.join(names)!r}"
        )
    jobs = [job_facts(backend, n) for n in names]
    keys = sorted({k for j in jobs for k in j.fields})
    differences = [
        {"field": k, "values": values}
        for k in keys
        if len(set(values := [j.fields.get(k) for j in jobs])) > 1
    ]
    metric_names = sorted({m for j in jobs for m in j.metrics})
    metrics = [{"metric": m, "values": [j.metrics.get(m) for j in jobs]} for m in metric_names]
    source_diffs = [
        {"from": jobs[0].name, "to": j.name, "diff": d}
        for j in jobs[1:]
        if (d := _source_diff(jobs[0], j)) is not None
    ]
    return Comparison(jobs, differences, metrics, source_diffs)


def _shown(key: str, value: str | None, job: JobFacts) -> str:
    """A field's value in the table: `2 (default)` for a parameter the job left as it was, or
    a definition's key it did not record (job/definition.py: DEFAULTS)."""
    if value is None:
        return "-"
    return f"{value} (default)" if key in job.defaulted else value


def comparison_text(c: Comparison) -> str:
    """The comparison as a table: differing fields, final metrics, then the function's diff."""
    from ..metrics import format_value

    header = ["", *(j.name for j in c.jobs)]
    rows = [header, ["status", *(j.status for j in c.jobs)],
            ["lineage", *(j.lineage or "-" for j in c.jobs)]]  # fmt: skip
    for d in c.differences:
        values = zip(d["values"], c.jobs, strict=True)
        rows.append([d["field"], *(_shown(d["field"], v, job) for v, job in values)])
    if c.metrics:
        rows.append(["final metrics", *("" for _ in c.jobs)])
        rows += [
            [f"  {m['metric']}", *("-" if v is None else format_value(v) for v in m["values"])]
            for m in c.metrics
        ]
    rows = [[printable(cell) for cell in row] for row in rows]  # names, values from records
    widths = [min(48, max(len(r[i]) for r in rows)) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    if not c.differences:
        lines.append("(the same definition, notebook and source)")
    for d in c.source_diffs:
        lines += ["", printable_lines(d["diff"].rstrip("\n"))]
    return "\n".join(lines)
