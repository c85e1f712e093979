"""`sweep`, `sweep-status`, `sweeps` and `sweep-cancel`: many runs of a notebook over its
parameters."""

from __future__ import annotations

import argparse
import sys
import time

from ..runs.flags import add_flags, chosen
from .common import (
    add_backend,
    add_job_options,
    add_output,
    backend_of,
    defaults,
    document,
    emit,
    print_warnings,
)

EPILOG = """examples:
  kale-ext sweep nb.ipynb --param lr=1e-4,1e-3,1e-2 --param batch=32,64 --parallel 2
  kale-ext sweep nb.ipynb --random 12 --param 'lr=loguniform(1e-5,1e-1)' \\
      --param 'layers=int(1,4)' --param 'opt=choice(sgd,adam)' --seed 1 \\
      --metric accuracy --goal max --early-stop --parallel 4 --follow
  kale-ext sweep-status nb-x1y2z
  kale-ext jobs --sweep nb-x1y2z
  kale-ext sweep-cancel nb-x1y2z

Each --param is NAME=VALUES (a comma-separated list, or choice(...)) or a range for a random or
tpe search: uniform(LOW,HIGH), loguniform(LOW,HIGH) or int(LOW,HIGH); values are typed as in
the notebook's parameters cell. Trials are ordinary jobs named <sweep>-<number> and labelled
kale-ext.io/sweep=<sweep>. On Kubernetes at most K TrainJobs exist at a time; to queue them with
Kueue, give them a queue (kueue.x-k8s.io/queue-name): the notebook's config
run_policy.scheduling_policy.queue, or a `label:` tag.
Random and tpe searches and --early-stop need Optuna: pip install 'kale-ext[sweep]'.
"""


def register(sub) -> dict:
    """Add the commands' parsers to ``sub``; return their handlers by name."""
    s = sub.add_parser(
        "sweep",
        help="run a notebook many times over a grid or a random search of its parameters",
        description="Sweep NOTEBOOK's parameters: a grid of --param values, or a random or tpe "
        "search over ranges; each trial is a job.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("notebook", nargs="?", help="the .ipynb file")
    s.add_argument("--resume", metavar="SWEEP", help="continue a sweep whose driver stopped")
    add_flags(s)
    s.add_argument("-f", "--follow", action="store_true", help="show the trials until it ends")
    add_backend(s)
    add_job_options(s)  # --param here is NAME=VALUES; --name names the sweep

    st = sub.add_parser("sweep-status", help="a sweep's trials, best first")
    st.add_argument("name")
    st.add_argument("-f", "--follow", action="store_true", help="show changes until it ends")
    add_output(st)
    ls = sub.add_parser("sweeps", help="list sweeps")
    add_output(ls)
    c = sub.add_parser("sweep-cancel", help="cancel a sweep: no more trials start, the running "
                       "ones are stopped (kept, Cancelled)")  # fmt: skip
    c.add_argument("name")
    add_output(c)
    return {"sweep": _sweep, "sweep-status": _status, "sweeps": _sweeps, "sweep-cancel": _cancel}


def _sweep(args) -> int:
    from ..backends.submit import place_of
    from ..errors import ConfigError
    from ..runs import sweep

    if args.resume:
        record = sweep.resume(args.resume)
    else:
        if not args.notebook:
            raise ConfigError("notebook", "give the notebook to sweep (or --resume SWEEP)")
        from .common import job_options

        options = job_options(args)
        specs = options.pop("parameters", None) or {}
        name = options.pop("name", None)
        record = sweep.start(
            backend_of(args), args.notebook, specs, options, name=name,
            notebook_path=args.notebook, place=place_of(args.notebook), defaults=defaults(),
            **chosen(args),
        )  # fmt: skip
    from ..terminal import printable

    print(printable(f"sweep {record['name']} started ({_shape(record)})"), file=sys.stderr)
    # e.g. MLflow is down
    print_warnings((record.get("tracking") or {}).get("warnings", []), sys.stderr)
    if not args.follow:
        print(printable(record["name"]))
        return 0
    return _follow(record["name"])


def _shape(record: dict) -> str:
    if record["search"] == "grid":
        from ..runs.driver import space_of

        count = f"a grid of {len(space_of(record).grid())}"
    else:
        count = f"{record['search']}, {record['max_trials']} trials"
    return f"{count}, {record['parallel']} at a time"


def _follow(name: str, output: str = "table") -> int:
    """Print the trial table (or, with -o json|yaml, the sweep as one JSON line or YAML
    document) each time it changes, until the sweep ends."""
    from ..runs import record as rec
    from ..runs import sweep

    shown = None
    while True:
        record = sweep.get(name)
        table = output == "table"
        text = rec.table(record) + "\n" if table else document(output, rec.summary(record))
        if text != shown:
            print(text, flush=True)
            shown = text
        if record.get("status") not in ("Starting", "Running"):
            return 0 if record.get("status") == "Complete" else 1
        time.sleep(0.5)


def _status(args) -> int:
    from ..runs import record as rec
    from ..runs import sweep

    if args.follow:
        return _follow(args.name, args.output)
    record = sweep.get(args.name)
    emit(args, rec.summary(record), lambda _: print(rec.table(record)))
    return 0


def _cancel(args) -> int:
    from ..runs import record as rec
    from ..runs import sweep

    record = sweep.cancel(args.name)
    emit(args, rec.summary(record), lambda _: print(rec.table(record)))
    return 0


def _sweeps(args) -> int:
    from ..runs import sweep
    from ..terminal import printable

    rows = sweep.listing()

    def table(rows):
        for r in rows:
            name, status, tally, best = (printable(r[k] or "") for k in
                                         ("name", "status", "tally", "best"))  # fmt: skip
            best = f"best {best}" if best else ""
            print(f"{name:<38}  {status:<11}  {tally}  {best}".rstrip())

    emit(args, rows, table)
    return 0
