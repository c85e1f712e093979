"""`kale-ext diff A B [C ...]`: what differs between jobs, and their final metrics."""

from __future__ import annotations

from .common import add_backend, add_output, backend_of, emit


def register(sub) -> dict:
    """Add the command's parser to ``sub``; return its handler by name."""
    d = sub.add_parser(
        "diff",
        help="compare jobs: parameters, resources, packages, image, runtime, notebook and "
        "source hashes, the generated function's diff, final metrics",
    )
    d.add_argument("jobs", nargs="+", metavar="JOB", help="two or more job names")
    add_backend(d)
    add_output(d)
    return {"diff": _diff}


def _diff(args) -> int:
    from ..runs.diff import compare, comparison_text

    found = compare(backend_of(args), args.jobs)
    emit(args, found.to_dict(), lambda _: print(comparison_text(found)))
    return 0
