"""Log lines of a TrainJob's nodes: the `node` container of each node's newest pod (an MPI job's
node 0 is its launcher: job/mpi.py, node_of), streamed line by line, resumable by offset, one
node after another or multiplexed as the lines come."""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from functools import cached_property

from ...job.trainjob import trainjob_procs
from ..base import BackendError, LogLine, LogQuery, LogsGone, NotFound, split_rank
from ..logpieces import READ_SIZE, Piece, split_pieces, text_of
from . import kept as kept_failure
from .config import (
    NODE,
    REQUEST_TIMEOUT,
    STREAM_TIMEOUT,
    Cluster,
    api_error,
    transport_errors,
)
from .kept import KEPT_LINES, Kept
from .status import (
    finished_condition,
    is_mpi,
    newest,
    newest_by_node,
    node_container,
    node_selector,
    restarts,
    training_pods,
)

_DONE_PHASES = ("Succeeded", "Failed")


def split_lines(chunks: Iterable) -> Iterator[str]:
    """Lines from a byte stream, the last one even without its newline; a line longer than
    MAX_PIECE in pieces (logpieces.Piece, each but the last)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")
        pieces, buffer = split_pieces(buffer)
        for raw, partial in pieces:
            yield text_of(raw, partial)
    if buffer:
        yield text_of(buffer, False)


class Session:
    """The open log streams of one logs() call, all closed when its reader stops."""

    def __init__(self):
        self.stop = threading.Event()
        self._open: set = set()
        self._lock = threading.Lock()

    def opened(self, response) -> None:
        with self._lock:
            self._open.add(response)
        if self.stop.is_set():
            response.close()

    def closed(self, response) -> None:
        with self._lock:
            self._open.discard(response)

    def put(self, lines: queue.Queue, item) -> bool:
        while not self.stop.is_set():
            try:
                lines.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def close(self) -> None:
        self.stop.set()
        with self._lock:
            responses = list(self._open)
        for response in responses:
            response.close()


_END = object()


def multiplex(streams: list[Iterator[LogLine]], session: Session) -> Iterator[LogLine]:
    """Lines of several nodes as they come: one thread per node feeding a bounded queue."""
    lines: queue.Queue = queue.Queue(maxsize=1000)

    def pump(stream: Iterator[LogLine]) -> None:
        try:
            for line in stream:
                if not session.put(lines, line):
                    return
        except Exception as e:  # handed to the reader, which raises it
            session.put(lines, e)
        finally:
            session.put(lines, _END)

    for stream in streams:
        threading.Thread(target=pump, args=(stream,), daemon=True).start()
    try:
        running = len(streams)
        while running:
            item = lines.get()
            if item is _END:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item
    finally:
        session.close()


def _closing(stream: Iterator[LogLine], session: Session) -> Iterator[LogLine]:
    try:
        yield from stream
    finally:
        session.close()


def _log_source(pod) -> tuple[str, str | None]:
    """Which container log the API serves for the node: a new one after a restart or a new pod
    (while a restarted container waits, the API still serves the one that ended)."""
    container = node_container(pod)
    return pod.metadata.name, container.container_id if container else None


def _identity(pod) -> tuple[str | None, str]:
    """A pod as itself: a pod made again under the same name has another uid."""
    return pod.metadata.uid, pod.metadata.name


def job_logs(
    cluster: Cluster,
    poll_interval: float,
    name: str,
    query: LogQuery,
) -> Iterator[LogLine]:
    """Lines of one node or of all (see ``KubernetesBackend.read_logs``)."""
    obj = cluster.trainjob(name)
    trainer = (obj.get("spec") or {}).get("trainer") or {}
    count, procs, mpi = trainer.get("numNodes") or 1, trainjob_procs(obj).count, is_mpi(obj)
    if mpi:  # its launcher and its `node` pods may be more than numNodes (job/mpi.py: node_of)
        pods = newest_by_node(cluster.pods(training_pods(name)), mpi)
        count = max([count, *(k + 1 for k in pods)])
    node, follow, tail, starts = query.node, query.follow, query.tail, query.offsets
    if node is not None and not 0 <= node < count:
        raise NotFound(f"job {name} has no node {node}: its nodes are 0 to {count - 1}")
    session = Session()
    reader = _NodeLogs(cluster, name, poll_interval, session, mpi)

    def lines(index: int) -> Iterator[LogLine]:
        start = starts.get(index, 0)
        for position, text in reader.read(index, follow, tail, start):
            partial = isinstance(text, Piece)
            # an MPI job's lines are no one rank's: mpirun brings every rank's output to the
            # launcher (node 0), and the other nodes' logs are their sshd's
            rank, text = (None, text) if mpi else split_rank(index, procs, text)
            yield LogLine(node=index, text=text, rank=rank, offset=position, partial=partial)

    indices = [node] if node is not None else list(range(count))
    if follow and len(indices) > 1:
        return _unless_gone(multiplex([lines(i) for i in indices], session), reader, indices)
    stream = _closing((line for i in indices for line in lines(i)), session)
    return _unless_gone(stream, reader, indices)


def _unless_gone(stream: Iterator[LogLine], reader: _NodeLogs, indices: list[int]):
    """The lines; then, if no node had a pod or kept lines, the error that says the logs went
    with the pods (instead of nothing)."""
    yield from stream
    if reader.gone >= set(indices):
        raise LogsGone(
            f"the logs of job {reader.name} went with its pods, and nothing of them was kept "
            f"(kale_ext keeps each node's last {KEPT_LINES} lines of a failure it sees while the "
            "pods exist)"
        )


class _NodeLogs:
    """The logs of one job's nodes within one logs() call."""

    def __init__(
        self, cluster: Cluster, name: str, poll_interval: float, session: Session, mpi: bool
    ):
        self.cluster, self.name, self.mpi = cluster, name, mpi
        self.poll_interval, self.session = poll_interval, session
        self.gone: set[int] = set()  # the nodes whose logs went with their pods
        self.seen: set[int] = set()  # the nodes whose pod this call saw

    def read(
        self, index: int, follow: bool, tail: int | None, start: int
    ) -> Iterator[tuple[int, str]]:
        """(position, text) of one node's log after line ``start``."""
        pod = self._wait_for_pod(index) if follow else self._pod(index)
        if pod is None and self._job_ended():
            yield from self._kept_lines(index, tail, start)
            return
        if pod is None or pod.status.phase == "Pending":
            return
        if tail is not None:
            window: deque = deque(maxlen=tail)
            for position, text in enumerate(self._lines(pod, False), 1):
                if position > start:
                    window.append((position, text))
                    start = position
            yield from window
            if not follow:
                return
        live = follow
        while pod is not None:
            source = _log_source(pod)
            for position, text in enumerate(self._lines(pod, live), 1):
                if position > start:
                    start = position
                    yield position, text
            if not follow:
                return
            if live:
                pod, live = self._after_stream(index)
            else:  # a done pod, caught up: a JobSet restart makes every node a new one
                pod, live = self._replaced(index, pod), True
            if pod is not None and _log_source(pod) != source:
                start = 0  # a new container: its log starts over

    @cached_property
    def kept(self) -> Kept | None:
        """The job's kept failure (read once, when a node's pod is gone)."""
        return kept_failure.read(self.cluster, self.name)

    def _kept_lines(self, index: int, tail: int | None, start: int) -> Iterator[tuple[int, str]]:
        """A node of an ended job without a pod: the lines kept when it failed, after a line
        that says so (kept.py); none kept, and it is one whose logs went with its pod."""
        kept = self.kept
        texts = kept.lines.get(index) if kept is not None else None
        if kept is None or texts is None:
            if index not in self.seen:
                self.gone.add(index)
            return
        if start == 0:
            yield 0, kept.notice(index)
        shown = list(enumerate(texts, 1))[start:]
        if tail is not None:
            shown = shown[len(shown) - tail :] if tail else []
        yield from shown

    def _pod(self, index: int):
        """The newest pod of node ``index`` (an MPI job's node 0: its launcher), or None."""
        return newest(self.cluster.pods(node_selector(self.name, index, self.mpi)))

    def _job_ended(self) -> bool:
        try:
            return finished_condition(self.cluster.trainjob(self.name)) is not None
        except NotFound:
            return True

    def _wait_for_pod(self, index: int):
        """The node's pod once it has left Pending; None if the job ends (or goes) first."""
        while not self.session.stop.is_set():
            pod = self._pod(index)
            if pod is not None:
                self.seen.add(index)  # even Pending: it was there to look at
            if pod is not None and pod.status.phase != "Pending":
                return pod
            if self._job_ended():
                return None
            self.session.stop.wait(self.poll_interval)
        return None

    def _after_stream(self, index: int):
        """Where a followed log goes once its stream ended: (pod, follow). A node or job that is
        done gets one last plain read, which catches up if the connection dropped early."""
        if self.session.stop.is_set():
            return None, False
        pod = self._pod(index)
        if self._job_ended() or (pod is not None and pod.status.phase in _DONE_PHASES):
            return pod, False
        self.session.stop.wait(self.poll_interval)  # the container restarts, or the stream dropped
        return self._wait_for_pod(index), True

    def _replaced(self, index: int, done):
        """The pod that replaces the node's ``done`` one (another uid: a JobSet restart deleted
        and recreated every node's), once it has left Pending; None once the job ends (or
        goes) first, or the follow stops."""
        while not self.session.stop.is_set():
            pod = self._pod(index)
            if pod is not None and _identity(pod) != _identity(done):
                if pod.status.phase != "Pending":
                    return pod
            if self._job_ended():
                return None
            self.session.stop.wait(self.poll_interval)
        return None

    def _lines(self, pod, follow: bool, previous: bool = False):
        """The lines of the pod's `node` container; ``previous`` for the one before a restart.

        A followed stream that cannot open yet (container waiting) or drops just ends: the
        caller looks at the pod again.
        """
        cluster = self.cluster
        what = f"read the log of pod {cluster.namespace}/{pod.metadata.name}"
        try:
            response = cluster.call(
                what,
                cluster.core.read_namespaced_pod_log,
                pod.metadata.name,
                cluster.namespace,
                container=NODE,
                follow=follow,
                previous=previous,
                _preload_content=False,
                _request_timeout=STREAM_TIMEOUT if follow else REQUEST_TIMEOUT,
            )
        except BackendError as e:
            if e.status == 404 or (follow and e.status in (400, 503, 504)):  # 404: pod gone
                return
            if e.status == 400 and not previous and restarts(pod):
                yield from self._lines(pod, False, previous=True)
                return
            raise
        self.session.opened(response)
        try:
            yield from split_lines(response.stream(amt=READ_SIZE, decode_content=False))
        except transport_errors() as e:
            if not (follow or self.session.stop.is_set()):
                raise api_error(e, what, cluster.host) from e
        finally:
            self.session.closed(response)
            response.release_conn()
