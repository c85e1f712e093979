"""Checkpoints in a job, one line each: resume where the last run of the job's lineage stopped.

    from kale_ext import checkpoint
    state = checkpoint.latest()              # None on a first run
    start = state["epoch"] + 1 if state else 0
    ...
    checkpoint.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "epoch": epoch}, step=epoch)
    checkpoint.on_stop(lambda: checkpoint.save(current_state(), step=epoch))

The folder is ``KALE_EXT_CHECKPOINT_DIR``, which the backends set per lineage (the job and the
jobs resumed from it), not per job: locally under the jobs folder or the folder given with
``--checkpoints``, on a cluster on the outputs volume or ``--checkpoints pvc:NAME[:/path]``.
Without it (a notebook run by hand) nothing is kept: ``latest()`` is None and ``save()`` keeps
nothing, saying so once.

- ``save(state, step)``: rank 0 writes ``step-<step>.pt`` (``torch.save``; a job that never
  imported torch saves plain values as JSON) to a temporary file, fsyncs it and renames it,
  then writes the small manifest (:data:`MANIFEST`: the step, the file, the time, the run, the
  files kept) the same way; the other ranks return at once (so ``if rank == 0: save(...)``
  works too: no rank waits for another). The last ``KALE_EXT_KEEP_CHECKPOINTS`` (default
  :data:`KEEP`) saves are kept, and the one the running job resumed from. A crash mid-save
  leaves the previous checkpoint the latest. Each save reports ``checkpoint_step`` as
  ``report()`` does, for the views' "checkpoint: step 12, 3 min ago".
- ``latest()``: the state the job resumes from (tensors on the CPU, loaded with
  ``weights_only=True``), or None: the last checkpoint saved by an earlier job or attempt of
  the lineage (a run: :data:`RUN_ENV` and :data:`RESTART_ENV`), never one this run saved, so
  every rank gets the same one however late it asks, with or without torch.distributed.
- ``on_stop(fn)``: ``fn()`` runs when the job is stopped (SIGTERM: Stop, a preemption), within
  the grace period the backends give (:data:`STOP_GRACE`); then the process exits (128 + 15).

In a compiled job the import is replaced by :func:`_kale_ext_checkpoint`'s source (standard
library only, torch imported only when the job has it), so the training image needs no
kale_ext; this module's :func:`latest`, :func:`save` and :func:`on_stop` are the same for code
that imports kale_ext.
"""

from __future__ import annotations

import os
from typing import Any

DIR_ENV = "KALE_EXT_CHECKPOINT_DIR"
KEEP_ENV = "KALE_EXT_KEEP_CHECKPOINTS"
#: The job (set with the folder) and its attempt (a restarted job's, "0" first): a run. What a
#: run saves is not what it resumes from, so every rank's latest() is the same, however late
#: it asks.
RUN_ENV = "KALE_EXT_CHECKPOINT_RUN"
RESTART_ENV = "KALE_EXT_RESTART"
#: Saves kept by default, and the most a job may keep (the ``keep_checkpoints`` option's bound).
KEEP = 2
MAX_KEEP = 100
#: The manifest's name in the folder: which save is the latest.
MANIFEST = "latest.json"
#: Seconds a stopped job's processes get to run their on_stop handlers before they are killed
#: (locally the supervisor's wait after SIGTERM; on a cluster terminationGracePeriodSeconds).
STOP_GRACE = 30

#: What the embedded code needs, as data (a compiled job carries it with the source).
SETTINGS = {
    "dir_env": DIR_ENV,
    "keep_env": KEEP_ENV,
    "run_env": RUN_ENV,
    "restart_env": RESTART_ENV,
    "keep": KEEP,
    "max_keep": MAX_KEEP,
    "manifest": MANIFEST,
    "max_manifest": 1 << 20,  # bytes: a manifest is a few hundred
    "stale_seconds": 3600,  # an unfinished save's temporary file older than this is removed
}


def _kale_ext_checkpoint(environ, settings, report):  # kale_ext: checkpoints in the job
    """The ``checkpoint`` namespace of a job (latest, save, on_stop, directory): see
    kale_ext/checkpoint.py. ``report`` is report()'s function: each save reports
    ``checkpoint_step`` through it."""
    import json
    import os
    import re
    import signal
    import sys
    import time
    import types

    folder = environ.get(settings["dir_env"]) or None
    job = environ.get(settings["run_env"])  # this run: the job and its attempt, or None
    run = f"{job}#{environ.get(settings['restart_env']) or 0}" if job else None
    said = set()
    handlers = []
    stopping = []  # set once the on_stop handlers run

    def say(what):
        if what not in said:
            said.add(what)
            print(f"kale_ext: checkpoint: {what}", file=sys.stderr, flush=True)

    keep = settings["keep"]
    asked = environ.get(settings["keep_env"])
    if asked:
        try:
            keep = int(asked)
        except ValueError:
            keep = 0
        if not 1 <= keep <= settings["max_keep"]:
            raise ValueError(f"{settings['keep_env']}={asked!r}: keep 1 to "
                             f"{settings['max_keep']} checkpoints")  # fmt: skip
    saved_name = re.compile(r"^step-(\d{9,})\.(pt|json)$")
    unfinished = re.compile(rf"^\.(step-\d{{9,}}\.(pt|json)|{re.escape(settings['manifest'])})"
                            r"\.tmp-\d+$")  # fmt: skip

    def rank():
        torch = sys.modules.get("torch")
        dist = getattr(torch, "distributed", None)
        try:
            if dist is not None and dist.is_initialized():
                return dist.get_rank()
        except Exception:
            pass
        try:
            return int(environ.get("RANK") or 0)
        except ValueError:
            return 0

    def off():
        say(f"{settings['dir_env']} is not set (not in a job): nothing is kept or resumed")

    def sync_folder():
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def write(name, put):
        """``name`` in the folder, whole or not at all: a temporary file, fsync, rename."""
        temporary = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
        try:
            with open(temporary, "wb") as f:
                put(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, os.path.join(folder, name))
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        sync_folder()

    def manifest():
        path = os.path.join(folder, settings["manifest"])
        try:
            with open(path, "rb") as f:
                data = f.read(settings["max_manifest"] + 1)
        except FileNotFoundError:
            return None
        try:
            if len(data) > settings["max_manifest"]:
                raise ValueError("too large")
            entry = json.loads(data)
            if not isinstance(entry, dict) or not saved_name.match(str(entry.get("file"))):
                raise ValueError("no checkpoint file named")
            if not isinstance(entry.get("saved"), list):
                raise ValueError("no list of saved checkpoints")
        except ValueError as e:
            raise RuntimeError(f"kale_ext: {path} is not a checkpoint manifest ({e}): remove it "
                               "to start again from scratch") from None  # fmt: skip
        return entry

    def load(path):
        if path.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        import torch

        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:
            raise RuntimeError(f"kale_ext: cannot load the checkpoint {path} (weights_only: "
                               f"tensors and plain values only): {e}") from e  # fmt: skip

    def resumed_from(entry):
        """The save this run resumes from: the last one of an earlier run (job or attempt)."""
        if entry is None or run is None or entry.get("run") != run:
            return entry
        earlier = [s for s in entry["saved"] if isinstance(s, dict) and s.get("run") != run]
        return earlier[-1] if earlier and saved_name.match(str(earlier[-1].get("file"))) else None

    def latest():
        """The state this run resumes from (tensors on the CPU), or None: the last saved by an
        earlier job or attempt of the lineage, the same for every rank whenever it asks."""
        if folder is None:
            off()
            return None
        entry = resumed_from(manifest())
        return None if entry is None else load(os.path.join(folder, entry["file"]))

    def save(state, step):
        """Keep ``state`` (a dict of tensors and plain values) as the checkpoint of ``step``
        (a whole number of 0 or more): rank 0 writes it, the others return at once."""
        if not isinstance(state, dict):
            raise TypeError(f"checkpoint.save: state must be a dict, not {type(state).__name__}")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"checkpoint.save: step must be a whole number of 0 or more, "
                             f"not {step!r}")  # fmt: skip
        if folder is None:
            off()
            return None
        if rank() != 0:
            return None
        path = keep_one(state, step)
        report(step=step, checkpoint_step=step)
        return path

    def keep_one(state, step):
        os.makedirs(folder, exist_ok=True)
        torch = sys.modules.get("torch")
        if torch is not None:
            name = f"step-{step:09d}.pt"
            write(name, lambda f: torch.save(state, f))
        else:  # a job without torch: plain values, as JSON
            name = f"step-{step:09d}.json"
            try:
                data = json.dumps(state).encode("utf-8")
            except (TypeError, ValueError) as e:
                raise TypeError(f"checkpoint.save: without torch a state holds plain values "
                                f"only (JSON): {e}") from None  # fmt: skip
            write(name, lambda f: f.write(data))
        before = manifest()
        now = time.time()
        history = [s for s in (before or {}).get("saved", [])
                   if isinstance(s, dict) and s.get("file") != name]  # fmt: skip
        history.append({"step": step, "file": name, "time": now, "run": run})
        start = resumed_from({"run": run, "saved": history})  # kept while this run goes on
        history = [s for i, s in enumerate(history) if i >= len(history) - keep or s is start]
        entry = {
            "step": step,
            "file": name,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
            "unix_time": now,
            "run": run,
            "keep": keep,
            "saved": history,
        }
        write(settings["manifest"], lambda f: f.write(json.dumps(entry, indent=1).encode()))
        kept = {s.get("file") for s in history}
        for item in os.scandir(folder):
            old = saved_name.match(item.name) and item.name not in kept
            try:
                stale = unfinished.match(item.name) and (
                    now - item.stat(follow_symlinks=False).st_mtime > settings["stale_seconds"]
                )
                if (old or stale) and item.is_file(follow_symlinks=False):
                    os.unlink(item.path)
            except OSError:
                pass
        return os.path.join(folder, name)

    def stopped(signum, frame):
        if stopping:
            return
        stopping.append(signum)
        print(f"kale_ext: stopped (signal {signum}): running {len(handlers)} on_stop handler(s)",
              file=sys.stderr, flush=True)  # fmt: skip
        for fn in handlers:
            try:
                fn()
            except Exception as e:
                print(f"kale_ext: on_stop {getattr(fn, '__name__', fn)!s}: {e!r}",
                      file=sys.stderr, flush=True)  # fmt: skip
        raise SystemExit(128 + signum)

    def on_stop(fn):
        """Run ``fn()`` when the job is stopped (SIGTERM), then exit; returns ``fn``."""
        if not callable(fn):
            raise TypeError(f"checkpoint.on_stop: {fn!r} is not callable")
        if not handlers:
            try:
                signal.signal(signal.SIGTERM, stopped)
            except ValueError:
                raise RuntimeError("checkpoint.on_stop: call it from the main thread") from None
        handlers.append(fn)
        return fn

    return types.SimpleNamespace(latest=latest, save=save, on_stop=on_stop, directory=folder)


_made: dict[str, Any] = {}


def _here() -> Any:
    """This process's namespace, made on first use from its environment."""
    if "api" not in _made:
        from .metrics import report

        _made["api"] = _kale_ext_checkpoint(os.environ, SETTINGS, report)
    return _made["api"]


def latest() -> Any:
    """The state last saved in this job's lineage, or None (see the module's help)."""
    return _here().latest()


def save(state: dict, step: int) -> str | None:
    """Keep ``state`` as the checkpoint of ``step``; the file's path on rank 0, else None."""
    return _here().save(state, step)


def on_stop(fn):
    """Run ``fn()`` when the job is stopped (SIGTERM), within the grace period; returns ``fn``."""
    return _here().on_stop(fn)
