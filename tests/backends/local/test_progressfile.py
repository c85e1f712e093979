"""A local job's progress: followed from rank 0's log as it grows, kept in progress.json, read
back by the views (a corrupt or missing file is no progress, never an error)."""

import json

import pytest

from kale_ext.backends.local.progressfile import (
    CHECKPOINT_FILE,
    MAX_FILE,
    PROGRESS_FILE,
    ProgressFollower,
    read_checkpoint,
    read_progress,
)
from kale_ext.backends.logpieces import MAX_PIECE


def metric(step, total, rank=0):
    return "KALE_METRIC " + json.dumps({"step": step, "rank": rank, "total": total}) + "\n"


def write(job_dir, text: str | bytes) -> None:
    with open(job_dir / "node-0.log", "ab") as f:
        f.write(text.encode() if isinstance(text, str) else text)


def kept(job_dir) -> dict:
    return json.loads((job_dir / PROGRESS_FILE).read_text())


def test_follows_the_log_as_it_grows_and_keeps_the_eta(tmp_path):
    follower = ProgressFollower(tmp_path, 1)
    assert follower.poll(now=0) is None and not (tmp_path / PROGRESS_FILE).exists()
    etas = []
    for s in range(1, 11):
        write(tmp_path, f"working on {s}\n" + metric(s, 10))
        follower.poll(now=float(s))
        etas.append(kept(tmp_path)["eta_seconds"])
        assert read_progress(tmp_path).step == s
    assert etas[:2] == [None] * 2  # not from one reading, nor from 1 s
    assert etas[2:] == list(range(7, -1, -1))
    assert kept(tmp_path)["percent"] == 100.0


def test_times_the_first_advance_from_the_jobs_start(tmp_path):
    follower = ProgressFollower(tmp_path, 1, started=0.0)
    etas = []
    for step in (1, 2):
        write(tmp_path, metric(step, 10))
        follower.poll(now=5.0 * step)
        etas.append(kept(tmp_path)["eta_seconds"])
    assert etas == [45, 40]  # shown from 10 % done: 9, then 8 steps of 5 s left


def test_polls_at_most_every_half_second(tmp_path):
    follower = ProgressFollower(tmp_path, 1)
    write(tmp_path, metric(1, 10))
    assert follower.poll(now=10.0).step == 1
    write(tmp_path, metric(2, 10))
    assert follower.poll(now=10.2) is None  # too soon: nothing read
    assert follower.poll(now=10.2, every=0).step == 2


def test_reads_a_tqdm_bar_before_its_line_ends(tmp_path):
    follower = ProgressFollower(tmp_path, 1)
    write(tmp_path, "train:  10%|#  | 1/10 [00:00<?]\rtrain:  30%|### | 3/10 [00:01<00:02]")
    assert (follower.poll(now=0).step, kept(tmp_path)["source"]) == (3, "tqdm")
    write(tmp_path, "\rtrain:  50%|#####  | 5/10 [00:02<00:02]")
    assert follower.poll(now=1).step == 5


@pytest.mark.parametrize(
    "line, step",
    [
        ("[default0]:" + metric(4, 8), 4),  # rank 0 on a 2-process node
        ("[default1]:" + metric(5, 8, rank=1), None),  # another rank's
        ("[default1]:Epoch 2/3\n", None),
        (metric(4, 8), None),  # no rank prefix: torchrun's own line
    ],
)
def test_only_rank_0_counts_on_a_node_of_several_processes(tmp_path, line, step):
    write(tmp_path, line)
    found = ProgressFollower(tmp_path, 2).poll(now=0)
    assert (found and found.step) == step


def test_a_huge_line_is_never_held(tmp_path):
    follower = ProgressFollower(tmp_path, 1)
    write(tmp_path, b"x" * (5 * MAX_PIECE))  # no newline yet
    follower.poll(now=0)
    assert len(follower.pending) <= MAX_PIECE
    write(tmp_path, "\n" + metric(1, 2))
    assert follower.poll(now=1).step == 1


@pytest.mark.parametrize(
    "content",
    [b"", b"{broken", b'{"percent": 500}', b"[]", b" " * (MAX_FILE + 10) + b"{}", b"\xff\xfe"],
)
def test_an_unreadable_progress_file_is_no_progress(tmp_path, content):
    (tmp_path / PROGRESS_FILE).write_bytes(content)
    assert read_progress(tmp_path) is None


def test_no_log_yet_is_no_progress(tmp_path):
    assert ProgressFollower(tmp_path / "gone", 1).poll(now=0) is None
    assert read_progress(tmp_path) is None


def saved(step, rank=0) -> str:
    return "KALE_METRIC " + json.dumps({"step": None, "rank": rank, "checkpoint_step": step}) + "\n"


def test_keeps_rank_0s_last_checkpoint_step_and_when_it_read_it(tmp_path):
    follower = ProgressFollower(tmp_path, 2)  # two processes a node: [defaultN]: prefixes
    follower.poll(now=0)
    assert read_checkpoint(tmp_path) is None and not (tmp_path / CHECKPOINT_FILE).exists()
    write(tmp_path, "[default0]:" + saved(3) + "[default1]:" + saved(99, rank=1))
    follower.poll(now=1)
    first = read_checkpoint(tmp_path)
    assert first is not None and (first.step, first.exact) == (3, True)
    write(tmp_path, "[default0]:" + saved(4) + "[default0]:" + saved(5) + "[rank 0]: step done\n")
    follower.poll(now=2)
    assert read_checkpoint(tmp_path).step == 5  # the last of them
    assert read_progress(tmp_path) is None  # a checkpoint is no progress


@pytest.mark.parametrize("kept", ["{", "[]", '{"step": "x", "time": "2026-12-06T12:00:00Z"}',
                                  '{"step": 1, "time": "soon"}'])  # fmt: skip
def test_a_checkpoint_file_that_is_not_one_is_no_checkpoint(tmp_path, kept):
    (tmp_path / CHECKPOINT_FILE).write_text(kept)
    assert read_checkpoint(tmp_path) is None
