"""One job interface, used by every surface (CLI, REST API, panel, magics)."""

from __future__ import annotations

import abc
import enum
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from ..errors import BackendError, NotFound
from ..job.runtimes import Runtime
from ..job.spec import JobSpec

__all__ = [
    "Backend",
    "BackendError",
    "Event",
    "JobInfo",
    "LogLine",
    "NodeState",
    "NotFound",
    "Status",
    "Submitted",
]


class Status(str, enum.Enum):
    CREATED = "Created"
    QUEUED = "Queued"  # suspended, waiting for a queue, or not yet scheduled
    RUNNING = "Running"
    COMPLETE = "Complete"
    FAILED = "Failed"

    @property
    def finished(self) -> bool:
        return self in (Status.COMPLETE, Status.FAILED)


@dataclass
class NodeState:
    index: int  # the node's rank (PET_NODE_RANK)
    state: str  # Pending, Running, Succeeded, Failed
    reason: str | None = None
    exit_code: int | None = None


@dataclass
class JobInfo:
    name: str
    status: Status
    backend: str
    runtime: str = ""
    num_nodes: int = 1
    procs_per_node: int = 1
    reason: str | None = None  # plain language, for failures and waits
    nodes: list[NodeState] = field(default_factory=list)
    created: str | None = None  # ISO 8601, UTC
    finished: str | None = None
    provenance: dict = field(default_factory=dict)  # notebook, its sha256, source sha256, ...

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status"] = self.status.value
        return data


@dataclass(frozen=True)
class Submitted:
    """What a backend's submit returns: the job's name and what the user should know (checks
    that could not run, say). Per submit: a backend keeps no state of its last submit."""

    name: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class LogLine:
    node: int  # node rank
    text: str  # one line, without its newline
    rank: int | None = None  # global rank, when the line carries a local-rank prefix
    offset: int = 0  # position after this line in the node's log: resume from here
    partial: bool = False  # a piece of a line longer than logpieces.MAX_PIECE: more follows

    @property
    def prefix(self) -> str:
        return f"[rank {self.rank}]" if self.rank is not None else f"[node {self.node}]"


@dataclass
class Event:
    time: str | None
    type: str  # Normal, Warning
    reason: str
    message: str
    object: str = ""


_TORCHRUN_PREFIX = re.compile(r"^\[[A-Za-z_]*?(\d+)\]:")


def split_rank(node: int, procs_per_node: int, text: str) -> tuple[int | None, str]:
    """torchrun --tee prefixes lines with the local rank ("[default1]:"): the global rank."""
    m = _TORCHRUN_PREFIX.match(text)
    if not m:
        return (node if procs_per_node == 1 else None), text
    return node * procs_per_node + int(m.group(1)), text[m.end() :]


class Backend(abc.ABC):
    """A place where jobs run."""

    name: str = ""

    @abc.abstractmethod
    def list_runtimes(self) -> list[Runtime]: ...

    def get_runtime(self, name: str) -> Runtime:
        for runtime in self.list_runtimes():
            if runtime.name == name:
                return runtime
        known = ", ".join(r.name for r in self.list_runtimes()) or "none"
        raise NotFound(f"runtime {name!r} not found (available: {known})")

    def runtime_packages(self, name: str) -> dict[str, str] | None:
        """Python distributions (canonical name → version) a runtime's image has, or None when
        the backend cannot tell."""
        return None

    @abc.abstractmethod
    def submit(self, spec: JobSpec, notebook_path: str | None = None) -> Submitted:
        """Start the job; return its name and the backend's warnings."""

    @abc.abstractmethod
    def list_jobs(self) -> list[JobInfo]: ...

    @abc.abstractmethod
    def get_job(self, name: str) -> JobInfo: ...

    @abc.abstractmethod
    def logs(
        self,
        name: str,
        node: int | None = None,
        follow: bool = False,
        tail: int | None = None,
        offsets: dict[int, int] | None = None,
    ) -> Iterator[LogLine]:
        """Log lines of one node or all (multiplexed); ``offsets`` resumes after LogLine.offset
        per node; ``follow`` waits for new lines until the job ends."""

    @abc.abstractmethod
    def events(self, name: str) -> list[Event]: ...

    @abc.abstractmethod
    def delete(self, name: str) -> None: ...

    def wait(
        self,
        name: str,
        timeout: float | None = None,
        interval: float = 1.0,
        on_change: Callable[[JobInfo], None] | None = None,
    ) -> JobInfo:
        """Poll until the job finishes (or ``timeout`` seconds pass: TimeoutError)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            info = self.get_job(name)
            if on_change and (info.status, info.reason) != last:
                on_change(info)
                last = (info.status, info.reason)
            if info.status.finished:
                return info
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {name} is still {info.status.value} after {timeout} s")
            time.sleep(interval)
