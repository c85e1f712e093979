"""`%%trainjob --sweep` and `%kale_sweeps` under a real IPython shell: real sweeps of local jobs,
the trial table live, the best marked; bad input one clear message."""

from __future__ import annotations

import pytest

from kale_ext.ipython.sweep import SweepMonitor, SweepTable
from kale_ext.runs import record as rec
from tests.ipython.test_magics import ip, run, usage_error  # noqa: F401 (ip: a fixture)
from tests.runs.conftest import wait_for

TIMEOUT = 180
CELL = """\
from kale_ext import report
report(step=0, accuracy=quality * layers)
print("trained", quality, layers)
"""
SLOW = """\
import time
from kale_ext import report
for step in range(400):
    report(step=step, accuracy=quality)
    time.sleep(0.05)
"""


def test_a_grid_from_the_cell_shows_both_trials_and_the_best(ip, capsys):  # noqa: F811
    run(ip, "quality = 0.5\nlayers = 1\n")
    line = "--backend local --sweep quality=0.6,0.9 --param layers=2 --metric accuracy --parallel 2"
    monitor = run(ip, f"%%trainjob {line}\n{CELL}")
    assert isinstance(monitor, SweepMonitor) and monitor.name.startswith("trainjob-")
    assert monitor.wait(TIMEOUT) == "Complete", monitor.text()
    name = monitor.name
    assert monitor.best == f"{name}-1"
    trials = monitor.record["trials"]
    assert [t["parameters"] for t in trials] == [{"quality": 0.6}, {"quality": 0.9}]
    assert [t["metric"] for t in trials] == [1.2, 1.8]  # --param layers=2 ran in every trial
    out = capsys.readouterr().out  # the text view printed the table as trials ended
    last = out.strip().split("\n\n")[-1].splitlines()
    assert last[0] == f"sweep {name}: Complete (2 of 2 complete; best {name}-1)"
    assert last[2].split()[:5] == ["*", "1", f"{name}-1", "Complete", "0.9"]
    widget = SweepMonitor(name, view="widget")  # where widgets render: an HTML table
    page = widget._table.value
    assert page.count('class="kale-ext-trial"') == 2 and f"{name}-0" in page
    best_row = page.split('class="kale-ext-trial"')[1]
    assert best_row.split("</tr>")[0].count("★") == 1 and f"{name}-1" in best_row
    assert widget._button.disabled
    shown = run(ip, "%kale_sweeps")
    assert isinstance(shown, SweepTable) and f"best {name}-1" in str(shown)
    assert run(ip, f"%kale_sweeps {name}").status == "Complete"
    assert "has ended already (Complete)" in usage_error(
        ip, capsys, f"%kale_sweeps --cancel {name}"
    )


def test_kale_sweeps_cancel_stops_a_sweep_from_the_notebook(ip):  # noqa: F811
    run(ip, "quality = 0.1\n")
    monitor = run(ip, f"%%trainjob --backend local --sweep quality=0.1,0.2\n{SLOW}")
    name = monitor.name
    wait_for(lambda: any(t["status"] == "Running" for t in rec.read(name)["trials"]))
    cancelled = run(ip, f"%kale_sweeps --cancel {name}")
    assert cancelled.status == "Cancelled" and monitor.wait(TIMEOUT) == "Cancelled"
    assert [t["status"] for t in cancelled.record["trials"]] == ["Cancelled"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("--sweep depth=1,2", "%%trainjob: param.depth: the notebook has no such parameter"),
        ("--sweep quality", "%%trainjob: --sweep quality: expects NAME=VALUES"),
        ("--random 2", "%%trainjob: --random needs --sweep NAME=VALUES"),
        ("--sweep quality=0.1 --random 2", "%%trainjob: metric: a random search needs the metric"),
        ("--sweep quality=0.1 --dry-run", "%%trainjob: --dry-run shows one job"),
        (
            "--sweep quality=0.1 --param quality=0.2",
            "%%trainjob: --param quality and --sweep quality",
        ),
        ("--sweep quality=0.1 --parallel x", "argument --parallel: invalid int value: 'x'"),
    ],
)
def test_a_bad_sweep_is_one_clear_message(ip, capsys, line, says):  # noqa: F811
    run(ip, "quality = 0.5\nlayers = 1\n")
    assert says in usage_error(ip, capsys, f"%%trainjob --backend local {line}\n{CELL}")
    assert "no sweeps" in str(run(ip, "%kale_sweeps"))


def test_kale_sweeps_names_an_unknown_sweep(ip, capsys):  # noqa: F811
    assert usage_error(ip, capsys, "%kale_sweeps nope") == "%kale_sweeps: no sweep named 'nope'"
