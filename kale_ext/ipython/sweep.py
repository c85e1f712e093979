"""Sweeps from the notebook: `%%trainjob --sweep lr=1e-3,1e-2 --sweep batch=32,64` runs the cell
once per point (the CLI's search flags: --random N, --search tpe, --seed, --parallel, --metric,
--goal, --early-stop), each trial an ordinary job; `%kale_sweeps [NAME] [--cancel NAME]`.

The cell is compiled as `%%trainjob` compiles it (its kernel literals are the parameters a
``--sweep`` names); the sweep starts through ``kale_ext.runs.sweep``, as `kale-ext sweep` does.
:class:`SweepMonitor` shows the trial table (best first, the best marked), updated as trials end.
"""

from __future__ import annotations

import html
import threading

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser

from ..errors import KaleExtError
from ..runs.flags import FLAGS, add_flags, chosen
from .usage import parse, user_errors

#: A sweep's statuses while its driver works.
ACTIVE = ("Starting", "Running")


def add_sweep_flags(parser) -> None:
    """`--sweep NAME=VALUES` (repeatable) and the search flags, for `%%trainjob`."""
    group = parser.add_argument_group("sweep (run the cell once per point; each trial a job)")
    group.add_argument("--sweep", action="append", metavar="NAME=VALUES", help="sweep a "
                       "parameter: 1e-3,1e-2, choice(a,b), or a range for --random/--search tpe: "
                       "uniform(LOW,HIGH), loguniform(LOW,HIGH), int(LOW,HIGH)")  # fmt: skip
    add_flags(group)


def sweeping(args) -> bool:
    """Whether `%%trainjob` runs a sweep; a search flag without --sweep is a UsageError."""
    if args.sweep:
        return True
    for flag, keywords in FLAGS:
        if getattr(args, flag[2:].replace("-", "_")) not in (None, False, keywords.get("default")):
            raise UsageError(f"%%trainjob: {flag} needs --sweep NAME=VALUES (what to sweep)")
    return False


def _specs(items: list[str]) -> dict[str, str]:
    specs = {}
    for item in items:
        name, eq, spec = item.partition("=")
        if not eq or not name.strip().isidentifier() or not spec.strip():
            raise UsageError(f"%%trainjob: --sweep {item}: expects NAME=VALUES, e.g. lr=1e-3,1e-2")
        if name.strip() in specs:
            raise UsageError(f"%%trainjob: --sweep {name.strip()} is given twice")
        specs[name.strip()] = spec.strip()
    return specs


def start_sweep(magics, args, cell: str) -> SweepMonitor:
    """`%%trainjob --sweep ...`: compile the cell, start the sweep, return its live table."""
    from ..backends.snapshots import nbformat_of
    from ..job.defaults import load
    from ..runs import sweep

    if args.dry_run:
        raise UsageError("%%trainjob: --dry-run shows one job: give --param values, not --sweep")
    specs = _specs(args.sweep)
    options = magics._options(args)
    both = sorted(set(options.get("parameters") or {}) & set(specs))
    if both:  # every other --param applies to every trial
        raise UsageError(f"%%trainjob: --param {both[0]} and --sweep {both[0]}: set it or "
                         "sweep it, not both")  # fmt: skip
    name = options.pop("name", None)
    workspace, place = magics._workspace(options, {}, None)
    job, _, _, nb = magics._compile_cell(cell, workspace)  # errors in the cell's own words
    defaults = load()
    backend = magics._backend(args, defaults)
    record = sweep.start(backend, nbformat_of(nb), specs, options, name=name,
                         notebook_path=job.notebook, place=place, defaults=defaults,
                         **chosen(args))  # fmt: skip
    return SweepMonitor(record["name"], shell=magics.shell)


class SweepMonitor:
    """A sweep's trial table, polled from a background thread until the sweep ends: an HTML
    widget where widgets render (with a Cancel button), else printed each time it changes."""

    def __init__(self, name: str, *, shell=None, interval: float = 0.5, view: str | None = None):
        from .views import widgets_can_render

        self.name = name
        self.interval = interval
        self.record: dict = {}
        self.error: str | None = None
        self._stop = threading.Event()
        self._printed: str | None = None
        self._widget = None
        if (view or ("widget" if widgets_can_render(shell) else "text")) == "widget":
            self._build_widget()
        self.poll()
        self._thread = threading.Thread(target=self._run, name=f"kale-ext-sweep-{name}",
                                         daemon=True)  # fmt: skip
        self._thread.start()

    # -- reading the sweep --

    def poll(self) -> bool:
        """Read the sweep once and show it when it changed; False once it has ended."""
        from ..runs import sweep

        try:
            record = sweep.get(self.name)
        except KaleExtError as e:
            self.error = str(e)
            self._show()
            return False
        if record != self.record:
            self.record = record
            self._show()
        return record.get("status") in ACTIVE

    def _run(self) -> None:
        while not self._stop.wait(self.interval) and self.poll():
            pass

    def wait(self, timeout: float | None = None) -> str:
        """Block until the sweep ends (or ``timeout`` seconds); its status."""
        self._thread.join(timeout)
        return self.status

    @property
    def status(self) -> str:
        return self.record.get("status", "Unknown")

    @property
    def best(self) -> str | None:
        """The job of the best completed trial."""
        from ..runs.record import best_trial

        found = best_trial(self.record)
        return found["job"] if found else None

    def cancel(self) -> None:
        """Cancel the sweep (its running trials are stopped and kept)."""
        from ..runs import sweep

        try:
            sweep.cancel(self.name)
        except KaleExtError as e:
            self.error = str(e)
        self.poll()

    def stop(self) -> None:
        """Stop watching (the sweep goes on)."""
        self._stop.set()

    # -- showing it --

    def text(self) -> str:
        from ..runs.record import table

        if not self.record:
            return f"sweep {self.name}: {self.error or 'not found'}"
        return table(self.record) + (f"\n{self.error}" if self.error else "")

    def html(self) -> str:
        return sweep_html(self.record, self.error) if self.record else html.escape(self.text())

    def _build_widget(self) -> None:
        import ipywidgets as w

        self._table = w.HTML()
        self._button = w.Button(description="Cancel sweep", icon="stop", button_style="danger")
        self._button.on_click(lambda _: threading.Thread(target=self.cancel, daemon=True).start())
        self._widget = w.VBox([self._button, self._table])
        self._widget.add_class("kale-ext-sweep")

    def _show(self) -> None:
        if self._widget is not None:
            self._table.value = self.html()
            self._button.disabled = self.status not in ACTIVE and self.status != "Interrupted"
            return
        text = self.text()
        if text != self._printed:
            self._printed = text
            print(text + "\n", flush=True)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        if self._widget is None:
            print(f"sweep {self.name} (cancel: %kale_sweeps --cancel {self.name})")
            return
        data = dict(self._widget._repr_mimebundle_() or {})
        data["text/plain"] = self.text()
        display(data, raw=True)

    def __repr__(self) -> str:
        return f"<SweepMonitor {self.name}: {self.status}>"


def sweep_html(record: dict, note: str | None = None) -> str:
    """The trial table as HTML: best first, the best marked ★, each trial's reason."""
    from ..metrics import format_value
    from ..runs.record import summary

    data = summary(record)
    params = [d["name"] for d in record.get("space", [])]
    metric = record.get("metric") or "metric"
    head = ["", "trial", "job", "status", *params, metric, "reason"]
    rows = []
    for t in data["trials"]:
        value = t.get("metric")
        cells = ["★" if t["best"] else "", t["number"], t["job"], t["status"],
                 *(t["parameters"].get(p) for p in params),
                 format_value(value) if isinstance(value, (int, float)) else "",
                 t.get("reason") or ""]  # fmt: skip
        style = ' style="font-weight:600"' if t["best"] else ""
        tds = "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
        rows.append(f'<tr class="kale-ext-trial" data-status="{t["status"]}"{style}>{tds}</tr>')
    title = f"<b>sweep {html.escape(record['name'])}</b>: {html.escape(str(record['status']))}"
    if record.get("reason"):
        title += f" ({html.escape(record['reason'])})"
    ths = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    extra = f"<div>{html.escape(note)}</div>" if note else ""
    return (f"<div>{title}</div>{extra}<table class='kale-ext-sweep-table'><tr>{ths}</tr>"
            + "".join(rows) + "</table>")  # fmt: skip


SWEEPS = MagicArgumentParser(
    prog="%kale_sweeps", description="List sweeps, show one's trials (best first), or cancel one."
)
SWEEPS.add_argument("name", nargs="?", help="a sweep: its trial table")
SWEEPS.add_argument("--cancel", metavar="NAME", help="cancel this sweep: no more trials start, "
                    "the running ones are stopped (kept, Cancelled)")  # fmt: skip


class SweepTable:
    """Sweeps as a listing (HTML in a notebook, text elsewhere)."""

    def __init__(self, rows: list[dict]):
        self.rows = rows

    def __str__(self) -> str:
        if not self.rows:
            return "no sweeps"
        return "\n".join(f"{r['name']:<38}  {r['status']:<11}  {r['tally']}"
                         + (f"  best {r['best']}" if r["best"] else "")
                         for r in self.rows)  # fmt: skip

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(r['name'])}</td><td>{html.escape(r['status'])}"
                       f"</td><td>{html.escape(r['tally'])}</td><td>{html.escape(r['best'] or '')}"
                       "</td></tr>" for r in self.rows)  # fmt: skip
        return ("<table><tr><th>sweep</th><th>status</th><th>trials</th><th>best</th></tr>"
                f"{rows}</table>")  # fmt: skip

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


@magics_class
class SweepMagics(Magics):
    @line_magic
    def kale_sweeps(self, line: str):
        from ..runs import sweep

        args = parse(SWEEPS, line)
        with user_errors("%kale_sweeps"):
            if args.cancel:
                sweep.cancel(args.cancel)
                return SweepMonitor(args.cancel, shell=self.shell)
            if args.name:
                sweep.get(args.name)  # an unknown one: a clear message
                return SweepMonitor(args.name, shell=self.shell)
            return SweepTable(sweep.listing())


SweepMagics.kale_sweeps.__doc__ = SWEEPS.format_help()
