"""The job monitor: a live status badge, per-node logs (rank-prefixed), elapsed time, cancel.

Three layers, each small:

- :class:`MonitorModel`: the monitor's logic in plain Python (status changes, log lines kept
  per node up to a cap, elapsed time, the cancel state). No threads, no I/O, no widgets.
- :class:`JobMonitor`: polls a backend from a background thread, so the kernel stays free, and
  feeds the model to a view.
- Views: :class:`WidgetView` (ipywidgets, updated from the thread) where a front end can
  render widgets, else :class:`TextView`, which prints status changes and log lines.
"""

from __future__ import annotations

import html
import os
import sys
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from .backends.base import JobInfo, LogLine, NotFound, Status
from .errors import KaleExtError

#: The statuses a monitor shows beyond a backend's own.
CANCELLING = "Cancelling"
CANCELLED = "Cancelled"
DELETED = "Deleted"
FINAL = frozenset({Status.COMPLETE.value, Status.FAILED.value, CANCELLED, DELETED})
COLORS = {
    Status.CREATED.value: "#757575",
    Status.QUEUED.value: "#b26a00",
    Status.RUNNING.value: "#1565c0",
    Status.COMPLETE.value: "#2e7d32",
    Status.FAILED.value: "#c62828",
    CANCELLING: "#757575",
    CANCELLED: "#616161",
    DELETED: "#616161",
}
#: Consecutive backend errors after which a monitor stops polling.
MAX_ERRORS = 5


def format_elapsed(seconds: float) -> str:
    """`0:07`, `12:34`, `1:02:03`."""
    s = max(0, int(seconds))
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Change:
    """A status change: what the monitor shows and the text view prints."""

    status: str
    reason: str | None


class MonitorModel:
    """A job's state as a monitor shows it. Every method takes the time it happens at."""

    def __init__(
        self,
        name: str,
        *,
        backend: str = "",
        nodes: int = 1,
        procs_per_node: int = 1,
        max_lines: int = 1000,
        now: datetime | None = None,
    ):
        if max_lines < 1:
            raise ValueError("max_lines must be at least 1")
        self.name = name
        self.backend = backend
        self.nodes = nodes
        self.procs_per_node = procs_per_node
        self.max_lines = max_lines
        self.status = Status.CREATED.value
        self.reason: str | None = None
        self.changes: list[Change] = []
        self.started = now or _now()
        self.ended: datetime | None = None
        self.lines: dict[int, deque[str]] = {k: deque(maxlen=max_lines) for k in range(nodes)}
        self.dropped: dict[int, int] = dict.fromkeys(range(nodes), 0)
        self.all_lines: deque[str] = deque(maxlen=max_lines)
        self.all_dropped = 0
        self.offsets: dict[int, int] = {}
        self.cancel_state: str | None = None  # None, "requested", "done", "failed"
        self._before_cancel: tuple[str, str | None] = (self.status, None)
        self.error: str | None = None

    # -- status --

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def _set(self, status: str, reason: str | None, now: datetime) -> Change | None:
        if (status, reason) == (self.status, self.reason) and self.changes:
            return None
        self.status, self.reason = status, reason
        change = Change(status, reason)
        self.changes.append(change)
        if status in FINAL and self.ended is None:
            self.ended = now
        return change

    def on_info(self, info: JobInfo, now: datetime | None = None) -> Change | None:
        """A status read from the backend; returns the change, if it is one."""
        now = now or _now()
        self.error = None
        created = _parse_time(info.created)
        if created is not None:
            self.started = created
        self.nodes = max(self.nodes, info.num_nodes)
        self.procs_per_node = info.procs_per_node
        for k in range(self.nodes):
            self.lines.setdefault(k, deque(maxlen=self.max_lines))
            self.dropped.setdefault(k, 0)
        if self.finished:
            return None
        if self.cancel_state == "requested":
            return None  # keep showing "Cancelling" until the delete returns
        status = info.status.value if isinstance(info.status, Status) else str(info.status)
        change = self._set(status, info.reason, now)
        if status in FINAL:
            self.ended = _parse_time(info.finished) or self.ended or now
        return change

    def on_gone(self, now: datetime | None = None) -> Change | None:
        """The job no longer exists: cancelled here, or deleted elsewhere."""
        if self.finished:
            return None
        if self.cancel_state is not None:
            return self._set(CANCELLED, None, now or _now())
        return self._set(DELETED, "the job was deleted", now or _now())

    def on_error(self, message: str) -> None:
        """The backend could not be read; the monitor shows it and keeps trying."""
        self.error = message

    # -- logs --

    def on_lines(self, lines: Iterable[LogLine]) -> list[str]:
        """Buffer new log lines (the newest ``max_lines`` per node); returns them as shown."""
        shown = []
        for line in lines:
            text = f"{line.prefix} {line.text}"
            buf = self.lines.setdefault(line.node, deque(maxlen=self.max_lines))
            if len(buf) == self.max_lines:
                self.dropped[line.node] = self.dropped.get(line.node, 0) + 1
            buf.append(text)
            if len(self.all_lines) == self.max_lines:
                self.all_dropped += 1
            self.all_lines.append(text)
            self.offsets[line.node] = max(self.offsets.get(line.node, 0), line.offset)
            shown.append(text)
        return shown

    def node_text(self, node: int | None = None) -> str:
        """One node's buffered log (all nodes with None), with a note of dropped lines."""
        lines, dropped = (
            (self.all_lines, self.all_dropped)
            if node is None
            else (self.lines.get(node, ()), self.dropped.get(node, 0))
        )
        head = f"… {dropped} earlier line(s) not shown\n" if dropped else ""
        return head + "\n".join(lines)

    # -- time --

    def elapsed(self, now: datetime | None = None) -> str:
        end = self.ended or now or _now()
        return format_elapsed((end - self.started).total_seconds())

    # -- cancel --

    def request_cancel(self, now: datetime | None = None) -> bool:
        """Whether the caller should delete the job now (not twice, not once it ended)."""
        if self.finished or self.cancel_state in ("requested", "done"):
            return False
        self.cancel_state = "requested"
        self._before_cancel = (self.status, self.reason)
        self._set(CANCELLING, None, now or _now())
        return True

    def cancel_finished(
        self, ok: bool, message: str | None = None, now: datetime | None = None
    ) -> Change | None:
        now = now or _now()
        if ok:
            self.cancel_state = "done"
            if self.status in (Status.COMPLETE.value, CANCELLED):
                return None
            self.ended = None
            return self._set(CANCELLED, None, now)
        self.cancel_state = "failed"
        self.error = f"cancel failed: {message}"
        return self._set(*self._before_cancel, now)

    # -- presentation --

    @property
    def color(self) -> str:
        return COLORS.get(self.status, "#757575")

    @property
    def shape(self) -> str:
        return f"{self.nodes} node(s) × {self.procs_per_node} process(es)"

    def summary(self, now: datetime | None = None) -> str:
        reason = f": {self.reason}" if self.reason else ""
        return f"[{self.name}] {self.status}{reason} ({self.elapsed(now)})"


# ---------------------------------------------------------------------------------------------
# Views


class TextView:
    """Prints status changes and log lines (a terminal, or a front end without widgets)."""

    def __init__(self, stream=None):
        self._stream = stream

    @property
    def stream(self):
        return self._stream or sys.stdout

    def started(self, model: MonitorModel) -> None:
        self._print(
            f"[{model.name}] submitted to the {model.backend or ''} backend: {model.shape}; "
            f"logs follow (cancel: %kale_delete {model.name})"
        )

    def update(self, model: MonitorModel, change: Change | None, lines: list[str]) -> None:
        if change is not None and change.status not in FINAL:
            self._print(model.summary())
        for text in lines:
            self._print(text)
        if change is not None and change.status in FINAL:
            self._print(model.summary())
        if model.error and change is None and not lines:
            self._print(f"[{model.name}] {model.error}")

    def tick(self, model: MonitorModel) -> None:
        pass

    def _print(self, text: str) -> None:
        try:
            print(text, file=self.stream, flush=True)
        except (ValueError, OSError):  # the stream was closed (the kernel is going away)
            pass

    def display(self, model: MonitorModel) -> None:
        self._print(f"{model.summary()}: {model.shape} on the {model.backend} backend")


class WidgetView:
    """ipywidgets: badge, title, elapsed time, cancel button, reason, logs per node in tabs."""

    def __init__(self, model: MonitorModel, on_cancel):
        import ipywidgets as w

        self._w = w
        self.badge = w.HTML(layout=w.Layout(width="auto"))
        self.badge.add_class("kale-ext-badge")
        self.title = w.HTML(
            f"<b>{html.escape(model.name)}</b> · {html.escape(model.backend)} · "
            f"{html.escape(model.shape)}",
            layout=w.Layout(width="auto"),
        )
        self.clock = w.HTML(layout=w.Layout(width="auto"))
        self.clock.add_class("kale-ext-elapsed")
        self.button = w.Button(
            description="Cancel", icon="stop", button_style="danger", tooltip="Delete the job"
        )
        self.button.add_class("kale-ext-cancel")
        self.button.on_click(lambda _: on_cancel())
        self.reason = w.HTML()
        self.reason.add_class("kale-ext-reason")
        self.logs: dict[int | None, object] = {}
        self._texts: dict[int | None, str] = {}
        self.tabs = None
        self.widget = w.VBox(
            [w.HBox([self.badge, self.title, self.clock, self.button]), self.reason],
        )
        self.widget.add_class("kale-ext-monitor")
        self._build_logs(model)
        self.update(model, None, [])

    def _log_widget(self, key: int | None):
        log = self._w.HTML()
        log.add_class("kale-ext-log" if key is None else f"kale-ext-log-node-{key}")
        self.logs[key] = log
        return log

    def _build_logs(self, model: MonitorModel) -> None:
        w = self._w
        if model.nodes <= 1:
            self.widget.children = (*self.widget.children, self._log_widget(0))
            return
        keys: list[int | None] = [None, *range(model.nodes)]
        children = [self._log_widget(k) for k in keys]
        titles = ["all nodes", *(f"node {k}" for k in range(model.nodes))]
        self.tabs = w.Tab(children=children, titles=titles)
        self.tabs.add_class("kale-ext-logs")
        self.widget.children = (*self.widget.children, self.tabs)

    def update(self, model: MonitorModel, change: Change | None, lines: list[str]) -> None:
        status = html.escape(model.status)
        self.badge.value = (
            f'<span class="kale-ext-status" data-status="{status}" style="background:'
            f"{model.color};color:white;border-radius:10px;padding:2px 10px;"
            f'font-weight:600">{status}</span>'
        )
        self.tick(model)
        note = model.error or model.reason or ""
        self.reason.value = f"<span>{html.escape(note)}</span>" if note else ""
        self.button.disabled = model.finished or model.cancel_state in ("requested", "done")
        if model.cancel_state == "requested":
            self.button.description = "Cancelling…"
        for key, log in self.logs.items():
            text = model.node_text(key)
            if text != self._texts.get(key):
                self._texts[key] = text
                log.value = (
                    '<pre style="max-height:24em;overflow:auto;margin:0;font-size:12px">'
                    f"{html.escape(text)}</pre>"
                )

    def tick(self, model: MonitorModel) -> None:
        value = f"<span>{model.elapsed()}</span>"
        if self.clock.value != value:
            self.clock.value = value

    def started(self, model: MonitorModel) -> None:
        pass

    def bundle(self, model: MonitorModel) -> dict:
        """The widget, with a plain-text stand-in for front ends that cannot render it."""
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = (
            f"{model.summary()}: {model.shape} on the {model.backend} backend "
            f"(a live monitor where widgets render; `%kale_logs {model.name}` prints the logs)"
        )
        return data

    def display(self, model: MonitorModel) -> None:
        from IPython.display import display

        display(self.bundle(model), raw=True)


def widgets_can_render(shell=None) -> bool:
    """Whether a front end can show widgets: a kernel with comms (not a plain terminal).

    ``KALE_EXT_MONITOR=text`` or ``=widget`` decides instead."""
    choice = os.environ.get("KALE_EXT_MONITOR", "").lower()
    if choice in ("text", "widget"):
        return choice == "widget"
    if shell is None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            return False
    if getattr(shell, "kernel", None) is None:
        return False
    try:
        import comm  # noqa: F401
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# The monitor


class JobMonitor:
    """Watches one job from a background thread; display it to see it (``_ipython_display_``).

    ``monitor.wait()`` blocks until the job ends; ``monitor.cancel()`` deletes it.
    """

    def __init__(
        self,
        backend,
        name: str,
        *,
        nodes: int = 1,
        procs_per_node: int = 1,
        view: str | None = None,
        interval: float = 0.5,
        max_lines: int = 1000,
        start: bool = True,
        shell=None,
    ):
        self.backend = backend
        self.name = name
        self.interval = interval
        self.model = MonitorModel(
            name,
            backend=getattr(backend, "name", ""),
            nodes=nodes,
            procs_per_node=procs_per_node,
            max_lines=max_lines,
        )
        if view is None:
            view = "widget" if widgets_can_render(shell) else "text"
        if view not in ("widget", "text"):
            raise ValueError(f"view must be 'widget' or 'text', not {view!r}")
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._errors = 0
        self._thread: threading.Thread | None = None
        self.view = WidgetView(self.model, self.cancel) if view == "widget" else TextView()
        self.view.started(self.model)
        if start:
            self.start()

    # -- polling --

    def poll(self) -> bool:
        """Read the job's status and new log lines once; False when there is nothing left."""
        try:
            info = self.backend.get_job(self.name)
            lines = list(
                self.backend.logs(self.name, follow=False, offsets=dict(self.model.offsets))
            )
        except NotFound:
            with self._lock:
                change = self.model.on_gone()
                self.view.update(self.model, change, [])
            return False
        except KaleExtError as e:
            self._errors += 1
            with self._lock:
                self.model.on_error(str(e))
                self.view.update(self.model, None, [])
            return self._errors < MAX_ERRORS
        self._errors = 0
        with self._lock:
            change = self.model.on_info(info)
            shown = self.model.on_lines(lines)
            if change is not None or shown:
                self.view.update(self.model, change, shown)
            else:
                self.view.tick(self.model)
        return not self.model.finished

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.poll():
                self._stop.wait(self.interval)
        except Exception as e:  # never let a monitor thread die silently
            with self._lock:
                self.model.on_error(f"the monitor stopped: {type(e).__name__}: {e}")
                self.view.update(self.model, None, [])

    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name=f"kale-ext-monitor-{self.name}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop watching (the job keeps running)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> str:
        """Block until the job ends (or ``timeout`` seconds); returns the status."""
        if self._thread is None:
            self.start()
        self._thread.join(timeout)
        return self.model.status

    @property
    def status(self) -> str:
        return self.model.status

    # -- cancel --

    def cancel(self, wait: bool = False) -> None:
        """Delete the job, in the background unless ``wait``."""
        with self._lock:
            if not self.model.request_cancel():
                return
            self.view.update(self.model, self.model.changes[-1], [])

        def run() -> None:
            try:
                self.backend.delete(self.name)
                ok, message = True, None
            except NotFound:
                ok, message = True, None
            except KaleExtError as e:
                ok, message = False, str(e)
            with self._lock:
                change = self.model.cancel_finished(ok, message)
                self.view.update(self.model, change, [])

        if wait:
            run()
        else:
            threading.Thread(target=run, name=f"kale-ext-cancel-{self.name}", daemon=True).start()

    # -- display --

    def _ipython_display_(self) -> None:
        self.view.display(self.model)

    def __repr__(self) -> str:
        return f"<JobMonitor {self.name}: {self.model.status}>"
