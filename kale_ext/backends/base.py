"""One job interface, used by every surface (CLI, REST API, panel, magics)."""

from __future__ import annotations

import abc
import enum
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..errors import BackendError, LogsGone, NotFound
from ..job.defaults import STALL_SECONDS
from ..job.runtimes import Runtime
from ..job.spec import JobSpec
from ..job.trainjob import LINEAGE, PARENT, RESUME_STEP, SWEEP
from ..lineage import Checkpoint, step_of
from ..metrics import parse_metric
from ..progress import PROGRESS_KEYS, Progress

__all__ = [
    "Backend",
    "BackendError",
    "Event",
    "Failure",
    "JobInfo",
    "JobOutputs",
    "LogLine",
    "LogsGone",
    "LogQuery",
    "NodeState",
    "NotFound",
    "OutputFile",
    "Queue",
    "Status",
    "Submitted",
]


class Status(str, enum.Enum):
    CREATED = "Created"
    QUEUED = "Queued"  # suspended, waiting for a queue, or not yet scheduled
    RUNNING = "Running"
    COMPLETE = "Complete"
    FAILED = "Failed"
    UNREADABLE = "Unreadable"  # a local job whose record cannot be read: it only can be deleted

    @property
    def finished(self) -> bool:
        return self in (Status.COMPLETE, Status.FAILED, Status.UNREADABLE)


@dataclass
class NodeState:
    index: int  # the node's rank (PET_NODE_RANK)
    state: str  # Pending, Running, Succeeded, Failed
    reason: str | None = None
    exit_code: int | None = None


@dataclass
class Failure:
    """Why a job failed, on one screen: who failed first, where in the notebook, how it ended
    and that rank's last lines (kale_ext/backends/failure.py finds it)."""

    summary: str  # one line: `node 1, rank 1: cell 3 ("training"), line 2: KeyError: 'label'`
    node: int | None = None
    rank: int | None = None  # global rank
    exception: str | None = None  # `KeyError: 'label'`
    cell_index: int | None = None  # 0-based, as in the notebook
    cell_id: str | None = None
    cell_label: str | None = None  # the cell's role: `training`, `functions`, ...
    line: int | None = None  # 1-based, in the cell
    exit_code: int | None = None
    signal: str | None = None  # in words: `killed: out of memory`, `signal 9 (SIGKILL)`
    reason: str | None = None  # the cluster's reason, in plain words
    log_tail: list[str] = field(default_factory=list)  # that rank's last lines

    @classmethod
    def from_dict(cls, data: dict | None) -> Failure | None:
        if not data:
            return None
        known = {f: data[f] for f in cls.__dataclass_fields__ if f in data}
        return cls(**known)


#: A trial's label (a TrainJob label on Kubernetes) naming its sweep; kept in the job's records
#: as the annotation SWEEP_ANNOTATION. A job stopped by its sweep's early-stopping rule has a
#: reason starting with STOPPED_EARLY and reads `Stopped early` in every view; one stopped with
#: its cancelled sweep, CANCELLED_WITH_SWEEP and `Cancelled`.
SWEEP_LABEL = SWEEP_ANNOTATION = SWEEP
STOPPED_EARLY = "stopped early"
CANCELLED_WITH_SWEEP = "cancelled with its sweep"
#: A job someone stopped (kale-ext stop, the panel's Stop): kept, its reason `stopped by WHO at
#: WHEN`, reading STOPPED_TEXT in every view.
STOPPED_BY, STOPPED_TEXT = "stopped by", "Stopped"
#: How a job's reason starts when the process submitting it stopped before the job started
#: (killed midway): nothing of it runs, and it may be submitted again.
SUBMIT_INTERRUPTED = "its submit was interrupted"


def stopped_reason(who: str, when: str) -> str:
    """`stopped by alice at 2026-11-27T10:00:00Z`: the reason of a job someone stopped."""
    return f"{STOPPED_BY} {who} at {when}"


def stall_text(seconds: float) -> str:
    """`Stalled (no output for 10 min)`."""
    quiet = f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"
    return f"Stalled (no output for {quiet})"


@dataclass
class JobInfo:
    name: str
    status: Status
    backend: str
    runtime: str = ""
    num_nodes: int = 1
    procs_per_node: int = 1
    #: where procs_per_node comes from: "asked", or "the runtime's choice: 4 CPUs per node"
    procs_why: str | None = None
    reason: str | None = None  # plain language, for failures and waits
    nodes: list[NodeState] = field(default_factory=list)
    created: str | None = None  # ISO 8601, UTC
    finished: str | None = None
    provenance: dict = field(default_factory=dict)  # notebook, its sha256, source sha256, ...
    failure: Failure | None = None  # a Failed job's summary
    last_output: str | None = None  # when a running job last wrote a log line or a metric
    stalled_after: float | None = None  # set while Running without output for this many s
    failing: str | None = None  # set while Running after a node failed: `node 1 exited with 1`
    sweep: str | None = None  # the sweep it is a trial of (from its SWEEP_LABEL annotation)
    progress: Progress | None = None  # the last progress it reported (kept once it ended)
    trainer_metrics: dict[str, str] | None = None  # Kubeflow Trainer's status.trainerStatus
    disk_bytes: int | None = None  # what its folder here takes (None: unknown, a cluster's)
    disk_partial: bool = False  # the count stopped at its bound: at least disk_bytes
    checkpoint: Checkpoint | None = None  # the last checkpoint_step it reported (lineage.py)
    lineage: str | None = None  # whose checkpoints it shares (its LINEAGE, else its name)
    parent: str | None = None  # a resumed job's parent (its PARENT annotation)
    resume_step: int | float | None = None  # the parent's checkpoint step it was resumed from

    def __post_init__(self) -> None:
        if self.sweep is None:
            self.sweep = self.provenance.get(SWEEP_ANNOTATION)
        if self.lineage is None:
            self.lineage = self.provenance.get(LINEAGE) or self.name
        if self.parent is None:
            self.parent = self.provenance.get(PARENT)
        if self.resume_step is None:
            self.resume_step = step_of(self.provenance.get(RESUME_STEP))

    @property
    def status_text(self) -> str:
        """The status as every view shows it: `Stalled (no output for 10 min)` for a running
        job that has been quiet too long, one whose other nodes are being stopped after one
        failed, a queued job with why it waits."""
        if self.status is Status.RUNNING and self.failing:  # `Failing (node 1 exited with 1)`
            return f"Failing ({self.failing})"
        if self.status is Status.RUNNING and self.stalled_after is not None:
            return stall_text(self.stalled_after)
        if self.status is Status.FAILED and (self.reason or "").startswith(STOPPED_EARLY):
            return "Stopped early"
        if self.status is Status.FAILED and (self.reason or "").startswith(CANCELLED_WITH_SWEEP):
            return "Cancelled"
        if self.status is Status.FAILED and (self.reason or "").startswith(STOPPED_BY):
            return STOPPED_TEXT
        if self.status is Status.QUEUED and self.reason:  # `Queued (waiting for 4 CPUs, ...)`
            return f"{self.status.value} ({self.reason})"
        return self.status.value

    @property
    def progress_shown(self) -> Progress | None:
        """The progress a view shows as a bar: only while the job runs (a queued or finished
        job shows its state, not a stale bar)."""
        return self.progress if self.status is Status.RUNNING else None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status"] = self.status.value
        data["status_text"] = self.status_text
        data["progress"] = self.progress.to_json() if self.progress is not None else None
        data["checkpoint"] = self.checkpoint.to_json() if self.checkpoint is not None else None
        return data


@dataclass(frozen=True)
class OutputFile:
    path: str  # relative to the outputs' location, with "/"
    size: int  # bytes (a link's own: 0)
    link: str | None = None  # a symbolic link's target, as written: listed, never followed


@dataclass(frozen=True)
class JobOutputs:
    """What a job wrote to ``KALE_EXT_OUTPUT_DIR``: where it lasts, the files (when the backend
    can list them), and what the user should know."""

    location: str
    files: list[OutputFile] = field(default_factory=list)
    note: str | None = None
    listed: bool = True  # False: the backend cannot list them (a volume on a cluster)

    def to_dict(self) -> dict:
        """As JSON: a file's ``link`` only on a link."""
        data = asdict(self)
        data["files"] = [{k: v for k, v in f.items() if k != "link" or v is not None}
                         for f in data["files"]]  # fmt: skip
        return data


@dataclass(frozen=True)
class Queue:
    """A queue a job may wait in for quota: on Kubernetes, a Kueue LocalQueue of the namespace
    (its ClusterQueue, and how many Workloads wait in it and were admitted from it)."""

    name: str
    cluster_queue: str | None = None
    pending: int | None = None
    admitted: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


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

    @property
    def shown(self) -> str:
        """The line as shown: rank-prefixed; kale_ext.report lines as `step N: loss 0.31`."""
        metric = parse_metric(self.text)
        if metric is None:
            return f"{self.prefix} {self.text}"
        hidden = ("step", "rank", *PROGRESS_KEYS)
        values = ", ".join(f"{k} {v}" for k, v in metric.items() if k not in hidden)
        step = f"step {metric.get('step')}" + (f"/{metric['total']}" if "total" in metric else "")
        if "epoch" in metric:
            epochs = f"/{metric['epochs']}" if "epochs" in metric else ""
            step += f", epoch {metric['epoch']}{epochs}"
        return f"{self.prefix} {step}: {values}"


@dataclass(frozen=True)
class LogQuery:
    """Which lines ``Backend.logs`` reads: one node's or all (None); ``follow`` waits for new
    lines until the job ends; ``tail`` keeps each node's last lines; ``offsets`` resumes after
    LogLine.offset, per node."""

    node: int | None = None
    follow: bool = False
    tail: int | None = None
    offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class Event:
    time: str | None
    type: str  # Normal, Warning
    reason: str
    message: str
    object: str = ""


_TORCHRUN_PREFIX = re.compile(r"^\[[A-Za-z_]*?(\d+)\]:(\[rank\d+\]: ?)?")


def split_rank(node: int, procs_per_node: int, text: str) -> tuple[int | None, str]:
    """torchrun --tee prefixes lines with the local rank ("[default1]:"): the global rank.
    The "[rank1]: " torch.distributed puts before each line of an uncaught error goes too."""
    m = _TORCHRUN_PREFIX.match(text)
    if not m:
        return (node if procs_per_node == 1 else None), text
    return node * procs_per_node + int(m.group(1)), text[m.end() :]


def lines_left(backend: Backend, name: str, **kwargs) -> Iterator[LogLine]:
    """The job's log lines for a reader that looks for metrics rather than shows them: none,
    instead of LogsGone, when the logs went with the job's pods."""
    try:
        yield from backend.logs(name, **kwargs)
    except LogsGone:
        return


def not_finished(name: str, status: str) -> BackendError:
    """A prune's refusal of a job that has not finished (it reads ``status`` now)."""
    return BackendError(f"job {name} is {status}: only a finished job is pruned", 409, "Running")


class Backend(abc.ABC):
    """A place where jobs run."""

    name: str = ""
    #: Running without output for this many seconds shows as Stalled (None: never); set from
    #: the defaults' stall_seconds by choose_backend.
    stall_seconds: float | None = STALL_SECONDS

    def note_output(self, info: JobInfo, last: datetime | None) -> None:
        """Record when a running job last wrote a line, and whether it has stalled since."""
        if info.status is not Status.RUNNING or last is None:
            return
        info.last_output = last.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        quiet = (datetime.now(timezone.utc) - last).total_seconds()
        if self.stall_seconds and quiet >= self.stall_seconds:
            info.stalled_after = self.stall_seconds

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

    def list_queues(self) -> tuple[list[Queue], str | None]:
        """The queues a job may name (``--queue``), and why there are none when none can be
        listed."""
        return [], f"the {self.name} backend has no queues: Kueue's LocalQueues are on a cluster"

    @abc.abstractmethod
    def submit(self, spec: JobSpec, notebook_path: str | None = None) -> Submitted:
        """Start the job; return its name and the backend's warnings."""

    @abc.abstractmethod
    def list_jobs(self) -> list[JobInfo]: ...

    @abc.abstractmethod
    def get_job(self, name: str) -> JobInfo: ...

    def logs(
        self,
        name: str,
        node: int | None = None,
        follow: bool = False,
        tail: int | None = None,
        offsets: dict[int, int] | None = None,
    ) -> Iterator[LogLine]:
        """Log lines of one node or all (multiplexed); ``offsets`` resumes after LogLine.offset
        per node; ``follow`` waits for new lines until the job ends. Each backend reads them in
        ``read_logs``."""
        if tail is not None and tail < 0:
            raise BackendError(f"tail must be 0 or more, not {tail}", 400, "BadRequest")
        starts = {int(k): int(v) for k, v in (offsets or {}).items()}
        return self.read_logs(name, LogQuery(node, follow, tail, starts))

    def read_logs(self, name: str, query: LogQuery) -> Iterator[LogLine]:
        """The lines ``query`` asks for (``logs`` has checked its tail and offsets)."""
        raise NotImplementedError(f"the {self.name} backend has no logs")

    @abc.abstractmethod
    def events(self, name: str) -> list[Event]: ...

    @abc.abstractmethod
    def delete(self, name: str, outputs: bool = False) -> str | None:
        """Stop and delete a job. Its outputs stay unless ``outputs``; returns what happened to
        them, in words (None when it had none)."""

    def prune_job(self, name: str, outputs: bool = False) -> str | None:
        """Delete job ``name`` as ``delete`` does, only if it has finished (prune.py chose it
        from a listing: it is looked at again here); a 409 otherwise."""
        info = self.get_job(name)
        if not info.status.finished:
            raise not_finished(name, info.status_text)
        return self.delete(name, outputs)

    def stop(self, name: str, reason: str) -> None:
        """Stop a running job, saying ``reason`` (a sweep stopping a trial early). A backend
        that cannot keep a stopped job deletes it (its outputs stay)."""
        self.delete(name)

    def job_source(self, name: str) -> str | None:
        """The compiled module the job runs, as submitted (None: this backend cannot tell)."""
        self.get_job(name)  # NotFound names the job
        return None

    def outputs(self, name: str) -> JobOutputs:
        """What the job wrote to KALE_EXT_OUTPUT_DIR (NotFound for an unknown job)."""
        self.get_job(name)
        return JobOutputs("", [], "this backend keeps no outputs")

    def outputs_place(self, name: str) -> JobOutputs:
        """Where the job's outputs are, their files not necessarily listed (cheaper than
        ``outputs`` where listing costs: results.py reads one file there)."""
        return self.outputs(name)

    def copy_outputs(self, name: str, into: Path) -> JobOutputs:
        """Copy the job's outputs into folder ``into``; what was copied."""
        found = self.outputs(name)
        raise BackendError(
            f"the outputs of {name} cannot be copied from here"
            + (f": they are in {found.location}" if found.location else ""),
            400,
            "NotLocal",
        )

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
