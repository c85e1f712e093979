"""What a job is, as resolved at submit: the definition its backend records (trainjob.py puts it
in the ``kale-ext.io/definition`` annotation, a local job's record too), which `kale-ext diff`
compares (runs/diff.py)."""

from __future__ import annotations

from ..checkpoint import KEEP
from .redact import masked
from .spec import JobSpec

#: What a definition that lacks one of these keys (recorded before the key joined it) or has
#: it None (not asked) means by it: its default. An old job and a new one asking the same
#: compare equal (runs/diff.py); None: no default (nothing to show).
DEFAULTS: dict[str, object] = {
    "max_restarts": 0,
    "checkpoints": None,
    "keep_checkpoints": KEEP,
    "queue": None,
    "priority_class": None,
}


def definition(spec: JobSpec) -> dict:
    """What a job is, as resolved at submit (every layer applied): to compare two jobs."""
    return {
        "runtime": spec.runtime.name,
        "image": spec.image or spec.runtime.image or None,
        "nodes": spec.nodes,
        "procs_per_node": spec.procs_per_node,
        "parameters": masked(spec.func_args),
        "packages": spec.requirements,
        "requests": dict(spec.config.requests),
        "limits": dict(spec.config.limits),
        # a Kubeflow SDK notebook's train(initializer=..., options=[RuntimePatch(...)])
        "initializer": spec.initializer,
        "runtime_patches": spec.runtime_patches,
        # how it runs again and where it resumes from (None: not asked, left out of the diff);
        # pin_packages shows in the packages, the lineage beside the definition (runs/diff.py)
        "max_restarts": spec.max_restarts,
        "checkpoints": None if spec.checkpoints is None else str(spec.checkpoints),
        "keep_checkpoints": spec.keep_checkpoints,
        "queue": queue_of(spec.config),
        "priority_class": priority_class_of(spec.config),
    }


def queue_of(config) -> str | None:
    """The Kueue LocalQueue the job waits in (--queue, or the config's scheduling policy)."""
    return _scheduling(config, "queue")


def priority_class_of(config) -> str | None:
    """The Kueue priority class the job asks for (the config's scheduling policy), or None."""
    return _scheduling(config, "priority_class")


def _scheduling(config, field: str) -> str | None:
    """One field of the config's scheduling policy; None where it is unset or empty."""
    policy = config.run_policy
    sched = policy.scheduling_policy if policy else None
    return getattr(sched, field, None) or None


def with_defaults(recorded: dict) -> tuple[dict, set[str]]:
    """A recorded definition, each key of DEFAULTS it lacks (or has None) given its default;
    and those keys."""
    unset = {k for k, v in DEFAULTS.items() if v is not None and recorded.get(k) is None}
    return {**recorded, **{k: DEFAULTS[k] for k in unset}}, unset
