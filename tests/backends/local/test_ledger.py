"""The jobs folder's shared JSON records (the queue's line, the shared mounts): one process at a
time, written only when changed, gone when empty, a corrupt one started afresh."""

from __future__ import annotations

import json
import threading

import pytest

from kale_ext.backends.local.ledger import locked_json


def counter(jobs_dir):
    return locked_json(jobs_dir, ".count.json", fresh=lambda: {"n": 0}, empty=lambda d: False)


def test_changes_are_kept_and_an_unchanged_record_is_not_rewritten(tmp_path):
    with counter(tmp_path) as data:
        data["n"] += 1
    path = tmp_path / ".count.json"
    assert json.loads(path.read_text()) == {"n": 1}
    written = path.stat().st_mtime_ns
    with counter(tmp_path) as data:
        assert data == {"n": 1}
    assert path.stat().st_mtime_ns == written


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"jobs": 3}'])
def test_a_corrupt_or_invalid_record_starts_afresh(tmp_path, text):
    (tmp_path / ".line.json").write_text(text)
    line = locked_json(
        tmp_path, ".line.json", fresh=lambda: {"jobs": {}}, empty=lambda d: not d["jobs"],
        valid=lambda d: isinstance(d.get("jobs"), dict),
    )  # fmt: skip
    with line as data:
        assert data == {"jobs": {}}
    assert not (tmp_path / ".line.json").exists()  # empty: nothing left behind


def test_processes_take_turns(tmp_path):
    """Eight threads (each its own descriptor, so its own flock) add one each: none is lost."""

    def add():
        with counter(tmp_path) as data:
            seen = data["n"]
            threading.Event().wait(0.01)  # another turn would interleave here without the lock
            data["n"] = seen + 1

    threads = [threading.Thread(target=add) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    with counter(tmp_path) as data:
        assert data["n"] == 8
