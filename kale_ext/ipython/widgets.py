"""The job monitor: a live status badge, per-node logs (rank-prefixed), elapsed time, cancel,
and plots of the metrics the job reports (``kale_ext.report``).

:class:`JobMonitor` polls a backend from a background thread, so the kernel stays free, and
feeds a :class:`~kale_ext.ipython.monitor.MonitorModel` to a view (``views.py``).
"""

from __future__ import annotations

import threading

from ..backends.base import NotFound
from ..errors import KaleExtError
from .monitor import MonitorModel
from .views import TextView, WidgetView, widgets_can_render

#: Consecutive backend errors after which a monitor stops polling.
MAX_ERRORS = 5


class JobMonitor:
    """Watches one job from a background thread; display it to see it (``_ipython_display_``).

    ``monitor.wait()`` blocks until the job ends; ``monitor.cancel()`` deletes it;
    ``monitor.result()`` waits, then returns what the job's function returned, and
    ``monitor.outputs`` lists and loads its files (kale_ext.runs.handle, as kale_ext.get_job(name)).
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
        show_metric_lines: bool = False,
        start: bool = True,
        shell=None,
        cell_words=None,
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
            show_metric_lines=show_metric_lines,
            cell_words=cell_words,
        )
        if view is None:
            view = "widget" if widgets_can_render(shell) else "text"
        if view not in ("widget", "text"):
            raise ValueError(f"view must be 'widget' or 'text', not {view!r}")
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._errors = 0
        self._thread: threading.Thread | None = None
        self.found_outputs = None  # the job's outputs (backends.base.JobOutputs), once it ended
        self.view = (
            WidgetView(self.model, self.cancel, self._lock) if view == "widget" else TextView()
        )
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
            version = self.model.metrics_version
            shown = self.model.on_lines(lines)
            if change is not None or shown or self.model.metrics_version != version:
                self.view.update(self.model, change, shown)
            else:
                self.view.tick(self.model)
        if self.model.finished and self.found_outputs is None:
            self._show_outputs()
        return not self.model.finished

    def _show_outputs(self) -> None:
        """Once the job ends: what it wrote to KALE_EXT_OUTPUT_DIR, with sizes."""
        read = getattr(self.backend, "outputs", None)  # a Backend has it; a stand-in may not
        try:
            self.found_outputs = read(self.name) if read is not None else None
        except KaleExtError:
            return
        if self.found_outputs is None:
            return
        with self._lock:
            self.view.show_outputs(self.model, self.found_outputs)

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

    def result(self, timeout: float | None = None):
        """Wait for the job, then what its function returned (rank 0's); JobFailed names the
        failure's cell and line, NoResult says why there is no value."""
        from ..runs.handle import JobHandle

        return JobHandle(self.backend, self.name).result(timeout)

    @property
    def outputs(self):
        """The files the job wrote: iterate, or ``.load("model.pt")``."""
        from ..runs.handle import Outputs

        return Outputs(self.backend, self.name)

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
