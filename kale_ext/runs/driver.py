"""Runs one sweep: submits its trials as ordinary jobs, at most ``parallel`` at a time, reads
each running trial's ``kale_ext.report`` lines from its logs, feeds them to the study (whose
MedianPruner may stop a trial early) and records every change in the sweep's record.

    python -m kale_ext.runs.driver NAME

It runs detached (its own session), like a local job's supervisor: the command or server that
started it may exit. Started again on a sweep (``kale-ext sweep --resume``), it continues:
trials whose jobs still run are watched again, the study is the same.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..backends.base import (
    CANCELLED_WITH_SWEEP,
    STOPPED_TEXT,
    SUBMIT_INTERRUPTED,
    Backend,
    NotFound,
    Status,
    lines_left,
)
from ..errors import KaleExtError
from ..metrics import metric_values, parse_metric
from . import record as rec
from .search import Study, needs_optuna
from .space import Dimension, Space

#: Seconds between two looks at the running trials.
POLL = 0.2


def _submit_unfinished(info) -> bool:
    """A job its submit did not finish: no record to read, or never started."""
    reason = info.reason or ""
    return info.status is Status.UNREADABLE or reason.startswith(SUBMIT_INTERRUPTED)


def _now() -> str:
    from ..backends.local.records import now

    return now()


def backend_of(record: dict) -> Backend:
    from ..backends.choose import choose_backend
    from ..job.defaults import load

    backend, _ = choose_backend(record["backend"], load(), **record.get("backend_settings", {}))
    return backend


def space_of(record: dict) -> Space:
    dims = []
    for d in record["space"]:
        values = tuple(d.get("values", ()))
        dims.append(Dimension(d["name"], "", values, d["kind"], d.get("low", 0), d.get("high", 0)))
    return Space(tuple(dims))


def planned(record: dict) -> int:
    """How many trials the sweep runs in all: every point of a grid, else its max_trials."""
    return rec.planned(record)


def trial_options(record: dict, entry: dict) -> dict:
    """The options a trial runs with: the sweep's (its fixed parameters among them) with the
    trial's swept values over them, and the trial's name."""
    options = record["options"]
    parameters = {**(options.get("parameters") or {}), **entry["parameters"]}
    return {**options, "parameters": parameters, "name": entry["job"]}


def _step(values, count: int) -> int:
    step = values.step
    return int(step) if step is not None and float(step).is_integer() else count


class Driver:
    def __init__(self, name: str, backend: Backend | None = None):
        self.name = name
        self.folder = rec.sweep_dir(name)
        self.record = rec.read(name)
        self.backend = backend or backend_of(self.record)
        self.study = Study(self.folder, self.record) if needs_optuna(self.record) else None
        self.space = space_of(self.record)
        self.offsets: dict[str, dict[int, int]] = {}
        self.reports: dict[str, int] = {}
        self.compiled = None
        self.snapshot: bytes | None = None
        self.defaults = backend_defaults()

    def save(self) -> None:
        rec.write(self.record)

    # -- starting trials --

    def _start_next(self) -> None:
        number = len(self.record["trials"])
        trial_id, params = None, None
        if self.study is not None:
            trial_id, trial = self.study.ask()
        if self.record["search"] == "grid":
            params = self.space.grid()[number]
        else:
            params = self.space.suggest(trial)
        entry = {"number": number, "job": f"{self.name}-{number}", "parameters": params,
                 "status": rec.PENDING, "metric": None, "step": None, "reason": None,
                 "study_trial": trial_id}  # fmt: skip
        self.record["trials"].append(entry)
        self.save()  # a restarted driver knows the trial, submitted or not
        self._submit(entry)

    def _submit(self, entry: dict) -> None:
        from ..backends.submit import submit

        options = trial_options(self.record, entry)
        try:
            job, workspace = self._compiled()
            submit(self.backend, job, options, self.defaults, workspace=workspace,
                   notebook_path=self.record.get("notebook_path"), place=self._place(),
                   parent_run=(self.record.get("tracking") or {}).get("run_id"),
                   snapshot=self.snapshot)  # fmt: skip
            entry["status"] = rec.RUNNING
        except KaleExtError as e:
            self._finish(entry, rec.FAILED, f"not submitted: {e}")
        self.save()

    def _pending(self, entry: dict) -> None:
        """A trial recorded by a driver stopped before it could record the submit: its job is
        watched if the submit went through; else what the submit made of it (nothing, a folder
        without a record, a job that never started) is deleted, and the trial submitted now."""
        try:
            info = self.backend.get_job(entry["job"])
        except NotFound:
            info = None
        if info is not None and not _submit_unfinished(info):
            entry["status"] = rec.RUNNING
            return
        try:
            self.backend.delete(entry["job"], outputs=True)
        except NotFound:
            pass
        except KaleExtError as e:
            self._finish(entry, rec.FAILED, f"not submitted: what its submit made stays: {e}")
            return
        self._submit(entry)

    def _place(self):
        from ..job.workspace import Place

        folder = self.record.get("folder")
        return Place(Path(folder)) if folder else Place()

    def _compiled(self):
        """The notebook compiled once for every trial, with the workspace it ships."""
        if self.compiled is None:
            from ..backends.submit import prepare
            from ..files import MAX_NOTEBOOK_BYTES, read_bytes

            self.snapshot = read_bytes(self.folder / rec.NOTEBOOK, MAX_NOTEBOOK_BYTES)  # to rerun
            self.compiled = prepare(self.folder / rec.NOTEBOOK, self.record["options"],
                                    self._place())  # fmt: skip
        return self.compiled

    # -- watching trials --

    def _metric(self, entry: dict) -> tuple[float, int] | None:
        """Read the trial's new report lines: its last value of the sweep's metric (rank 0)."""
        metric = self.record.get("metric")
        if not metric:
            return None
        job = entry["job"]
        offsets = self.offsets.setdefault(job, {})
        last = None
        for line in lines_left(self.backend, job, offsets=dict(offsets) or None):
            offsets[line.node] = line.offset
            record = parse_metric(line.text)
            if record is None:
                continue
            values = metric_values(record)
            if values.rank not in (None, 0) or metric not in values.values:
                continue
            count = self.reports[job] = self.reports.get(job, -1) + 1
            last = (values.values[metric], _step(values, count))
            entry["metric"], entry["step"] = last
            if self.study is not None and self._report(entry, *last):
                return last
        return last

    def _report(self, entry: dict, value: float, step: int) -> bool:
        """Feed one intermediate value; stop the trial when the pruner says so."""
        if not self.record.get("early_stop") or entry["study_trial"] is None:
            self.study.report(entry["study_trial"], value, step)
            return False
        if not self.study.report(entry["study_trial"], value, step) or entry.get("not_stopped"):
            return False
        median = self._median(step)
        shown = f" below the median {median:.4g}" if self.record.get("goal") == "max" else (
            f" above the median {median:.4g}")  # fmt: skip
        why = (f"{rec.STOPPED_EARLY}: {self.record['metric']} {value:.4g} at step {step}"
               + (shown if median is not None else ""))  # fmt: skip
        refused = self._stop(entry, why)
        if refused:  # it runs on: say so, and do not ask again at every step
            entry["reason"] = entry["not_stopped"] = f"{why}; its job was not stopped: {refused}"
            return False
        self._finish(entry, rec.STOPPED, why)
        return True

    def _stop(self, entry: dict, why: str) -> str | None:
        """Stop a trial's job: None once it is stopped (or gone), else why the backend refused
        (a cluster whose Kueue Workloads the user may not patch): the trial then still runs,
        and the sweep records why rather than ending."""
        try:
            self.backend.stop(entry["job"], why)
        except NotFound:
            pass
        except KaleExtError as e:
            return str(e)
        return None

    def _median(self, step: int) -> float | None:
        from statistics import median

        done = [t for t in self.study.study.get_trials(deepcopy=False)
                if t.state.name == "COMPLETE" and step in t.intermediate_values]  # fmt: skip
        values = [t.intermediate_values[step] for t in done]
        return median(values) if values else None

    def _finish(self, entry: dict, status: str, reason: str | None = None) -> None:
        entry["status"], entry["reason"] = status, reason or entry.get("not_stopped")
        if self.study is not None and entry["study_trial"] is not None:
            self.study.finish(entry["study_trial"], status, entry.get("metric"))

    def _watch(self, entry: dict) -> None:
        try:
            info = self.backend.get_job(entry["job"])
        except NotFound:
            self._finish(entry, rec.FAILED, "its job was deleted")
            return
        self._metric(entry)
        if entry["status"] == rec.STOPPED or not info.status.finished:
            return
        self._metric(entry)  # lines written just before it ended
        if info.status_text == STOPPED_TEXT:  # stopped by someone (kale-ext stop)
            self._finish(entry, rec.STOPPED, info.reason)
        elif info.status is Status.COMPLETE:
            missing = self.record.get("metric") and entry.get("metric") is None
            if missing and self.study is not None:
                self._finish(entry, rec.FAILED, f"it reported no {self.record['metric']}")
            else:
                self._finish(entry, rec.COMPLETE)
        else:
            self._finish(entry, rec.FAILED, info.reason or "failed")

    # -- the loop --

    def step(self) -> bool:
        """One look at the trials and one start if there is room; False when all is done."""
        for entry in self.record["trials"]:
            if entry["status"] == rec.PENDING:  # a driver stopped between record and submit
                self._pending(entry)
            if entry["status"] == rec.RUNNING:
                self._watch(entry)
        self.save()
        if self._room():
            self._start_next()
            return True
        return any(t["status"] == rec.RUNNING for t in self.record["trials"])

    # -- cancelling --

    def cancel_requested(self) -> bool:
        return (self.folder / rec.CANCEL).exists()

    def cancel(self) -> None:
        """Submit nothing more; stop the trials still running (their jobs kept, reading
        Cancelled) and record the sweep Cancelled."""
        why = f"{CANCELLED_WITH_SWEEP} {self.name}"
        for entry in self.record["trials"]:
            if entry["status"] == rec.RUNNING:
                self._watch(entry)  # it may have ended meanwhile
            if entry["status"] not in (rec.RUNNING, rec.PENDING):
                continue
            refused = self._stop(entry, why)
            if refused:  # still running: the record says so, the other trials are stopped
                entry["reason"] = entry["not_stopped"] = (
                    f"{why}; its job was not stopped: {refused}"
                )
                continue
            self._finish(entry, rec.CANCELLED, why)
        self.record.update(status=rec.CANCELLED, finished=_now())
        running = sum(t["status"] == rec.RUNNING for t in self.record["trials"])
        not_stopped = f" ({running} not stopped: see its reason)" if running else ""
        self.record["reason"] = rec.tally(self.record) + not_stopped
        self.save()

    def run(self) -> int:
        self.record.update(status="Running", reason=None)
        self.save()
        try:
            while True:
                if self.cancel_requested():  # before a step: no trial starts after it
                    self.cancel()
                    self._end_tracking("KILLED")
                    return 0
                if not self.step():
                    break
                if not self._room():
                    time.sleep(POLL)
        except KaleExtError as e:
            self.record.update(status="Failed", finished=_now())
            self.record["reason"] = f"{e}; {rec.tally(self.record)}"
            self.save()
            self._end_tracking("FAILED")
            return 1
        best = rec.best_trial(self.record)
        self.record.update(status="Complete", finished=_now())
        self.record["reason"] = rec.tally(self.record) + (f"; best {best['job']}" if best else "")
        self.save()
        self._end_tracking("FINISHED")
        return 0

    def _end_tracking(self, status: str) -> None:
        """End the sweep's MLflow parent run, when tracking is on (runs/tracking.py)."""
        tracked = self.record.get("tracking") or {}
        if tracked.get("run_id"):
            from .tracking import TrackedRun, end_parent

            end_parent(TrackedRun(tracked["run_id"], tracked["uri"]), status)

    def _room(self) -> bool:
        running = sum(t["status"] == rec.RUNNING for t in self.record["trials"])
        return running < self.record["parallel"] and len(self.record["trials"]) < planned(
            self.record
        )


def backend_defaults():
    from ..job.defaults import load

    return load()


def main(argv: list[str]) -> int:
    return Driver(argv[1]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
