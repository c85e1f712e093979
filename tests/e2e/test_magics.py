"""The magics in a real IPython shell against the emulated cluster: %%trainjob on two nodes,
%kale_submit of an example notebook, and the job magics on the Kubernetes backend. The nodes
import no torch: torch.distributed's world is the local backend's test, the example's training
the local backend's and the SDK's."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from kale_ext import load_ipython_extension  # noqa: E402
from kale_ext.ipython.results import JobTable  # noqa: E402
from tests.conftest import EXAMPLES, EXIT_BARRIER_LINE  # noqa: E402
from tests.harness.emulated import TRAINJOBS  # noqa: E402

TIMEOUT = 300
RANKS = """\
import os
print(f"{os.environ['GREETING']} from rank {os.environ['RANK']} of {os.environ['WORLD_SIZE']}")
"""


@pytest.fixture
def ip(shell, monkeypatch, emulated_cluster):
    """The shell with a fresh namespace, the text monitor, and KUBECONFIG at the cluster."""
    monkeypatch.setenv("KALE_EXT_MONITOR", "text")
    for var in ("KALE_EXT_BACKEND", "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    shell.reset(new_session=True)
    load_ipython_extension(shell)
    return shell


def run(shell, source: str):
    result = shell.run_cell(source, store_history=True)
    for error in (result.error_before_exec, result.error_in_exec):
        if error is not None:
            raise error
    return result.result


def test_trainjob_on_two_nodes_and_the_job_magics(ip, capsys, emulated_cluster):
    run(ip, "from kale_ext.distributed import DistributedConfig\n"
            "cfg = DistributedConfig(env=[{'name': 'GREETING', 'value': 'hello'}])")  # fmt: skip
    monitor = run(
        ip, "%%trainjob --backend kubernetes --nodes 2 --name pair --config cfg\n" + RANKS
    )
    assert monitor.wait(TIMEOUT) == "Complete"
    out = capsys.readouterr().out
    assert "[pair] submitted to the kubernetes backend" in out
    assert "[rank 0] hello from rank 0 of 2" in out and "[rank 1] hello from rank 1 of 2" in out
    assert emulated_cluster.get(TRAINJOBS, "pair")["spec"]["trainer"]["numNodes"] == 2

    table = run(ip, "%kale_jobs --backend kubernetes")
    assert isinstance(table, JobTable) and [(j.name, j.status.value) for j in table] == [
        ("pair", "Complete")
    ]
    run(ip, "%kale_logs pair --backend kubernetes --node 1")
    shown = capsys.readouterr().out.strip().splitlines()  # torchrun's exit barrier's line aside
    shown = [s for s in shown if not EXIT_BARRIER_LINE.match(s.partition("] ")[2])]
    assert shown[-1] == "[rank 1] hello from rank 1 of 2"
    run(ip, "%kale_delete pair --backend kubernetes")
    assert capsys.readouterr().out == "deleted pair\n"
    emulated_cluster.wait_for(lambda: emulated_cluster.get(TRAINJOBS, "pair") is None, 60, "gone")


def test_kale_submit_runs_an_example_on_two_nodes(ip, capsys, tmp_path):
    shutil.copy(EXAMPLES / "plain_python.ipynb", tmp_path)
    monitor = run(ip, f"%kale_submit --backend kubernetes --nodes 2 --param steps=100 "
                      f"--name plain --notebook '{tmp_path}/plain_python.ipynb'")  # fmt: skip
    assert monitor.wait(TIMEOUT) == "Complete"
    capsys.readouterr()
    run(ip, "%kale_logs plain --backend kubernetes --node 1")
    logs = capsys.readouterr().out.splitlines()
    assert any(line.startswith("[rank 1] fitted a=") for line in logs), logs[-5:]
