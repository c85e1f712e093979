"""Stop a job and keep it: its processes (local) or pods (Kubernetes) end, its logs, outputs and
record stay, and it reads `Stopped` with who stopped it and when in every view. Delete is for
removing a job."""

from __future__ import annotations

import getpass
from datetime import datetime, timezone

from ..backends.base import Backend, JobInfo, stopped_reason
from ..errors import BackendError


def who_am_i() -> str:
    """The name a stop from this process is recorded under (the user running it)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        return "someone"


def stop(backend: Backend, name: str, who: str | None = None) -> JobInfo:
    """Stop job ``name`` on ``backend``, recorded as stopped by ``who`` (default: this user),
    now; the job as it reads afterwards. NotFound for an unknown job; a 409 for one that has
    ended already (there is nothing to stop)."""
    info = backend.get_job(name)
    if info.status.finished:
        raise BackendError(f"job {name} has ended already ({info.status_text}): there is "
                           "nothing to stop", 409, "Conflict")  # fmt: skip
    when = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    backend.stop(name, stopped_reason(who or who_am_i(), when))
    return backend.get_job(name)
