"""Backends run jobs: `local` (processes on this machine) and `kubernetes` (Kubeflow Trainer)."""

from .base import Backend, BackendError, Event, JobInfo, LogLine, NodeState, NotFound, Status

__all__ = [
    "Backend",
    "BackendError",
    "Event",
    "JobInfo",
    "LogLine",
    "NodeState",
    "NotFound",
    "Status",
]
