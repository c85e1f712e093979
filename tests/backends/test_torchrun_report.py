"""torchrun's ChildFailedError report, read and folded into one line. The reports are recorded
from torch 2.13's torchrun (paths made neutral): a worker's exception, and a worker killed by a
signal."""

from __future__ import annotations

from pathlib import Path

import pytest

from kale_ext.backends.base import LogLine, split_rank
from kale_ext.backends.torchrun_report import (
    CHILD_FAILED,
    ReportEntry,
    ReportFolder,
    find_reports,
    fold_reports,
    folded,
    signal_name,
)

RECORDED = Path(__file__).parent / "recorded"
EXCEPTION = (RECORDED / "torchrun_exception.txt").read_text().splitlines()
SIGNAL = (RECORDED / "torchrun_signal.txt").read_text().splitlines()


def as_lines(texts: list[str], node: int = 1, rank: int | None = None) -> list[LogLine]:
    offset, out = 0, []
    for text in texts:
        offset += len(text) + 1
        out.append(LogLine(node, text, rank, offset))
    return out


def test_the_report_of_an_exception_names_each_failed_rank():
    entries = find_reports(EXCEPTION)
    assert [(e.rank, e.local_rank, e.exit_code, e.root) for e in entries] == [
        (0, 0, -15, False),  # stopped by torchrun after rank 1 failed
        (1, 1, 1, True),
    ]
    root = entries[1]
    assert root.message == """cell 2 ("training"), line 8: KeyError: 'label'"""
    assert root.error_file.endswith("attempt_0/1/error.json")
    assert root.time is not None and entries[0].time == root.time + 1


def test_the_report_of_a_signal_has_no_error_file():
    (entry,) = find_reports(SIGNAL)
    assert (entry.rank, entry.exit_code, entry.error_file) == (0, -9, None)
    assert entry.message == "Signal 9 (SIGKILL) received by PID 18084"


@pytest.mark.parametrize(
    ("entries", "text"),
    [
        (
            [ReportEntry(3, 1, 1, "cell 2 (\"t\"), line 1: KeyError: 'x'", "/e.json", root=True)],
            "torchrun: rank 3 failed first on node 1 (exit code 1): "
            "cell 2 (\"t\"), line 1: KeyError: 'x'",
        ),
        (
            [ReportEntry(0, 0, -15, ""), ReportEntry(1, 1, -9, "", root=True)],
            "torchrun: rank 1 failed first on node 1 (killed by signal 9 (SIGKILL)); "
            "1 other rank(s) failed after it",
        ),
        ([ReportEntry(2, 0, 3, "")], "torchrun: rank 2 failed first on node 1 (exit code 3)"),
        ([], "torchrun: a worker failed (ChildFailedError)"),
    ],
)
def test_folded_in_words(entries, text):
    assert folded(entries, 1) == text


@pytest.mark.parametrize(("number", "words"), [(9, "signal 9 (SIGKILL)"), (99, "signal 99")])
def test_signals_by_name(number, words):
    assert signal_name(number) == words


def test_a_log_shows_the_report_as_one_line_and_every_other_line_once_in_order():
    before = ["epoch 1", "epoch 2"]
    after = ["a line written after"]
    lines = as_lines(before + EXCEPTION + after)
    shown = list(fold_reports(lines, 1))
    texts = [line.text for line in shown]
    assert texts[:2] == before and texts[-1:] == after
    assert texts[2:4] == EXCEPTION[:2]  # torchrun's own log lines stay
    assert texts[4].startswith("torchrun: rank 1 failed first on node 1 (exit code 1): cell 2")
    assert len(shown) == len(before) + 2 + 1 + len(after)
    assert [line.offset for line in shown] == sorted(line.offset for line in shown)
    assert shown[4].offset == lines[len(before) + len(EXCEPTION) - 1].offset  # resume after it
    assert shown[4].rank is None and shown[4].prefix == "[node 1]"


def test_a_users_traceback_comes_through_unchanged():
    user = [
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "    x = {}['a']",
        "KeyError: 'a'",
        "next",
    ]
    assert [line.text for line in fold_reports(as_lines(user, rank=0), 0)] == user


def test_a_report_still_being_written_is_held_until_it_ends():
    folder = ReportFolder(0)
    lines = as_lines(SIGNAL)
    cut = next(i for i, line in enumerate(lines) if line.text.startswith(CHILD_FAILED)) + 4
    assert [out for line in lines[:cut] for out in folder.feed(line)] == [lines[0]]
    rest = [out for line in lines[cut:] for out in folder.feed(line)]
    assert len(rest) == 1 and "killed by signal 9 (SIGKILL)" in rest[0].text
    assert folder.flush() == []


def test_what_is_held_when_the_log_ends_comes_out_as_it_is():
    lines = as_lines(SIGNAL[:10])
    assert list(fold_reports(lines, 0)) == lines


# Recorded from torch 2.13's torchrun (paths made neutral): node 1's workers had finished when
# node 0's agent, which holds the store, was gone before the exit barrier was done.
EXIT_BARRIER = (RECORDED / "torchrun_exit_barrier.txt").read_text().splitlines()


def test_a_failed_exit_barrier_after_finished_workers_is_one_line():
    before, after = ["done 1"], ["next"]
    lines = as_lines(before, rank=1) + as_lines(EXIT_BARRIER) + as_lines(after)
    shown = list(fold_reports(lines, 1))
    assert [line.text for line in shown[:1] + shown[2:]] == ["done 1", "next"]
    assert shown[1].text == (
        "torchrun: node 1 could not wait for the other nodes at exit "
        "(torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely "
        "closed. Did the remote server shutdown or crash?); its own workers had finished"
    )
    assert shown[1].rank is None
    assert shown[1].offset == as_lines(EXIT_BARRIER)[-1].offset  # a reader resumes after it


def test_a_failed_exit_barrier_at_the_end_of_a_log_is_one_line_too():
    shown = list(fold_reports(as_lines(EXIT_BARRIER), 1))
    assert len(shown) == 1 and shown[0].text.startswith("torchrun: node 1 could not wait")


def test_a_store_warning_with_no_failed_barrier_after_it_comes_through_unchanged():
    warning = EXIT_BARRIER[: EXIT_BARRIER.index("") + 1]  # the C++ warning and its frames
    lines = as_lines(warning + ["epoch 3"])
    assert list(fold_reports(lines, 0)) == lines
    held = ReportFolder(0)
    assert [out for line in as_lines(warning) for out in held.feed(line)] == []
    assert held.flush() == as_lines(warning)  # the log ended there: as it is


def test_a_ranks_store_warning_stays_unless_the_agents_barrier_follows():
    """A rank's own TCPStore warning (its process group's store) is never folded away: only
    the agent's `Error waiting on exit barrier` makes the lines before it the agent's."""
    warning = EXIT_BARRIER[: EXIT_BARRIER.index("") + 1]
    lines = as_lines(warning + ["epoch 3"], rank=0)
    assert list(fold_reports(lines, 0)) == lines


STOP = (RECORDED / "torchrun_stop.txt").read_text().splitlines()  # a job stopped (SIGTERM)


def _worker_or_agent(texts: list[str], node: int) -> list[LogLine]:
    """A node's lines as the local backend reads them: a worker's `[default0]:` prefix is its
    rank; torchrun's own lines have none."""
    out = []
    for line in as_lines(texts, node):
        worker = line.text.startswith("[default0]:")
        text = line.text.removeprefix("[default0]:")
        out.append(LogLine(node, text, node if worker else None, line.offset))
    return out


def test_a_stopped_torchrun_is_one_line_and_the_workers_last_words_stay():
    shown = [(line.rank, line.text) for line in fold_reports(_worker_or_agent(STOP, 0), 0)]
    assert shown == [
        (0, "pid 21059 rank 0 of 2"),
        *((0, f"step {k}") for k in range(5)),
        (None, "torchrun: node 0 was stopped (signal 15 (SIGTERM)); its workers were stopped "
               "with it"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "after",
    [
        ["a line of the agent's own"],  # the death signal, then no SignalException: as it was
        ["Traceback (most recent call last):", '  File "x.py", line 1', "ValueError: other"],
    ],
)
def test_a_death_signal_without_its_signal_exception_comes_through_unchanged(after):
    start = STOP[5:7]  # "Received 15 death signal", "Sending process ... closing signal"
    texts = [*start, *after, "next"]
    assert [line.text for line in fold_reports(as_lines(texts), 1)] == texts


def test_a_one_process_nodes_exit_barrier_is_one_line_though_its_lines_carry_the_rank():
    """With one process a node, split_rank gives a line without torchrun's `[default0]:` to
    the node's rank: the agent's exit barrier came out as ~25 `[rank 1]` lines of a job that
    completed (locally and on a cluster alike: both split lines so)."""
    texts = ["[default0]:test accuracy 0.914", *EXIT_BARRIER, "[default0]:done"]
    lines = []
    for offset, text in enumerate(texts):
        rank, shown = split_rank(1, 1, text)
        lines.append(LogLine(1, shown, rank, offset))
    shown = [(line.rank, line.text) for line in fold_reports(lines, 1)]
    assert shown[0] == (1, "test accuracy 0.914") and shown[-1] == (1, "done")
    assert len(shown) == 3 and shown[1][0] is None
    assert shown[1][1].startswith("torchrun: node 1 could not wait for the other nodes at exit")
