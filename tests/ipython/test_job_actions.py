"""`%kale_stop`, `%kale_rerun` and `%kale_resume` under a real IPython shell, on real local
jobs."""

from __future__ import annotations

import json

from kale_ext.backends.local import LocalBackend
from kale_ext.ipython.results import JobStatus
from kale_ext.ipython.widgets import JobMonitor
from tests.conftest import notebook
from tests.ipython.test_magics import finished, ip, run, usage_error  # noqa: F401 (ip: a fixture)
from tests.runs.conftest import wait_for

PRINTS = notebook(("epochs = 6\nlr = 0.1\n", ["parameters"]), 'print(f"epochs {epochs} lr {lr}")')
SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)


def _texts(backend: LocalBackend, name: str) -> list[str]:
    return [line.text for line in backend.logs(name)]


def test_kale_rerun_runs_the_recorded_notebook_not_the_one_on_disk(ip, tmp_path):  # noqa: F811
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(PRINTS))
    first = run(ip, f"%kale_submit --notebook {path} --backend local --param epochs=4 --name one")
    assert finished(first) == "Complete"
    path.write_text(json.dumps(notebook(("epochs = 9\nlr = 0.5\n", ["parameters"]), "1/0")))
    again = run(ip, "%kale_rerun one --name two --param lr=0.3 --backend local")
    assert isinstance(again, JobMonitor) and again.name == "two"
    assert finished(again) == "Complete"
    assert _texts(LocalBackend(tmp_path / "jobs"), "two") == ["epochs 4 lr 0.3"]


def test_kale_stop_keeps_the_job_stopped_and_kale_resume_goes_on(ip, tmp_path, capsys):  # noqa: F811
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(SLOW))
    monitor = run(ip, f"%kale_submit --notebook {path} --backend local --name slow")
    backend = LocalBackend(tmp_path / "jobs")
    wait_for(lambda: "step 3" in _texts(backend, "slow"), 120, "step 3")
    shown = run(ip, "%kale_stop slow --backend local")
    assert isinstance(shown, JobStatus) and str(shown).startswith("slow: Stopped (local")
    assert "stopped by " in str(shown)
    assert monitor.wait(60) == "Stopped"
    assert "step 3" in _texts(backend, "slow")  # its logs stay
    said = usage_error(ip, capsys, "%kale_stop slow --backend local")
    assert said == "%kale_stop: job slow has ended already (Stopped): there is nothing to stop"
    again = run(ip, "%kale_resume slow --name slow-2 --nodes 1 --param steps=2 --backend local")
    assert isinstance(again, JobMonitor) and again.name == "slow-2"
    assert finished(again) == "Complete"
    info = backend.get_job("slow-2")
    assert (info.parent, info.lineage, info.num_nodes) == ("slow", "slow", 1)
    assert _texts(backend, "slow-2") == ["step 0", "step 1"]
    shown = str(run(ip, "%kale_status slow-2 --backend local"))
    assert "lineage       resumed from slow (lineage slow)" in shown


def test_bad_rerun_and_stop_lines_are_one_message(ip, capsys):  # noqa: F811
    cases = [
        ("%kale_rerun nope --backend local", "%kale_rerun: no local job named 'nope'"),
        ("%kale_stop nope --backend local", "%kale_stop: no local job named 'nope'"),
        ("%kale_resume nope --backend local", "%kale_resume: no local job named 'nope'"),
        (
            "%kale_resume x --nodes 0 --backend local",
            "%kale_resume: nodes: must be at least 1, got 0",
        ),
    ]
    for line, says in cases:
        assert usage_error(ip, capsys, line) == says
    assert "expects NAME=VALUE" in usage_error(ip, capsys, "%kale_rerun x --param lr")


def test_kale_rerun_of_a_cell_job_runs_that_cell_again(ip, tmp_path):  # noqa: F811
    run(ip, "epochs = 3\n")
    first = run(ip, '%%trainjob --backend local --name cell-one\nprint(f"epochs {epochs}")')
    assert finished(first) == "Complete"
    run(ip, "epochs = 9\n")  # the kernel now holds another value: the rerun is the job's
    again = run(ip, "%kale_rerun cell-one --name cell-two --backend local")
    assert finished(again) == "Complete"
    assert _texts(LocalBackend(tmp_path / "jobs"), "cell-two") == ["epochs 3"]
    third = run(ip, "%kale_rerun cell-one --name cell-three --param epochs=5 --backend local")
    assert finished(third) == "Complete"
    assert _texts(LocalBackend(tmp_path / "jobs"), "cell-three") == ["epochs 5"]
