"""When a job fails, say where and why: real local runs with real torchrun (2 nodes), failing in
each way a user meets. Each summary names the node and rank that failed first, the cell and
line where one is known, and the full log keeps every line once, in order."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from tests.backends.local.waiting import until
from tests.conftest import notebook, own_jupyter_settings

pytest.importorskip("torch", reason="these runs use torchrun and torch.distributed")

IMPORTS = ("import os\nimport signal\nimport sys\nimport time", ["imports"])
HELPER = ("def label_of(row):\n    return row['label']\n", ["functions"])
#: Each rank writes to stdout and stderr in turn: the log must keep that order. The rank is
#: torchrun's RANK: these workers import no torch (2-3 s of CPU each), but for one case. Then
#: the ranks meet at a barrier of files in READY (a folder of the test's), so that no rank
#: fails before every other has written its lines: a failed rank's torchrun stops the other
#: rank of its node at once, and on a busy machine that one may not have started yet.
START = (
    "rank = int(os.environ['RANK'])\n"
    "for i in range(5):\n    print(f'out {i} of {rank}')\n"
    "    print(f'err {i} of {rank}', file=sys.stderr)\n"
    "open(os.path.join(READY, str(rank)), 'w').close()\n"
    "for _ in range(12000):  # two minutes at most\n"
    "    if len(os.listdir(READY)) >= int(os.environ['WORLD_SIZE']):\n        break\n"
    "    time.sleep(0.01)\n"
)
END = "print(f'done {rank}')"
#: The one case in a real torch.distributed world: every rank meets the others at a barrier,
#: so a rank that failed first leaves its peer an error of its own, which the summary passes by.
WORLD_IMPORTS = (
    "import os\nimport sys\nimport time\nimport torch.distributed as dist",
    ["imports"],
)
WORLD_START = "dist.init_process_group('gloo')\n" + START
WORLD_END = "dist.barrier()\n" + END


def meeting_in(folder, start: str = START) -> str:
    """START (or WORLD_START) with its barrier in `folder`, one of the job's own."""
    folder.mkdir()
    return start.replace("READY", repr(str(folder)))


#: A line of torchrun's own logging (with one process a node, it counts as that rank's).
TORCHRUN_LOG = re.compile(r"[EWI]\d{4} ")


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs", capacity=4)  # 2 nodes × 2 processes on 2 CPUs


@dataclass
class Case:
    name: str
    cell: str  # the notebook's fourth cell (index 3), where rank 1 fails
    summary: str
    cell_index: int | None = None
    line: int | None = None
    last: str | None = None  # the failing rank's last line of its own
    options: dict | None = None
    world: bool = False  # in a torch.distributed world (gloo), the others meeting at a barrier


CASES = [
    Case(
        "an exception in a body cell",
        "if rank == 1:\n    row = {}\n    print(row['label'])",
        """node 1, rank 1: cell 4 ("training"), line 3: KeyError: 'label'""",
        3,
        3,
        "KeyError: 'label'",
        world=True,
    ),
    Case(
        "an exception in a functions cell's helper",
        "if rank == 1:\n    label_of({'name': 'x'})",
        """node 1, rank 1: cell 2 ("functions"), line 2: KeyError: 'label'""",
        1,
        2,
        "KeyError: 'label'",
    ),
    Case(
        "an exception in an imported module",
        "import shapes\nif rank == 1:\n    shapes.check(3)",
        """node 1, rank 1: cell 4 ("training"), line 3: ValueError: bad shape 3""",
        3,
        3,
        "ValueError: bad shape 3",
    ),
    Case(
        "a rank killed by a signal",
        "if rank == 1:\n    print('about to be killed', flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)",
        "node 1, rank 1: killed by signal 9 (SIGKILL)",
        last="about to be killed",
    ),
    Case(
        "a rank exiting non-zero without a traceback",
        "if rank == 1:\n    print('leaving', flush=True)\n    os._exit(3)",
        "node 1, rank 1: exited with code 3 (no traceback)",
        last="leaving",
    ),
    Case(
        "a rank calling sys.exit",
        "if rank == 1:\n    sys.exit(3)",
        """node 1, rank 1: cell 4 ("training"), line 2: SystemExit: 3""",
        3,
        2,
        """cell 4 ("training"), line 2: SystemExit: 3""",
    ),
    Case(
        "two processes per node: the global rank",
        "if rank == 3:\n    {}['label']",
        """node 1, rank 3: cell 4 ("training"), line 2: KeyError: 'label'""",
        3,
        2,
        "KeyError: 'label'",
        {"procs_per_node": 2},
    ),
]


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """Every case's job, submitted at once, by case name, and their backend. Side by side they
    take the time of one: in all but the torch world's case, the node that did not fail waits
    at torchrun's exit for the other until the job stops it (FAILURE_GRACE, idle)."""
    root = tmp_path_factory.mktemp("failures")
    project = root / "project"  # the workspace: shapes.py travels with the notebooks
    project.mkdir()
    (project / "shapes.py").write_text("def check(x):\n    raise ValueError(f'bad shape {x}')\n")
    with pytest.MonkeyPatch.context() as env:
        own_jupyter_settings(env, root / "settings")
        backend = LocalBackend(root / "jobs", capacity=2 * 2 * len(CASES))  # all at once
        names = {}
        for index, case in enumerate(CASES):
            ready = root / f"ready{index}"
            cells = (
                (WORLD_IMPORTS, HELPER, meeting_in(ready, WORLD_START), case.cell, WORLD_END)
                if case.world
                else (IMPORTS, HELPER, meeting_in(ready), case.cell, END)
            )
            path = project / f"train{index}.ipynb"
            path.write_text(json.dumps(notebook(*cells)))
            options = {"nodes": 2, **(case.options or {})}
            names[case.name] = submit(backend, path, options).name
        yield backend, names
        for name in names.values():
            backend.delete(name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_failure_names_where_and_why(started, case):
    backend, names = started
    name = names[case.name]
    info = backend.wait(name, timeout=120, interval=0.1)

    assert info.status is Status.FAILED
    failure = info.failure
    assert failure.summary == case.summary and info.reason == case.summary
    failed_rank = 3 if case.options else 1
    assert (failure.node, failure.rank) == (1, failed_rank)
    assert (failure.cell_index, failure.line) == (case.cell_index, case.line)
    if case.cell_index is not None:
        assert failure.cell_id == f"c{case.cell_index}"
    prefix = f"[rank {failed_rank}] "
    own = [t for t in failure.log_tail if t.startswith(prefix)]
    own = [t for t in own if not TORCHRUN_LOG.match(t[len(prefix) :])]
    assert own[-1] == prefix + case.last
    assert info.nodes[1].reason == case.summary
    if failure.exception:
        assert backend.get_job(name).failure == failure  # recorded: the same every time

    lines = [(line.rank, line.text) for line in backend.logs(name)]
    texts = [t for _, t in lines]
    for rank in range(4 if case.options else 2):  # every line once, each rank's in order
        mine = [t for r, t in lines if r == rank and t.startswith(("out ", "err "))]
        assert mine == [f"{s} {i} of {rank}" for i in range(5) for s in ("out", "err")], rank
    assert not any(t.startswith("Root Cause") or t.startswith("  exitcode") for t in texts)
    folded = [t for t in texts if t.startswith("torchrun: rank ")]
    assert 1 <= len(folded) <= 2  # torchrun's report: one line per failed node
    if "shapes" in case.cell:  # the imported module's frame is kept as it is
        assert sum('shapes.py", line 2, in check' in t for t in texts) == 1
    if case.cell_index is not None:
        headline = case.summary.split(": ", 1)[1]
        assert texts.count(headline) == 1  # printed once, by the rank that failed
        assert any(f"cell {case.cell_index + 1}" in t and "Traceback" not in t for t in folded)


def test_a_quiet_running_job_shows_as_stalled_and_keeps_running(backend, tmp_path):
    backend.stall_seconds = 1
    hang = "if rank == 1:\n    print('waiting forever', flush=True)\n    import time\n"
    hang += "    time.sleep(3600)"
    name = submit(
        backend, notebook(IMPORTS, HELPER, meeting_in(tmp_path / "ready"), hang, END), {"nodes": 2}
    ).name
    until(
        lambda: any(line.text == "waiting forever" for line in backend.logs(name)),
        "rank 1 to start waiting",
        timeout=120,
    )
    info = until(
        lambda: (i := backend.get_job(name)).stalled_after is not None and i,
        "the job to show as stalled",
    )
    assert info.status is Status.RUNNING and info.status_text == "Stalled (no output for 1 s)"
    assert info.to_dict()["status_text"] == "Stalled (no output for 1 s)"
    assert info.last_output is not None
    assert [j.status_text for j in backend.list_jobs()] == ["Stalled (no output for 1 s)"]
    backend.stall_seconds = 3600
    assert backend.get_job(name).status_text == "Running"  # not killed: only shown
    backend.delete(name)


def test_a_job_whose_other_node_is_being_stopped_shows_as_failing(backend):
    """Node 1 fails while node 0 works on: until node 0 is stopped (FAILURE_GRACE), the job
    stays Running and every view reads which node failed and how; then it is Failed."""
    work = "rank = int(os.environ['RANK'])\nif rank == 1:\n    raise ValueError('boom')\n"
    work += "time.sleep(120)"
    name = submit(backend, notebook(IMPORTS, work), {"nodes": 2}).name
    info = until(
        lambda: ((i := backend.get_job(name)).failing or i.status.finished) and i,
        "the job to show as failing",
        timeout=120,
    )
    assert info.status is Status.RUNNING and info.failing == "node 1 exited with code 1"
    assert info.to_dict()["status_text"] == "Failing (node 1 exited with code 1)"
    assert [j.status_text for j in backend.list_jobs()] == ["Failing (node 1 exited with code 1)"]
    info = backend.wait(name, timeout=120, interval=0.1)
    assert info.status is Status.FAILED and info.failing is None
    assert info.reason == """node 1, rank 1: cell 2 ("training"), line 3: ValueError: boom"""
    assert info.status_text == "Failed"
    assert not (backend.jobs_dir / name / "failing.txt").exists()


def test_an_ending_that_tells_no_time_is_placed_by_when_its_node_ended(tmp_path):
    """local_failure without a job run: node 1 exited with 3 first (nothing it left tells when),
    node 0 failed on its own 2 s later, its record timed: node 1 is named, by the time the
    supervisor saw it end; a node the supervisor stopped is never named over one that failed."""
    import time

    from kale_ext.backends.local.failures import error_file, local_failure

    for k in (0, 1):
        (tmp_path / f"node-{k}.log").write_text("")
    later = time.time()
    record = {
        "message": {"message": "ValueError: late", "extraInfo": {"timestamp": str(int(later))}}
    }
    error_file(tmp_path, 0).write_text(json.dumps(record))
    exits = [(1, 3), (0, 1)]
    named = local_failure(tmp_path, {"procs_per_node": 1}, exits, {1: later - 2, 0: later})
    assert (named.node, named.exit_code) == (1, 3)
    assert local_failure(tmp_path, {"procs_per_node": 1}, exits).node == 0  # no times: the record's
    stopped = local_failure(tmp_path, {"procs_per_node": 1}, [(0, 1), (1, 3)], {}, {0})
    assert stopped.node == 1  # node 0 was stopped: its record, however early, is a consequence


#: What Open MPI 4.1's mpirun writes when a rank ends the job: killed by a signal; an exit code.
MPIRUN_SIGNAL = """\
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun noticed that process rank 3 with PID 0 on node vm exited on signal 9 (Killed).
--------------------------------------------------------------------------
"""
MPIRUN_EXIT = """\
--------------------------------------------------------------------------
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[29744,1],2]
  Exit code:    7
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize(
    ("said", "summary"),
    [
        (MPIRUN_SIGNAL, "node 1, rank 3: killed by signal 9 (SIGKILL)"),
        (MPIRUN_EXIT, "node 1, rank 2: exited with code 7 (no traceback)"),
        ("", "node 0: exited with code 1 (no traceback)"),  # mpirun's own exit, no rank named
    ],
    ids=["signal", "exit", "unnamed"],
)
def test_an_mpi_rank_that_left_no_record_is_named_by_mpirun(tmp_path, said, summary):
    """An MPI job (one mpirun, 2 nodes × 2 processes) whose rank left no error record: the rank
    mpirun's words in node 0's log name, on its node (ranks by slot: rank r on node r // 2)."""
    from kale_ext.backends.local.failures import local_failure

    (tmp_path / "node-0.log").write_text("[default0]:hello\n" + said)
    (tmp_path / "node-1.log").write_text("")
    record = {"procs_per_node": 2, "mpirun": "mpirun"}
    failure = local_failure(tmp_path, record, [(0, 1), (1, 1)], {0: 1.0, 1: 1.0})
    assert failure.summary == summary


def test_an_mpi_ranks_record_is_named_by_its_place(tmp_path):
    """A rank's error record (its RANK and node unknown to it: torchrun's variables) is named
    by where the rank wrote it: node 1's folder, its rank there 1: rank 3."""
    from kale_ext.backends.local.failures import RANK_RECORDS, local_failure, torchrun_dir

    for k in (0, 1):
        (tmp_path / f"node-{k}.log").write_text("")
    folder = torchrun_dir(tmp_path, 1) / RANK_RECORDS / "1"
    folder.mkdir(parents=True)
    info = {"headline": 'cell 2, line 4: ValueError: no', "exception": "ValueError: no",
            "cell_index": 1, "line": 4, "rank": 0, "node": 0, "time": 1.0}  # fmt: skip
    (folder / "error.json").write_text(json.dumps({"kale_ext": info}))
    record = {"procs_per_node": 2, "mpirun": "mpirun"}
    failure = local_failure(tmp_path, record, [(0, 1), (1, 1)], {0: 2.0, 1: 2.0})
    assert (failure.node, failure.rank, failure.line) == (1, 3, 4)
    assert failure.summary == "node 1, rank 3: cell 2, line 4: ValueError: no"
