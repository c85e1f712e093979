"""The MPI runtimes (deepspeed-distributed, mlx-distributed) on the Local backend: one Open MPI
mpirun on this machine, as the Trainer's MPI plugin has its launcher run it on a cluster
(kale_ext/backends/local/mpirun.py); without mpirun, one refusal from every entry point.

The tests that run jobs need Open MPI's mpirun (Debian: openmpi-bin): without it they fail
saying what to install, they are not skipped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.mpirun import INSTALL, RankOutput, launcher_env, missing, prepare
from kale_ext.backends.submit import submit
from tests.backends.local.waiting import exited, until
from tests.conftest import EXAMPLES, notebook
from tests.ipython.conftest import shell  # noqa: F401 (fixture: one IPython shell)

pytest.register_assert_rewrite("tests.harness.server")
pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

#: The Kubeflow SDK's MPI example, as a user runs it here: its train() names deepspeed-distributed.
MPI_NOTEBOOK = "sdk_mpi.ipynb"


@pytest.fixture
def backend(tmp_path):
    """The local backend; these jobs need mpirun, and fail without it (never skipped)."""
    if shutil.which("mpirun") is None:
        pytest.fail(f"no mpirun on PATH: {INSTALL}")
    return LocalBackend(tmp_path / "jobs")


@pytest.fixture
def mpi_notebook(tmp_path, monkeypatch):
    """The MPI example in a folder of its own, jobs beside it; the local backend."""
    folder = tmp_path / "nb"
    folder.mkdir()
    shutil.copy(EXAMPLES / MPI_NOTEBOOK, folder / MPI_NOTEBOOK)
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    for var in ("KALE_EXT_BACKEND", "JPY_SESSION_NAME", "KUBECONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    return folder / MPI_NOTEBOOK


def by_rank(lines) -> dict[int | None, list[str]]:
    seen: dict[int | None, list[str]] = {}
    for line in lines:
        seen.setdefault(line.rank, []).append(line.text)
    return seen


# -- runs --


def test_the_sdk_mpi_example_runs_under_mpirun_and_completes(backend, mpi_notebook):
    """`kale-ext run examples/sdk_mpi.ipynb --follow` on the default (local) backend: two
    nodes of one process, a world of two; node 0 (the launcher) logs every rank, node 1 its
    own rank; the job's logs show each line once."""
    from tests.cli import cli

    out = cli("run", mpi_notebook, "--follow", cwd=mpi_notebook.parent)
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):
        assert f"rank {rank}/2 step 1: partial sum" in out.stdout, out.stdout
    assert out.stderr.rstrip().endswith("] Complete"), out.stderr  # its states: on stderr
    jobs = LocalBackend(mpi_notebook.parent.parent / "jobs")
    (info,) = jobs.list_jobs()
    assert info.status is Status.COMPLETE and info.runtime == "deepspeed-distributed"
    assert [(n.index, n.state) for n in info.nodes] == [(0, "Succeeded"), (1, "Succeeded")]
    every = by_rank(jobs.logs(info.name))
    assert sorted(every, key=str) == [0, 1]
    assert every[1] == [f"rank 1/2 step {s}: partial sum {250000 * (s + 1)}" for s in (0, 1)]
    assert len(every[0]) == 2  # once each, though node 1's log has rank 1's lines too
    node1 = list(jobs.logs(info.name, node=1))
    assert {(line.node, line.rank) for line in node1} == {(1, 1)}
    assert [line.text for line in node1] == every[1]


def rank_fails(said: Path) -> tuple:
    """Every rank says hello and leaves a mark in ``said``; rank 3 raises once the other three
    have said theirs (else mpirun may stop a rank before its hello: the test's race)."""
    return (
        ("import os, time", ["imports"]),
        "rank = int(os.environ['OMPI_COMM_WORLD_RANK'])\n"
        "print('hello from', rank, '/'.join(os.getcwd().split(os.sep)[-2:]), flush=True)\n"
        f"said = {str(said)!r}\n"
        "open(os.path.join(said, str(rank)), 'w').close()\n"
        "if rank == 3:\n"
        "    deadline = time.monotonic() + 60\n"
        "    while len(os.listdir(said)) < 4 and time.monotonic() < deadline:\n"
        "        time.sleep(0.05)\n"
        "    raise ValueError('rank three fails')\n",
    )


def test_a_failing_rank_fails_the_job_naming_its_node_rank_cell_and_line(backend, tmp_path):
    """Two nodes of two processes: ranks 2 and 3 are node 1's (Open MPI places ranks by slot,
    as on a cluster), each in a folder of its own in node 1's (each unpacks the workspace);
    rank 3's error names node 1, rank 3, its cell and line."""
    backend.capacity = 4  # on a machine of fewer CPUs too: the hostfile has 4 slots
    options = {"runtime": "mlx-distributed", "nodes": 2, "procs_per_node": 2}
    (tmp_path / "said").mkdir()
    job = submit(backend, notebook(*rank_fails(tmp_path / "said")), options)
    info = backend.wait(job.name, timeout=120, interval=0.1)
    assert info.status is Status.FAILED, info.reason
    failure = info.failure
    assert failure is not None
    assert (failure.node, failure.rank, failure.cell_index, failure.line) == (1, 3, 1, 9)
    assert (
        failure.summary
        == 'node 1, rank 3: cell 2 ("training"), line 9: ValueError: rank three fails'
    )
    assert info.reason == failure.summary
    assert any("raise ValueError('rank three fails')" in t for t in failure.log_tail)
    # a rank's hello (stdout) and its error (stderr) reach mpirun apart, in either order
    hello = {r: [x for x in t if x.startswith("hello")]
             for r, t in by_rank(backend.logs(job.name)).items() if r is not None}  # fmt: skip
    assert hello == {r: [f"hello from {r} node-{r // 2}/rank-{r % 2}"] for r in range(4)}
    node1 = by_rank(backend.logs(job.name, node=1))
    assert sorted(node1) == [2, 3] and node1[2] == ["hello from 2 node-1/rank-0"]
    assert "hello from 3 node-1/rank-1" in node1[3]


def test_a_stop_ends_mpirun_and_every_rank(backend):
    """A stop is a SIGTERM to mpirun, which passes it on to the ranks: the job ends Failed with
    the reason given, and neither mpirun nor any rank is left."""
    waits = (
        ("import os, time", ["imports"]),
        "print('up', os.getpid(), flush=True)\ntime.sleep(300)",
    )
    job = submit(backend, notebook(*waits), {"runtime": "deepspeed-distributed", "nodes": 2})

    def ranks() -> list[int]:
        up = [
            line.text.split()[1] for line in backend.logs(job.name) if line.text.startswith("up ")
        ]
        return [int(pid) for pid in up] if len(up) == 2 else []

    pids = until(ranks, "both ranks to start")
    record = backend._record(job.name)
    launcher = {n["pid"] for n in record["nodes"]}
    assert len(launcher) == 1  # one mpirun, every node's
    backend.stop(job.name, "stopped by the test")
    info = backend.get_job(job.name)
    assert info.status is Status.FAILED and info.reason == "stopped by the test"
    assert [n.state for n in info.nodes] == ["Stopped", "Stopped"]
    for pid in [*pids, *launcher]:
        assert exited(pid), pid


# -- the launch --


def test_the_launch_is_the_plugins_over_one_localhost_hostfile(tmp_path):
    """np = nodes × processes per node, every slot on localhost; the plugin's OMPI_MCA_* (less
    its SSH arguments); root only with --allow-run-as-root; loopback only; the job's command
    as sh's arguments, never its script."""
    record = {"num_nodes": 3, "procs_per_node": 2, "mpirun": "/x/mpirun",
              "command": ["/py", "-c", "$(touch pwned)", "'; rm -rf /"]}  # fmt: skip
    line = prepare(tmp_path, record)
    assert (tmp_path / "hostfile").read_text() == "localhost slots=6\n"
    assert line[:5] == ["/x/mpirun", "--hostfile", str(tmp_path / "hostfile"), "-np", "6"]
    assert ("--allow-run-as-root" in line) == (os.geteuid() == 0)
    assert line[line.index("oob_tcp_if_include") + 1] == "lo"
    at = line.index("sh")
    assert line[at + 1] == "-c" and "$(touch" not in line[at + 2]
    assert line[at + 3 :] == [str(tmp_path), *record["command"]]
    assert '"$0/node-$k/rank-$((r % 2))"' in line[at + 2]
    for k in range(3):
        for local in range(2):
            assert (tmp_path / f"node-{k}.torchrun/mpi/attempt_0/{local}").is_dir()
            assert (tmp_path / f"node-{k}/rank-{local}").is_dir()
    assert launcher_env(tmp_path, record) == {
        "OMPI_MCA_orte_default_hostfile": str(tmp_path / "hostfile"),
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "2",
    }


def logs_of(job_dir: Path, nodes: int) -> list[str]:
    return [(job_dir / f"node-{k}.log").read_text() for k in range(nodes)]


@pytest.mark.parametrize("cut", [None, 3, 17, 40])
def test_ranks_pieces_are_put_together_into_their_nodes_logs(tmp_path, cut):
    """mpirun tags each piece it reads, not each line, two ranks' pieces between each other's,
    a tag maybe split between two reads: each rank's lines whole, node 0's every one (mpirun's
    own too), node k's its ranks'."""
    stream = (
        b"[1,1]<stdout>:up [1,3]<stdout>:a\n[1,1]<stdout>:7\n"
        b"mpirun says\n[1,2]<stderr>:boom\n[1,0]<stdout>:no newline"
    )
    out = RankOutput(tmp_path, {"procs_per_node": 2, "num_nodes": 2})
    for piece in [stream] if cut is None else [stream[:cut], stream[cut:]]:
        out.feed(piece)
    out.feed(b"", end=True)
    out.close()
    assert logs_of(tmp_path, 2) == [
        "[default3]:a\n[default1]:up 7\nmpirun says\n[default2]:boom\n[default0]:no newline\n",
        "[default1]:a\n[default0]:boom\n",
    ]


# -- without mpirun: one refusal --


@pytest.fixture
def no_mpirun(monkeypatch):
    """PATH without any folder that has an mpirun."""
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not os.access(os.path.join(d, "mpirun"), os.X_OK)]  # fmt: skip
    monkeypatch.setenv("PATH", os.pathsep.join(keep))
    assert shutil.which("mpirun") is None


def mpi_refusal() -> str:
    why = missing("deepspeed-distributed")
    assert why is not None and "apt-get install openmpi-bin" in why
    assert "submit it to Kubernetes" in why and "\n" not in why
    return f"runtime: {why}"


def test_an_mpirun_not_open_mpis_is_refused_saying_what_it_is(tmp_path, monkeypatch):
    """MPICH's mpirun (Debian's mpich has one too) takes none of Open MPI's options, and the
    plugin starts Open MPI only: refused, saying what that mpirun says it is."""
    from kale_ext.errors import ConfigError

    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "mpirun"
    fake.write_text("#!/bin/sh\necho 'HYDRA build details:'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    why = missing("mlx-distributed")
    assert why == (
        "runtime 'mlx-distributed' starts its processes with Open MPI's mpirun, and the mpirun "
        f"on this machine's PATH ({fake}) is not Open MPI's: it says 'HYDRA build details:': "
        "install Open MPI (Debian: apt-get install openmpi-bin) to run it here, or submit it to "
        "Kubernetes"
    )
    with pytest.raises(ConfigError) as refused:
        submit(
            LocalBackend(tmp_path / "jobs"), notebook("print(1)"), {"runtime": "mlx-distributed"}
        )
    assert refused.value.field == "runtime" and refused.value.message == why


def test_with_mpirun_there_is_no_refusal(backend):
    assert missing("deepspeed-distributed") is None and missing("mlx-distributed") is None
    assert missing("torch-distributed") is None  # no MPI runtime


def refused_by_cli(path, ipython, capsys) -> str:
    from tests.cli import cli

    out = cli("run", path, "--backend", "local")
    assert out.returncode == 1 and out.stdout == "", out
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    return out.stderr.removeprefix("error: ").rstrip("\n")


def refused_by_python(path, ipython, capsys) -> str:
    import kale_ext
    from kale_ext.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        kale_ext.run(str(path), backend="local")
    return str(refused.value)


def refused_by_magic(path, ipython, capsys) -> str:
    from IPython.core.error import UsageError

    from kale_ext import load_ipython_extension

    ipython.reset(new_session=True)
    load_ipython_extension(ipython)
    result = ipython.run_cell(f"%kale_submit --backend local --notebook {path}")
    err = capsys.readouterr().err
    assert isinstance(result.error_in_exec, UsageError) and "Traceback" not in err, err
    return str(result.error_in_exec).removeprefix("%kale_submit: ")


@pytest.mark.parametrize("entry", [refused_by_cli, refused_by_python, refused_by_magic],
                         ids=lambda f: f.__name__)  # fmt: skip
def test_without_mpirun_an_mpi_notebook_is_refused_in_one_sentence_from_every_entry_point(
    entry,
    mpi_notebook,
    no_mpirun,
    shell,  # noqa: F811 (the IPython shell's fixture)
    capsys,
):
    """deepspeed-distributed locally with no mpirun: the same sentence from the CLI, the Python
    API and the magics (the REST API's below), naming what to install; no job made."""
    assert entry(mpi_notebook, shell, capsys) == mpi_refusal()
    jobs = mpi_notebook.parent.parent / "jobs"
    assert not jobs.exists() or not any(jobs.iterdir())


async def test_without_mpirun_the_rest_api_refuses_an_mpi_notebook_in_the_same_sentence(
    api, jp_root_dir, no_mpirun
):
    shutil.copy(EXAMPLES / MPI_NOTEBOOK, jp_root_dir / MPI_NOTEBOOK)
    r = await api.post("jobs", {"path": MPI_NOTEBOOK, "options": {}})
    assert r.status == 400 and r.json["field"] == "runtime", r.text
    assert r.json["message"] == mpi_refusal()
