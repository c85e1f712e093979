"""What jobs start from: the training runtimes (and their images' packages), the queues they
may wait in and the defaults."""

from __future__ import annotations

import json

from ..job.procs import counted
from .common import add_backend, add_output, backend_of, defaults, emit


def register(sub) -> dict:
    """Add the commands' parsers to ``sub``; return their handlers by name."""
    rt = sub.add_parser("runtimes", help="list the training runtimes")
    add_backend(rt)
    add_output(rt)
    rt.add_argument(
        "--packages",
        metavar="RUNTIME",
        help="list the Python packages of RUNTIME's image (runs a short job once, then cached)",
    )
    qs = sub.add_parser(
        "queues",
        help="list the queues a job may wait in (--queue): the namespace's Kueue LocalQueues",
    )
    add_backend(qs)
    add_output(qs)
    df = sub.add_parser(
        "defaults",
        help="the defaults every job starts from, and where each is set",
        description="The defaults the JupyterLab panel, this CLI and the magics share, lowest "
        "first: built in < the Jupyter server's configuration (c.KaleExtApp.<field>) < the "
        "JupyterLab settings (Settings Editor → kale_ext). A notebook's own settings and each "
        "command's flags come before all of them.",
    )
    add_output(df)
    return {"runtimes": _runtimes, "queues": _queues, "defaults": _show_defaults}


def _runtimes(args) -> int:
    if args.packages:
        return _runtime_packages(args)

    def table(rows):
        for r in rows:
            accel = ", ".join(f"{v} {k}" for k, v in r["accelerators"].items()) or "no accelerators"
            shape = counted(r["num_nodes"], "node")
            print(f"{r['name']:<32} {r['framework']:<10} {shape}  {accel}  {r['image']}")

    emit(args, [r.to_dict() for r in backend_of(args).list_runtimes()], table)
    return 0


def _queues(args) -> int:
    """The LocalQueues, or why there are none (on stderr: a listing stays empty)."""
    import sys

    queues, reason = backend_of(args).list_queues()

    def table(rows):
        for q in rows:
            counts = ", ".join(f"{q[k]} {k}" for k in ("pending", "admitted") if q[k] is not None)
            cluster = f"ClusterQueue {q['cluster_queue']}" if q["cluster_queue"] else ""
            print(f"{q['name']:<32} {cluster:<32} {counts}".rstrip())

    emit(args, [q.to_dict() for q in queues], table)
    if reason:
        print(f"no queues: {reason}", file=sys.stderr)
    return 0


def _runtime_packages(args) -> int:
    from ..backends.runtime_packages import probe

    backend = backend_of(args)
    packages = backend.runtime_packages(args.packages) or probe(backend, args.packages)

    def table(rows):
        for row in rows:
            print(f"{row['name']:<40} {row['version']}")

    emit(args, [{"name": k, "version": v} for k, v in sorted(packages.items())], table)
    return 0


def _show_defaults(args) -> int:
    from ..job.defaults import UNSET, lab_settings_file

    data = defaults().to_dict()
    rows = [
        {"name": k, "value": v, "source": data["sources"][k]} for k, v in data["defaults"].items()
    ]

    def table(rows):
        width = max((len(row["name"]) for row in rows), default=0)  # the longest name's
        for row in rows:
            unset = row["value"] in (None, [])
            value = f"({UNSET[row['name']]})" if unset else json.dumps(row["value"])
            print(f"{row['name']:<{width}} {value:<32} {row['source']}")
        print(f"\nJupyterLab settings file: {lab_settings_file()}")

    emit(args, rows, table)
    return 0
