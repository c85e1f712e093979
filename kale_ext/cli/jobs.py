"""The commands on submitted jobs: list, status, events, logs, delete, outputs."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .common import add_backend, add_output, backend_of, emit


def register(sub) -> dict:
    """Add the commands' parsers to ``sub``; return their handlers by name."""
    j = sub.add_parser("jobs", help="list jobs with their status")
    add_backend(j)
    add_output(j)
    j.add_argument(
        "--status",
        type=str.lower,
        help="only jobs in this status: created, queued, running, stalled (running without "
        "output for the defaults' stall_seconds), complete, failed or stopped",
    )
    j.add_argument("--sweep", metavar="SWEEP", help="only the trials of this sweep")
    st = sub.add_parser("status", help="one job's status; for a failed job, where and why")
    st.add_argument("name")
    add_backend(st)
    add_output(st)

    ev = sub.add_parser("events", help="a job's events (scheduling, pulls, failures)")
    ev.add_argument("name")
    add_backend(ev)
    add_output(ev)

    lg = sub.add_parser("logs", help="print a job's logs (all nodes, rank-prefixed)")
    lg.add_argument("name")
    add_backend(lg)
    lg.add_argument("-f", "--follow", action="store_true", help="wait for new lines")
    lg.add_argument("--node", type=int, help="only this node")
    lg.add_argument("--tail", type=int, help="only the last N lines of each node")
    lg.add_argument(
        "--raw",
        action="store_true",
        help="print the lines as the job wrote them, terminal control sequences (colours, "
        "carriage returns, ...) included; without it they are shown escaped (\\x1b[31m)",
    )

    d = sub.add_parser("delete", help="stop and delete a job (its outputs stay)")
    d.add_argument("name")
    d.add_argument("--outputs", action="store_true", help="delete its outputs too")
    add_backend(d)
    o = sub.add_parser("outputs", help="what a job wrote to KALE_EXT_OUTPUT_DIR, with sizes")
    o.add_argument("name")
    o.add_argument("--copy", metavar="DIR", help="copy them into DIR")
    add_backend(o)
    add_output(o)

    return {
        "jobs": _jobs,
        "status": _status,
        "events": _events,
        "logs": _logs,
        "delete": _delete,
        "outputs": _outputs,
    }


def _jobs(args) -> int:
    from ..display import STATUSES, jobs_table, select_jobs

    if args.status is not None and args.status not in STATUSES:
        raise ConfigError("status", f"must be one of {', '.join(STATUSES)}, not {args.status!r}")
    jobs = select_jobs(backend_of(args).list_jobs(), args.status)
    if args.sweep is not None:
        jobs = [j for j in jobs if j.sweep == args.sweep]
    emit(args, [j.to_dict() for j in jobs], lambda rows: print(jobs_table(jobs)))
    return 0


def _status(args) -> int:
    from ..display import job_status

    info = backend_of(args).get_job(args.name)
    emit(args, info.to_dict(), lambda row: print(job_status(info)))
    return 0


def _events(args) -> int:
    from ..terminal import printable

    def table(rows):
        for e in rows:
            time, kind, reason, message = (
                printable(e[k] or "") for k in ("time", "type", "reason", "message")
            )
            print(f"{time:<20}  {kind:<7}  {reason:<24}  {message}")

    from dataclasses import asdict

    emit(args, [asdict(e) for e in backend_of(args).events(args.name)], table)
    return 0


def _logs(args) -> int:
    from ..display import log_text

    lines = backend_of(args).logs(args.name, node=args.node, follow=args.follow, tail=args.tail)
    for line in lines:
        print(log_text(line, raw=args.raw), flush=True)
    return 0


def _delete(args) -> int:
    from ..terminal import printable

    note = backend_of(args).delete(args.name, outputs=args.outputs)
    print(printable(f"deleted {args.name}" + (f"; {note}" if note else "")))
    return 0


def _outputs(args) -> int:
    from ..display import outputs_text

    backend, copy = backend_of(args), args.copy and Path(args.copy)
    found = backend.copy_outputs(args.name, copy) if copy else backend.outputs(args.name)
    emit(args, found.to_dict(), lambda _: print(outputs_text(found)))
    return 0
