"""A sweep's record: one folder per sweep beside the local jobs (``<jobs>/.sweeps/NAME/``) with
``sweep.json`` (its settings and trials, written atomically), the notebook it runs (a snapshot:
every trial runs the same code), the Optuna study (``study.db``) and the driver's log."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..errors import BackendError, NotFound
from ..files import jobs_dir, write_atomic
from ..metrics import format_value
from ..terminal import printable

RECORD = "sweep.json"
NOTEBOOK = "notebook.ipynb"
STUDY = "study.db"
DRIVER_LOG = "driver.log"
CANCEL = "cancel.json"  # a request to cancel the sweep, which its driver honours
#: A trial's states: its job's while it runs; Stopped when the sweep stopped it early; Cancelled
#: when it was stopped with its sweep (a sweep's status is Cancelled too then).
RUNNING, COMPLETE, FAILED, STOPPED, PENDING = "Running", "Complete", "Failed", "Stopped", "Pending"
CANCELLED = "Cancelled"
FINISHED = (COMPLETE, FAILED, STOPPED, CANCELLED)
#: How a job a sweep stopped early reads in every view (its reason starts so).
STOPPED_EARLY = "stopped early"


#: The jobs folder sweeps are recorded beside, when not KALE_EXT_JOBS_DIR's (a server's own).
ROOT: ContextVar[Path | None] = ContextVar("sweeps_root", default=None)


@contextmanager
def using(root: Path | None):
    """Record and read sweeps beside the jobs in ``root`` (None: the default jobs folder)."""
    token = ROOT.set(Path(root) if root else None)
    try:
        yield
    finally:
        ROOT.reset(token)


def jobs_root() -> Path:
    return ROOT.get() or jobs_dir()


def sweeps_dir() -> Path:
    """Where sweeps are recorded: beside the local jobs, hidden from their listing."""
    return jobs_root() / ".sweeps"


def sweep_dir(name: str) -> Path:
    if not name or "/" in name or name.startswith("."):
        raise NotFound(f"no sweep named {name!r}")
    return sweeps_dir() / name


def read(name: str) -> dict:
    """The record of sweep ``name`` (NotFound when there is none)."""
    path = sweep_dir(name) / RECORD
    try:
        from ..files import MAX_RECORD_BYTES, read_json

        return read_json(path, MAX_RECORD_BYTES, inside=path.parent)
    except FileNotFoundError:
        raise NotFound(f"no sweep named {name!r}") from None
    except (OSError, json.JSONDecodeError) as e:
        status = getattr(e, "status", 500)  # UnsafeFile: a FIFO, a device, too large, too deep
        raise BackendError(f"the record of sweep {name} cannot be read: {e}", status) from None


def write(record: dict) -> None:
    write_atomic(sweep_dir(record["name"]) / RECORD, json.dumps(record, indent=2), private=True)


def names() -> list[str]:
    """Every recorded sweep, newest first."""
    if not sweeps_dir().is_dir():
        return []
    found = [p for p in sweeps_dir().iterdir() if (p / RECORD).is_file()]
    return [p.name for p in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)]


def _better(record: dict, a: float, b: float) -> bool:
    return a > b if record.get("goal") == "max" else a < b


def best_trial(record: dict) -> dict | None:
    """The completed trial with the best final metric (the first of equals), or None."""
    best = None
    for trial in record.get("trials", []):
        value = trial.get("metric")
        if trial.get("status") != COMPLETE or value is None or not math.isfinite(value):
            continue
        if best is None or _better(record, value, best["metric"]):
            best = trial
    return best


def ranked(record: dict) -> list[dict]:
    """The trials, best first: those with a final metric by it, then the rest by number."""
    sign = -1 if record.get("goal") == "max" else 1

    def key(t: dict):
        value = t.get("metric")
        has = t.get("status") == COMPLETE and value is not None and math.isfinite(value)
        return (0, sign * value, t["number"]) if has else (1, 0, t["number"])

    return sorted(record.get("trials", []), key=key)


def planned(record: dict) -> int:
    """How many trials the sweep runs in all: every point of a grid, else its max_trials."""
    if record["search"] == "grid":
        return math.prod(len(d.get("values", ())) for d in record["space"])
    return record["max_trials"]


#: A tally's parts as every view words them, in order (`counts` keys, then their words).
TALLY = (("failed", "failed"), ("stopped", "stopped"), ("cancelled", "cancelled"),
         ("not_started", "never started"))  # fmt: skip


def counts(record: dict) -> dict:
    """How many trials are planned, and how many completed, failed, were stopped early, were
    cancelled, run now, and never started (a sweep cancelled or ended before starting them)."""
    by = {s: sum(t.get("status") == s for t in record.get("trials", []))
          for s in (COMPLETE, FAILED, STOPPED, CANCELLED, RUNNING, PENDING)}  # fmt: skip
    total = planned(record)
    return {"planned": total, "complete": by[COMPLETE], "failed": by[FAILED],
            "stopped": by[STOPPED], "cancelled": by[CANCELLED],
            "running": by[RUNNING] + by[PENDING],
            "not_started": max(0, total - len(record.get("trials", [])))}  # fmt: skip


def tally(record: dict) -> str:
    """`10 of 12 complete; 2 failed`: the trials' outcome, every planned one counted (those
    still to start only once the sweep has ended)."""
    n = counts(record)
    parts = [f"{n['complete']} of {n['planned']} complete"]
    if n["running"]:
        parts.append(f"{n['running']} running")
    ended = record.get("status") not in ("Starting", "Running")
    parts += [f"{n[key]} {words}" for key, words in TALLY
              if n[key] and (key != "not_started" or ended)]  # fmt: skip
    return "; ".join(parts)


def summary(record: dict) -> dict:
    """The record as the REST API and ``-o json`` give it: the trials, best first, the best
    named (``best``: its job; each trial's ``best`` true or false), the trials counted
    (``counts``, and ``tally`` in words) and the parameters every trial runs with (``fixed``)."""
    best = best_trial(record)
    trials = [{**t, "best": best is not None and t["number"] == best["number"]}
              for t in ranked(record)]  # fmt: skip
    out = {k: v for k, v in record.items() if k not in ("trials", "options", "driver_started")}
    fixed = (record.get("options") or {}).get("parameters") or {}
    return {**out, "best": best["job"] if best else None, "counts": counts(record),
            "tally": tally(record), "fixed": fixed, "trials": trials}  # fmt: skip


def table(record: dict) -> str:
    """The trial table: best first, the best marked with `*`."""
    data = summary(record)
    metric = record.get("metric")
    params = [d["name"] for d in record.get("space", [])]
    head = ["", "TRIAL", "JOB", "STATUS", *map(printable, params),
            printable((metric or "METRIC").upper()), "REASON"]  # fmt: skip
    rows = [head]
    for t in data["trials"]:
        value = t.get("metric")
        shown = format_value(value) if isinstance(value, (int, float)) else ""
        values = [_param_text(t["parameters"].get(p)) for p in params]
        rows.append([printable(c) for c in (
            "*" if t["best"] else "", str(t["number"]), t.get("job") or "", t["status"],
            *values, shown, t.get("reason") or "")])  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]
             for r in rows]  # fmt: skip
    title = f"sweep {record['name']}: {record.get('status')}"
    reason = data["tally"] if record.get("status") in ("Starting", "Running") else None
    if record.get("reason") or reason:
        title += f" ({record.get('reason') or reason})"
    return "\n".join([printable(title), *(line.rstrip() for line in lines)])


def _param_text(value) -> str:
    return format_value(value) if isinstance(value, float) else json.dumps(value)
