"""Start, resume and read sweeps: many runs of one notebook over a space of its parameters.

Every check happens before anything is created (the space against the parameters cell, the
search against what is installed, the job options and the trials' names through a preview);
then the sweep's record is written and its driver (driver.py) started, detached.
Each trial is an ordinary job named ``<sweep>-<number>``, labelled ``kale-ext.io/sweep``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..backends.base import SWEEP_LABEL, Backend
from ..errors import BackendError, ConfigError
from ..files import MAX_RECORD_BYTES, read_json
from ..job.spec import check_name, generate_name
from . import record as rec
from .search import SEARCHES, needs_optuna, require_optuna
from .space import parse_space

#: Bounds of a sweep (the REST schema publishes them).
MAX_TRIALS = 1_000
MAX_PARALLEL = 64
#: The longest sweep name: its trials' job names (`<sweep>-<number>`) stay valid.
MAX_NAME = 36
GOALS = ("min", "max")
DRIVER = "driver.json"  # the driver's process: pid and start time


def _count(value, field: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ConfigError(field, f"must be a whole number from 1 to {most}, got {value!r}")
    return value


def settings(search: str, trials, parallel, metric, goal, early_stop: bool) -> dict:
    """The sweep's checked choices (ConfigError naming the first bad one)."""
    if search not in SEARCHES:
        raise ConfigError("search", f"must be one of {', '.join(SEARCHES)}, not {search!r}")
    parallel = _count(parallel, "parallel", MAX_PARALLEL)
    if search != "grid":
        if trials is None:
            raise ConfigError("trials", f"a {search} search needs a number of trials")
        trials = _count(trials, "trials", MAX_TRIALS)
    if (search != "grid" or early_stop) and not metric:
        why = "early stopping" if search == "grid" else f"a {search} search"
        raise ConfigError("metric", f"{why} needs the metric to go by (--metric NAME)")
    if metric is not None and (not isinstance(metric, str) or not metric.strip()):
        raise ConfigError("metric", f"must be a metric's name, not {metric!r}")
    if goal is None and metric:
        from ..metrics import lower_is_better

        goal = "min" if lower_is_better(metric) else "max"
    if goal is not None and goal not in GOALS:
        raise ConfigError("goal", f"must be min or max, not {goal!r}")
    if search != "grid":
        require_optuna(f"a {search} search")
    if early_stop:
        require_optuna("early stopping")
    return {"search": search, "max_trials": trials, "parallel": parallel, "metric": metric,
            "goal": goal, "early_stop": bool(early_stop)}  # fmt: skip


def _snapshot(notebook) -> bytes:
    if isinstance(notebook, (str, os.PathLike)):
        return Path(notebook).read_bytes()
    return notebook if isinstance(notebook, bytes) else json.dumps(notebook).encode()


def _name(name: str | None, notebook_path: str | None) -> str:
    if name is None:
        stem = Path(notebook_path).stem if notebook_path else "sweep"
        return generate_name(stem, MAX_NAME)
    name = check_name(name, MAX_NAME)
    if (rec.sweep_dir(name) / rec.RECORD).exists():
        raise ConfigError("name", f"a sweep named {name} exists already")
    return name


def base_options(options: dict | None, specs: dict, name: str | None) -> tuple[dict, str | None]:
    """The options every trial runs with, and the sweep's name: the parameters set but not
    swept stay (each trial runs with them), the swept ones go; a name among the options (the
    one a preview showed) names the sweep."""
    options = dict(options or {})
    given = options.pop("name", None)
    if given is not None and name is not None and given != name:
        raise ConfigError("name", f"the sweep is named {name}, its options name {given}: "
                          "give one name")  # fmt: skip
    fixed = {k: v for k, v in (options.pop("parameters", None) or {}).items() if k not in specs}
    if fixed:
        options["parameters"] = fixed
    return options, name if name is not None else given


def _labelled(options: dict | None, name: str) -> dict:
    options = dict(options or {})
    config = dict(options.get("config") or {})
    config["labels"] = {**(config.get("labels") or {}), SWEEP_LABEL: name}
    return {**options, "config": config}


def _backend_settings(backend: Backend) -> dict:
    out = {}
    if backend.name == "local":
        out["jobs_dir"] = str(Path(backend.jobs_dir).resolve())
        out["allow_cpu_for_gpu"] = bool(getattr(backend, "allow_cpu_for_gpu", False)) or None
    elif isinstance(getattr(backend, "namespace", None), str):
        out["namespace"] = backend.namespace
    return {k: v for k, v in out.items() if v is not None}


def start(backend: Backend, notebook, specs: dict, options: dict | None = None, *,
          search: str = "grid", trials: int | None = None, parallel: int = 1,
          seed: int | None = None, metric: str | None = None, goal: str | None = None,
          early_stop: bool = False, prune_after: int = 2, name: str | None = None,
          notebook_path: str | None = None, place=None, defaults=None) -> dict:  # fmt: skip
    """Check everything, record the sweep and start its driver; its record."""
    from ..backends.submit import place_of, prepare, preview

    chosen = settings(search, trials, parallel, metric, goal, early_stop)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError("seed", f"must be a whole number, not {seed!r}")
    prune_after = _count(prune_after, "prune_after", MAX_TRIALS)
    notebook_path = notebook_path or (str(notebook) if isinstance(notebook, os.PathLike) else None)
    place = place or place_of(notebook)
    options, name = base_options(options, specs, name)
    job, workspace = prepare(notebook, options, place)
    space = parse_space(job.parameters, specs)
    first = space.grid(limit=MAX_TRIALS)[0] if search == "grid" else {}
    name = _name(name, notebook_path)
    labelled = _labelled(options, name)
    fixed = labelled.get("parameters") or {}
    probe = {**labelled, "parameters": {**fixed, **first}, "name": f"{name}-{MAX_TRIALS - 1}"}
    preview(backend, job, probe, defaults, notebook_path, place, workspace)  # the options' checks
    record = {
        "name": name,
        "status": "Starting",
        "reason": None,
        "created": _now(),
        "finished": None,
        "backend": backend.name,
        "backend_settings": _backend_settings(backend),
        "notebook_path": notebook_path,
        "folder": str(place.folder) if place.folder else None,
        "options": labelled,
        "space": space.to_dict(),
        "specs": {k: v for k, v in specs.items()},
        **chosen,
        "seed": seed,
        "prune_after": prune_after,
        "trials": [],
    }
    from .tracking import start_parent

    parent = start_parent(name, notebook_path or name, dict(specs), defaults)  # tracking on
    record["tracking"] = {"run_id": parent.run_id, "uri": parent.uri, "warnings": parent.warnings}
    folder = rec.sweep_dir(name)
    folder.mkdir(parents=True)
    (folder / rec.NOTEBOOK).write_bytes(_snapshot(notebook))
    rec.write(record)
    return start_driver(name)


def _now() -> str:
    from ..backends.local.records import now

    return now()


def driver_running(name: str) -> bool:
    """Whether the sweep's driver process runs (driver.json: its pid and start time)."""
    from ..backends.local.processes import runs

    try:
        me = read_json(rec.sweep_dir(name) / DRIVER, MAX_RECORD_BYTES)
    except (OSError, ValueError):
        return False
    return runs(me.get("pid"), me.get("started"))


def start_driver(name: str) -> dict:
    """Start the sweep's driver, detached; the sweep's record."""
    from ..backends.local.processes import start_time
    from ..files import write_atomic

    folder = rec.sweep_dir(name)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "KALE_EXT_JOBS_DIR": str(rec.jobs_root().resolve()),
           "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}  # fmt: skip
    with open(folder / rec.DRIVER_LOG, "ab") as log:
        driver = subprocess.Popen(
            [sys.executable, "-m", "kale_ext.runs.driver", name],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, env=env,
        )  # fmt: skip
    threading.Thread(target=driver.wait, daemon=True).start()  # reap it when it ends
    me = {"pid": driver.pid, "started": start_time(driver.pid)}
    write_atomic(folder / DRIVER, json.dumps(me))
    return rec.read(name)


def get(name: str) -> dict:
    """The sweep's record; one whose driver is gone before it finished reads Interrupted."""
    record = rec.read(name)
    if record.get("status") in ("Starting", "Running") and not driver_running(name):
        record = rec.read(name)  # it may have recorded its end, then exited
        if record.get("status") in ("Starting", "Running") and not driver_running(name):
            record.update(status="Interrupted",
                          reason=f"its driver stopped: kale-ext sweep --resume {name}")  # fmt: skip
    return record


#: Seconds a cancel waits for the driver to stop the trials, before doing so itself.
CANCEL_WAIT = 120.0


def cancel(name: str, timeout: float = CANCEL_WAIT) -> dict:
    """Cancel a sweep: its driver starts no more trials and stops the running ones (their jobs
    kept, reading Cancelled); the sweep reads Cancelled. A sweep whose driver is gone (or does
    not answer within ``timeout`` seconds) is cancelled here. Its record."""
    import signal

    from ..backends.local.processes import kill
    from ..files import write_atomic

    record = get(name)
    if record["status"] == rec.CANCELLED:
        return record
    if record["status"] not in ("Starting", "Running", "Interrupted"):
        raise BackendError(f"sweep {name} has ended already ({record['status']}): there is "
                           "nothing to cancel", 409, "Conflict")  # fmt: skip
    write_atomic(rec.sweep_dir(name) / rec.CANCEL, json.dumps({"requested": _now()}))
    deadline = time.monotonic() + timeout
    while driver_running(name) and time.monotonic() < deadline:
        time.sleep(0.1)
    if driver_running(name):  # it does not answer: stop it, then do its part here
        kill(json.loads((rec.sweep_dir(name) / DRIVER).read_text())["pid"], signal.SIGKILL)
    if rec.read(name)["status"] in ("Starting", "Running"):  # it never got to it
        from .driver import Driver

        Driver(name).cancel()
    return get(name)


def resume(name: str) -> dict:
    """Continue a sweep whose driver stopped (a restart, a kill): the same study and trials."""
    record = get(name)
    if driver_running(name):
        raise ConfigError("resume", f"sweep {name} is running already")
    if record.get("status") in ("Complete", "Failed") and not _more(record):
        raise ConfigError("resume", f"sweep {name} is finished already ({record['status']})")
    if needs_optuna(record):
        require_optuna("this sweep")
    record.update(status="Starting", finished=None)
    (rec.sweep_dir(name) / rec.CANCEL).unlink(missing_ok=True)  # a cancelled sweep goes on
    rec.write(record)
    return start_driver(name)


def _more(record: dict) -> bool:
    from .driver import planned

    return len(record.get("trials", [])) < planned(record)


def listing() -> list[dict]:
    """Every sweep's summary, newest first."""
    out = []
    for name in rec.names():
        try:
            out.append(rec.summary(get(name)))
        except ConfigError:
            continue
    return out
