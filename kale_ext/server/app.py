"""KaleExtApp: the jupyter_server extension application.

Loading it costs next to nothing: the compiler, the backends, the Kubeflow SDK and kubernetes are
imported by the handlers on first use (in a worker thread), never at server start-up.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from jupyter_server.extension.application import ExtensionApp
from traitlets import (
    Bool,
    CaselessStrEnum,
    Dict,
    Float,
    Int,
    List,
    TraitError,
    Type,
    Unicode,
    Union,
    default,
    validate,
)

from ..job.runtimes import DEFAULT_RUNTIME
from . import warmup
from .handlers import handlers
from .warmup import usable_cpus


class KaleExtApp(ExtensionApp):
    """Serves the kale_ext REST API under `<base_url>/kale-ext/` (see docs/rest-api.md)."""

    name = "kale_ext"
    description = "From a tagged notebook to a distributed training job: REST API and log streams."
    load_other_extensions = True

    backend = CaselessStrEnum(
        ["auto", "local", "kubernetes"],
        default_value="auto",
        help="Where jobs run: `local` (processes on this machine), `kubernetes` (Kubeflow "
        "Trainer), or `auto`: KALE_EXT_BACKEND, else kubernetes when a cluster is configured, "
        "else local.",
    ).tag(config=True)

    backend_class = Type(
        default_value=None,
        allow_none=True,
        help="A Backend subclass to use instead of `backend` (tests swap in fakes this way). "
        "It is constructed with whichever of jobs_dir, namespace and poll_interval it accepts.",
    ).tag(config=True)

    namespace = Unicode(
        None, allow_none=True, help="Kubernetes namespace of the jobs (default: the kubeconfig's)."
    ).tag(config=True)

    # Defaults of new jobs, for this server's users (their JupyterLab settings come first; see
    # kale_ext/defaults.py). `backend` and `namespace` above are defaults of the same kind.
    runtime = Unicode(DEFAULT_RUNTIME, help="The training runtime of new jobs.").tag(config=True)
    image = Unicode(
        None, allow_none=True, help="Container image of the nodes (default: the runtime's)."
    ).tag(config=True)
    pip_index_urls = List(
        Unicode(), help="Package indexes the nodes install from (a notebook's own come first)."
    ).tag(config=True)
    nodes = Int(None, allow_none=True, help="Nodes per job (default: the runtime's).").tag(
        config=True
    )
    cpu = Union(
        [Unicode(), Float()], default_value=None, allow_none=True, help="CPU per node."
    ).tag(config=True)
    memory = Unicode(None, allow_none=True, help="Memory per node, e.g. 16Gi.").tag(config=True)
    gpu = Union(
        [Int(), Unicode()],
        default_value=None,
        allow_none=True,
        help="GPUs per node: a count, or a MIG profile such as mig-1g.5gb.",
    ).tag(config=True)
    stall_seconds = Int(
        600,
        allow_none=True,
        help="A running job without a log line or a metric for this many seconds shows as "
        "Stalled (it is not stopped); None: never.",
    ).tag(config=True)
    mlflow_tracking_uri = Unicode(
        None,
        allow_none=True,
        help="Experiment tracking: each job is a run on this MLflow tracking server, e.g. "
        "http://mlflow.example:5000 (MLFLOW_TRACKING_URI, when set, comes first). None: off.",
    ).tag(config=True)
    local_capacity = Int(
        None,
        allow_none=True,
        help="Local backend: processes that run at once over all jobs (nodes × processes per "
        "node); a job beyond it waits in line as Queued. None: this machine's CPU count.",
    ).tag(config=True)
    local_nice = Int(
        10,
        help="Local backend: the nice value local jobs' processes run at, 0 (the server's own "
        "priority) to 19 (the lowest). Below the server's, so that the server, the panel and the "
        "kernels stay responsive while jobs take every core; an idle machine gives jobs all of it.",
    ).tag(config=True)
    keep_finished_days = Int(
        None,
        allow_none=True,
        help="Finished jobs older than this many days are pruned at a submit, at most once an "
        "hour (their outputs stay). None: kept until pruned by hand (kale-ext prune).",
    ).tag(config=True)

    option_limits = Dict(
        value_trait=Int(),
        help="Lower bounds of job options, {option: maximum} (at most the built-in bound), e.g. "
        "{'nodes': 8, 'procs_per_node': 4, 'packages': 20}: a job beyond one is refused naming "
        "the limit. The CLI and the magics read the same setting (kale_ext/job/limits.py).",
    ).tag(config=True)

    allow_package_urls = Bool(
        False,
        help="Let a job's packages be URLs (`pkg @ https://...`, a wheel's URL, `file:...`); "
        "off: only requirements from the package indexes. The CLI and the magics read it too.",
    ).tag(config=True)

    allow_cpu_for_gpu = Bool(
        False,
        help="Local backend: run a job that asks for GPUs on the CPU (CUDA_VISIBLE_DEVICES empty) "
        "when this machine has none, instead of refusing it.",
    ).tag(config=True)

    poll_interval = Float(
        1.0, help="Seconds between status polls of backends that poll (kubernetes)."
    ).tag(config=True)

    jobs_dir = Unicode(
        None,
        allow_none=True,
        help="Directory of the local backend's jobs (default: KALE_EXT_JOBS_DIR, else "
        "<jupyter data dir>/kale_ext/jobs).",
    ).tag(config=True)

    max_body_bytes = Int(
        8 * 1024 * 1024,
        help="Largest request body accepted (413 beyond it). Send a notebook's path instead of "
        "its content when it is larger.",
    ).tag(config=True)

    max_notebook_bytes = Int(
        100 * 1024 * 1024,
        help="Largest notebook file a request may name by its path (413 beyond it, before it is "
        "read); only regular files are read.",
    ).tag(config=True)

    worker_threads = Int(
        4,
        help="Threads for heavy work: compiling, submits, sweeps, deletes (log streams and "
        "cheap reads have their own).",
    ).tag(config=True)

    read_threads = Int(
        4,
        help="Threads for cheap reads (runtimes, defaults, jobs, status): they never wait "
        "behind heavy work.",
    ).tag(config=True)

    work_deadline = Float(
        600.0,
        help="Seconds a heavy request (submit, sweep, probe) may take before it is a 504 "
        "(work not started yet is dropped; a client that leaves drops its queued work too).",
    ).tag(config=True)

    client_share = Int(
        8,
        help="Heavy requests one client address may have running or waiting at once (429 beyond "
        "it).",
    ).tag(config=True)

    compile_processes = Int(
        help="Processes that compile for POST compile (started on the first request, each a "
        "child of the server that ends with it). 0 compiles in the worker threads, where "
        "concurrent compiles share one core under the GIL; N > 0 spreads them over N cores, "
        "for about 60 MB each. Default: 2 when this server may use at least 2 CPUs (affinity "
        "and cgroup quota), else 0.",
    ).tag(config=True)

    @default("compile_processes")
    def _default_compile_processes(self) -> int:
        return 2 if usable_cpus() >= 2 else 0

    warm_up = Bool(
        True,
        help="On the first request to the extension (the panel asks for the backend and the "
        "runtimes when it opens), import the compiler and the TrainJob models in a background "
        "thread, so the first compile does not pay for them.",
    ).tag(config=True)

    gc_freeze = Bool(
        True,
        help="After the warm-up's full garbage collection, move every surviving object (the "
        "modules, classes and settings of the server and its extensions) to CPython's permanent "
        "generation (gc.freeze), so the full collections that come later, which stop every "
        "thread and the event loop, scan only newer objects: a few ms instead of 50-250 ms. "
        "Reference counting still frees those objects; only cycles among them stay.",
    ).tag(config=True)

    debug_loop_lag = Bool(
        False,
        help="Debug only: measure the event loop's lag every 10 ms and serve the figures at "
        "GET kale-ext/debug/loop-lag (used by benchmarks/server.py).",
    ).tag(config=True)

    @validate("backend_class")
    def _check_backend_class(self, proposal):
        cls = proposal["value"]
        if cls is not None:
            from ..backends.base import Backend

            if not issubclass(cls, Backend):
                raise TraitError(f"backend_class must be a Backend subclass, not {cls!r}")
        return cls

    @validate("option_limits")
    def _check_limits(self, proposal):
        from ..errors import ConfigError
        from ..job.limits import check

        try:
            return check(dict(proposal["value"]))
        except ConfigError as e:
            raise TraitError(f"{e.field}: {e.message}") from None

    @validate(
        "max_body_bytes",
        "max_notebook_bytes",
        "worker_threads",
        "read_threads",
        "client_share",
        "compile_processes",
    )
    def _check_count(self, proposal):
        least = 0 if proposal["trait"].name == "compile_processes" else 1
        if proposal["value"] < least:
            raise TraitError(f"{proposal['trait'].name} must be at least {least}")
        return proposal["value"]

    # -- set-up and tear-down --

    def initialize_settings(self):
        from ..job.limits import configure

        # also in the compile processes
        configure(self.option_limits, by_server=True, package_urls=self.allow_package_urls)
        self._executor = _HeavyThreads(self.worker_threads, thread_name_prefix="kale_ext")
        self._reads = ThreadPoolExecutor(self.read_threads, thread_name_prefix="kale_ext-read")
        self.deleting: set[str] = set()  # jobs a DELETE is deleting now
        self.heavy_by_client: dict[str, int] = {}  # heavy requests running or waiting, by client
        self._pool = None  # the compile processes (compile_pool.CompilePool), on first use
        self._backend_lock = threading.Lock()
        self._backend = None
        self._backend_key = None
        self._backend_reason = ""
        self._streams: set = set()
        self._lag = None
        self._warmed = not self.warm_up
        self._warm_ups: list = []  # the warm-up's futures, once started

    def initialize_handlers(self):
        self.handlers.extend(handlers())

    async def _start_jupyter_server_extension(self, serverapp):
        if self.debug_loop_lag:
            self.loop_lag()

    def loop_lag(self):
        """The event-loop lag probe (debug_loop_lag), started on the running loop."""
        if self._lag is None:
            from .debug import LoopLag

            self._lag = LoopLag()
            self._lag.start()
        return self._lag

    async def stop_extension(self):
        from ..job.limits_held import release

        release()
        for stream in list(self._streams):
            stream.stop()
        if self._lag is not None:
            self._lag.stop()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._reads.shutdown(wait=False, cancel_futures=True)
        if self._pool is not None:
            self._pool.close()

    # -- used by the handlers --

    def warm(self) -> None:
        """Called by every request: the first one starts the warm-up (and the compile
        processes, each of which warms up as it starts)."""
        if not self._warmed:
            self._warmed = True
            self._warm_ups = [self._executor.submit(warmup.warm_up, self.gc_freeze)]
            if self.compile_processes:
                self.compile_pool().start()

    @property
    def warmed_up(self) -> bool:
        """Whether the warm-up (and the compile processes') has finished (the debug figures
        report it)."""
        pool = self._pool
        pool_ready = pool is None or pool.ready or pool.failed is not None
        return bool(self._warm_ups) and all(f.done() for f in self._warm_ups) and pool_ready

    async def run(self, fn, *args, **kwargs):
        """Run blocking heavy work in the extension's thread pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def overdue(self, future) -> None:
        """Heavy work past its deadline (its caller got a 504): a thread cannot be killed, so
        while it still runs another thread takes its place (at most worker_threads more)."""
        self._executor.lend(future)

    def start_work(self, fn, *args):
        """Heavy work queued in the thread pool: its concurrent Future (cancel drops it while
        it waits)."""
        return self._executor.submit(fn, *args)

    async def read(self, fn, *args, **kwargs):
        """Run a cheap blocking read in its own threads: never queued behind heavy work."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reads, functools.partial(fn, *args, **kwargs))

    def compute(self, fn, *args, client: str = ""):
        """CPU-bound work (compiling): an awaitable of ``fn(*args)``, in the compile processes
        when there are any (``fn`` and its arguments must pickle; a compile_pool.PoolError when
        a process could not answer: 503, or 504 past work_deadline), else in a thread. Cancel
        it to drop the work while it waits."""
        pool = self.compile_pool() if self.compile_processes else None
        if pool is None or pool.failed is not None:
            return asyncio.ensure_future(self.run(fn, *args))
        return pool.submit(fn, *args, client=client, deadline=self.work_deadline)

    def compile_pool(self):
        """The compile processes (made on first use; they start on the first call)."""
        if self._pool is None:
            from .compile_pool import CompilePool

            self._pool = CompilePool(
                self.compile_processes,
                warm_up=(
                    warmup.warm_up,
                    (True, dict(self.option_limits), self.allow_package_urls, os.getpid()),
                ),
                log=self.log,
            )
        return self._pool

    def defaults(self, strict: bool = True):
        """The effective defaults (kale_ext.defaults): this server's configuration, under the
        user's JupyterLab settings (reread when they change). Raises ConfigError, unless
        ``strict=False`` (invalid values passed over)."""
        from ..job.defaults import FIELDS, Defaults, load

        built_in = Defaults()
        configured = {}
        for name in FIELDS:
            value = getattr(self, name)
            value = value.lower() if name == "backend" else value
            if (tuple(value) if isinstance(value, list) else value) != getattr(built_in, name):
                configured[name] = value
        return load(server=configured, lab_dir=self._lab_settings_dir(), strict=strict)

    def _lab_settings_dir(self) -> str | None:
        """JupyterLab's user settings directory, as this server's JupyterLab has it."""
        manager = getattr(self.serverapp, "extension_manager", None)
        for app in manager.extension_apps.get("jupyterlab", ()) if manager else ():
            return getattr(app, "user_settings_dir", None)
        return None

    def get_backend(self, defaults=None):
        """The backend and why it was chosen (blocking: call in a thread). Made on first use, and
        again when the defaults' backend or namespace change (the user's JupyterLab settings).
        ``defaults``: the valid defaults (`defaults()`) when the caller has them already."""
        # an invalid default elsewhere (say cpu) must not stop the panel from finding its jobs:
        # compiles and GET defaults report it (valid defaults are the lenient ones too)
        if self.backend_class is not None:
            defaults = None
        elif defaults is None:
            defaults = self.defaults(strict=False)
        key = None if defaults is None else (defaults.backend, defaults.namespace)
        if defaults is not None and self._backend is not None:  # a watch setting: no new backend
            self._backend.stall_seconds = defaults.stall_seconds
            if hasattr(self._backend, "capacity"):  # the local queue's, and its priority
                self._backend.capacity = defaults.local_capacity
                self._backend.nice = defaults.local_nice
        with self._backend_lock:
            if self._backend is None or key != self._backend_key:
                self._backend, self._backend_reason = self._make_backend(defaults)
                self._backend_key = key
            return self._backend, self._backend_reason

    def _make_backend(self, defaults):
        from ..backends.choose import choose_backend, settings_for

        offered = {
            "jobs_dir": self.jobs_dir,
            "poll_interval": self.poll_interval,
            "allow_cpu_for_gpu": self.allow_cpu_for_gpu,
        }
        if self.backend_class is not None:
            cls = self.backend_class
            backend = cls(**settings_for(cls, {**offered, "namespace": self.namespace}))
            return backend, f"configured: {cls.__name__}"
        # the defaults hold this server's namespace, under the user's JupyterLab settings
        return choose_backend(None, defaults, **offered)


class _HeavyThreads(ThreadPoolExecutor):
    """The heavy threads; one whose work passed its deadline is lent a substitute until it
    ends, so work that overruns (a peer, a disk) never takes the others' places for good."""

    def __init__(self, size: int, **kwargs):
        super().__init__(size, **kwargs)
        self._size, self._lent, self._lending = size, 0, threading.Lock()

    def lend(self, future) -> None:
        with self._lending:
            if future.done() or self._lent >= self._size:
                return
            self._lent += 1
            self._max_workers += 1
            self._adjust_thread_count()
        future.add_done_callback(self._returned)

    def _returned(self, _future) -> None:
        with self._lending:
            self._lent -= 1
            self._max_workers -= 1  # the spare thread stays, idle: the pool never shrinks
