"""A failed job's summary from its facts: error records, torchrun's report entries, exits.
(Real local runs that fail are in tests/backends/local/test_failures.py.)"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from kale_ext.backends.base import Failure, LogLine
from kale_ext.backends.failure import (
    RankFailure,
    exit_words,
    first_failure,
    from_record,
    from_report,
    merge,
    rank_tail,
    read_record,
    summarize,
)
from kale_ext.backends.torchrun_report import ReportEntry

OURS = {
    "message": {"message": "h", "extraInfo": {"py_callstack": "...", "timestamp": "100"}},
    "kale_ext": {
        "headline": """cell 3 ("training"), line 2: KeyError: 'label'""",
        "exception": "KeyError: 'label'",
        "cell_index": 2,
        "cell_id": "abc",
        "label": "training",
        "line": 2,
        "rank": 3,
        "local_rank": 1,
        "node": 1,
        "time": 100.5,
    },
}


def test_kale_exts_record_has_the_cell_and_line():
    f = from_record(OURS, node=7)
    assert (f.node, f.rank, f.time, f.exception) == (1, 3, 100.5, "KeyError: 'label'")
    assert (f.cell_index, f.cell_id, f.cell_label, f.line) == (2, "abc", "training", 2)


def test_torchs_own_record_has_the_exception():
    data = {"message": {"message": "ValueError: x", "extraInfo": {"timestamp": "42"}}}
    f = from_record(data, node=2)
    assert (f.node, f.rank, f.time, f.exception, f.cell_index) == (
        2,
        None,
        42.0,
        "ValueError: x",
        None,
    )


@pytest.mark.parametrize("content", ["", "{", "[]", '{"message": "plain"}', "\x00\xff"])
def test_an_unreadable_record_is_no_failure(tmp_path, content):
    path = tmp_path / "error.json"
    path.write_text(content, errors="surrogateescape")
    assert read_record(path, 0) is None
    assert read_record(tmp_path / "missing.json", 0) is None


def test_the_record_and_the_report_of_one_rank_make_one_failure():
    entry = ReportEntry(3, 1, 1, "cell 3 ...", "/e.json", time=100.0, root=True)
    (f,) = merge([from_report(entry, 1), from_record(OURS, 1)])
    assert (f.rank, f.exit_code, f.exception, f.line, f.time) == (
        3,
        1,
        "KeyError: 'label'",
        2,
        100.0,
    )


@dataclass
class Case:
    name: str
    failures: list[RankFailure]
    first: int  # index into failures
    kwargs: dict = field(default_factory=dict)


PEER = "RuntimeError: [pair.cc:553] Connection closed by peer [127.0.0.1]:30443"
CASES = [
    Case(
        "the earliest",
        [RankFailure(0, 0, 5.0, 1, "ValueError: a"), RankFailure(1, 1, 4.0, 1, "KeyError: b")],
        1,
    ),
    Case(
        "a lost peer is a consequence, even when seen first",
        [RankFailure(0, 0, 1.0, 1, PEER), RankFailure(1, 1, 2.0, 1, "KeyError: b")],
        1,
    ),
    Case(
        "torchrun's SIGTERM to the others is a consequence",
        [RankFailure(0, 0, 1.0, -15), RankFailure(1, 1, 2.0, -9)],
        1,
    ),
    Case("no time: the order they were seen in", [RankFailure(1, 1), RankFailure(0, 0)], 0),
    Case(
        "only consequences: the earliest of them",
        [RankFailure(0, 0, 2.0, -15), RankFailure(1, 1, 1.0, 1, PEER)],
        1,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_first_failure(case):
    assert first_failure(case.failures) is case.failures[case.first]


def test_no_failure_at_all():
    assert first_failure([]) is None


@pytest.mark.parametrize(
    ("code", "container", "words"),
    [
        (-9, False, "signal 9 (SIGKILL)"),
        (137, True, "signal 9 (SIGKILL)"),
        (137, False, None),  # a process's own exit code
        (1, True, None),
        (None, False, None),
    ],
)
def test_exit_codes_in_words(code, container, words):
    assert exit_words(code, container) == words


@pytest.mark.parametrize(
    ("failure", "summary"),
    [
        (
            from_record(OURS, 1),
            """node 1, rank 3: cell 3 ("training"), line 2: KeyError: 'label'""",
        ),
        (RankFailure(1, 1, exit_code=-9), "node 1, rank 1: killed by signal 9 (SIGKILL)"),
        (RankFailure(1, 1, exit_code=3), "node 1, rank 1: exited with code 3 (no traceback)"),
        (
            RankFailure(0, signal="killed: out of memory", exit_code=137),
            "node 0: killed: out of memory",
        ),
        (
            RankFailure(2, reason="image x cannot be pulled: not found"),
            "node 2: image x cannot be pulled: not found",
        ),
        (RankFailure(0, 0), "node 0, rank 0: failed"),
    ],
)
def test_the_summary_in_one_line(failure, summary):
    shown = summarize(failure, ["last"])
    assert shown.summary == summary and shown.log_tail == ["last"]


def test_the_summary_keeps_every_fact_and_travels_as_json():
    shown = summarize(from_record(OURS, 1), [])
    data = json.loads(json.dumps(shown.__dict__))
    assert Failure.from_dict(data) == shown
    assert (shown.cell_index, shown.cell_id, shown.line, shown.rank) == (2, "abc", 2, 3)
    assert Failure.from_dict(None) is None and Failure.from_dict({}) is None


def test_the_tail_is_that_ranks_last_lines_with_the_nodes_own():
    lines = [LogLine(0, f"r0 {i}", 0) for i in range(30)]
    lines += [LogLine(0, f"r1 {i}", 1) for i in range(30)]
    lines += [LogLine(0, "torchrun: rank 1 failed first", None)]
    tail = rank_tail(lines, 1)
    assert len(tail) == 20
    assert tail[0] == "[rank 1] r1 11" and tail[-1] == "[node 0] torchrun: rank 1 failed first"
    assert rank_tail(lines, None, count=2) == [
        "[rank 1] r1 29",
        "[node 0] torchrun: rank 1 failed first",
    ]
