"""`prune`: remove finished jobs older than an age (kale_ext/backends/prune.py)."""

from __future__ import annotations

from .common import add_backend, add_output, backend_of, emit


def register(sub) -> dict:
    """Add the command's parser to ``sub``; return its handler by name."""
    from ..backends.prune import DEFAULT_OLDER_THAN, MAX_AGE_DAYS, STATUSES

    p = sub.add_parser(
        "prune",
        help="remove finished jobs older than an age (their records and folders; outputs stay)",
        description="Remove the jobs that finished at least --older-than ago: their records, "
        "logs and folders here, or their TrainJobs on a cluster. A created, queued or running "
        "job is never removed, nor one a stop or a delete is acting on. Their outputs stay "
        "unless --outputs.",
    )
    p.add_argument(
        "--older-than",
        default=DEFAULT_OLDER_THAN,
        metavar="AGE",
        help=f"finished at least this long ago: a whole number and s, m, h, d or w (0s to "
        f"{MAX_AGE_DAYS}d; default {DEFAULT_OLDER_THAN})",
    )
    p.add_argument(
        "--status",
        default=",".join(STATUSES),
        help=f"which finished jobs, comma-separated: {', '.join(STATUSES)} (default: all)",
    )
    p.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")
    p.add_argument("--outputs", action="store_true", help="delete their outputs too")
    add_backend(p)
    add_output(p)
    return {"prune": _prune}


def _prune(args) -> int:
    from ..backends.prune import parse_age, parse_statuses, prune
    from ..display import pruned_table

    older_than = parse_age(args.older_than, "--older-than")
    statuses = parse_statuses(args.status, "--status")
    done = prune(backend_of(args), older_than, statuses, args.dry_run, args.outputs)
    emit(args, [p.to_dict() for p in done], lambda _: print(pruned_table(done, args.dry_run)))
    return 1 if any(not p.deleted for p in done) and not args.dry_run else 0
