"""Automatic restarts: what a job that is started again after a node fails needs to know.

A restart starts the whole job again (every node) with ``KALE_EXT_RESTART`` set to the attempt
(``0`` the first time); the function resumes from ``checkpoint.latest()``. A job that never calls
``checkpoint.save`` starts from scratch each time: :func:`restart_warnings` says so at submit.
"""

from __future__ import annotations

import ast

#: The environment variable every node gets: which attempt this is (0 on the first).
RESTART_ENV = "KALE_EXT_RESTART"
#: What a job with restarts whose code never saves a checkpoint is told at submit.
NO_CHECKPOINT = (
    "a restart starts from scratch: the job saves no checkpoint (from kale_ext import checkpoint)"
)


def saves_checkpoints(source: str) -> bool:
    """Whether the module ``source`` calls ``checkpoint.save`` (``kale_ext.checkpoint.save``,
    or ``save`` imported from ``kale_ext.checkpoint``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return "checkpoint.save" in source  # no tree to read: what the text says
    saves = {  # what `from kale_ext.checkpoint import save [as keep]` names it
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "kale_ext.checkpoint"
        for a in node.names
        if a.name == "save"
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in saves:
            return True
        if isinstance(f, ast.Attribute) and f.attr == "save":
            owner = f.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            if name == "checkpoint":
                return True
    return False


def restart_warnings(max_restarts: int, source: str) -> list[str]:
    """What the user should know about a job's restarts at submit."""
    if max_restarts and not saves_checkpoints(source):
        return [NO_CHECKPOINT]
    return []


def restarts_of(explicit, stored, configs: dict) -> tuple[int, str | None]:
    """How many times a job is started again after a node fails, and where that was set:
    ``explicit`` (the submit's JobOptions) > ``stored`` (the notebook's metadata's) > the config
    layers ``configs`` (where → DistributedConfig, lowest first: the `distributed` cell's, the
    metadata's, the options')."""
    sources = [("max_restarts", explicit.max_restarts),
               ("metadata.kale_ext.options.max_restarts", stored.max_restarts)]  # fmt: skip
    sources += [(f"{where} max_restarts", getattr(config, "max_restarts", None))
                for where, config in reversed(configs.items())]  # fmt: skip
    return next(((value, where) for where, value in sources if value is not None), (0, None))
