"""A local job's log files as a reader sees them: the tail counts lines as they are shown, so a
torchrun report the tail would cut is folded whole, never shown as its raw last lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from kale_ext.backends.base import LogQuery
from kale_ext.backends.local.logfiles import node_logs

RECORDED = Path(__file__).parents[1] / "recorded"
#: What node 1's agent printed when node 0's left the exit barrier first (torch 2.13).
EXIT_BARRIER = (RECORDED / "torchrun_exit_barrier.txt").read_text()
FOLDED = "torchrun: node 1 could not wait for the other nodes at exit"


def shown(job_dir: Path, tail: int | None, ended: bool = True) -> list[str]:
    query = LogQuery(node=1, follow=False, tail=tail, offsets={})
    return [line.text for line in node_logs(job_dir, [1], 1, query, lambda: ended)]


@pytest.fixture
def job_dir(tmp_path):
    """Node 1 of a completed one-process-a-node job: its rank's lines, then the barrier's."""
    (tmp_path / "node-1.log").write_text("step 3\nstep 4\nsum 3\n" + EXIT_BARRIER)
    return tmp_path


@pytest.mark.parametrize("tail", [1, 2, 3])
def test_the_tail_is_the_last_lines_as_shown(job_dir, tail):
    whole = shown(job_dir, None)
    assert whole[:3] == ["step 3", "step 4", "sum 3"] and len(whole) == 4
    assert whole[-1].startswith(FOLDED)
    assert shown(job_dir, tail) == whole[-tail:]


def test_a_tail_of_nothing_is_nothing(job_dir):
    assert shown(job_dir, 0) == []
