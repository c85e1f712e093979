"""The search flags of a sweep, in one table: `kale-ext sweep` and `%%trainjob --sweep` both add
them to their parsers and read them back with :func:`chosen` (the keywords of ``sweep.start``)."""

from __future__ import annotations

import argparse

from .search import SEARCHES

#: (flag, add_argument's keywords); each flag's dest is a keyword of ``sweep.start``, except
#: --random (a random search of N trials).
FLAGS: tuple[tuple[str, dict], ...] = (
    ("--random", {"type": int, "metavar": "N", "help": "a random search of N trials"}),
    ("--search", {"choices": SEARCHES, "help": "how points are chosen (default: grid, or "
                  "random with --random)"}),  # fmt: skip
    ("--trials", {"type": int, "metavar": "N", "help": "trials of a random or tpe search"}),
    ("--seed", {"type": int, "help": "the sampler's seed (a repeatable search)"}),
    ("--parallel", {"type": int, "default": 1, "metavar": "K", "help": "trials at a time"}),
    ("--metric", {"help": "the kale_ext.report metric the search goes by"}),
    ("--goal", {"choices": ("min", "max"), "help": "whether the metric is best low or high "
                "(default: from its name: loss, error... min; else max)"}),  # fmt: skip
    ("--early-stop", {"action": "store_true", "help": "stop a trial whose metric at a step is "
                      "worse than the median of the completed trials at it"}),  # fmt: skip
    ("--prune-after", {"type": int, "default": 2, "metavar": "N",
                       "help": "completed trials before early stopping starts (default 2)"}),
)  # fmt: skip


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add the search flags to ``parser``."""
    for flag, keywords in FLAGS:
        parser.add_argument(flag, **keywords)


def chosen(args: argparse.Namespace) -> dict:
    """The parsed search flags as ``sweep.start``'s keywords (search, trials, parallel, ...)."""
    return {
        "search": args.search or ("random" if args.random else "grid"),
        "trials": args.random or args.trials,
        "parallel": args.parallel,
        "seed": args.seed,
        "metric": args.metric,
        "goal": args.goal,
        "early_stop": args.early_stop,
        "prune_after": args.prune_after,
    }
