"""A local job on a full disk (diskroom.py): the room kept for its last record, the check that
the disk is full, and the failure that says so. The whole job on a real full disk is in
test_supervisor.py (a small tmpfs, where the machine lets a test mount one)."""

from __future__ import annotations

import errno
import os

import pytest

from kale_ext.backends.base import Failure
from kale_ext.backends.local import diskroom


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_folder_with_room_is_not_full_and_the_probe_leaves_nothing(tmp_path):
    assert not diskroom.full(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seam", ["os.write", "os.open"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_write_refused_for_want_of_room_is_a_full_disk(tmp_path, monkeypatch, seam, code):
    def refused(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(seam, refused)
    assert diskroom.full(tmp_path)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_another_write_error_is_not_a_full_disk(tmp_path, monkeypatch):
    def io_error(*args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr("os.write", io_error)
    assert not diskroom.full(tmp_path)


def test_the_room_is_kept_and_given_back(tmp_path, monkeypatch):
    diskroom.keep_room(tmp_path)
    assert (tmp_path / diskroom.RESERVE).stat().st_size == diskroom.RESERVE_BYTES
    diskroom.give_back(tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr("builtins.open", no_space)  # a disk full already: nothing is kept
    diskroom.keep_room(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_on_a_full_disk_says_so_first(tmp_path):
    bare = Failure(summary="node 0, rank 0: exited with code 1 (no traceback)", node=0,
                   exit_code=1)  # fmt: skip
    raised = Failure(summary="node 0, rank 0: cell 2, line 3: OSError: [Errno 28] No space "
                     "left on device", node=0, exception="OSError: [Errno 28] No space left on "
                     "device")  # fmt: skip
    other = Failure(summary="node 0, rank 0: KeyError: 'x'", node=0, exception="KeyError: 'x'")
    assert diskroom.died_of_full_disk(bare, was_full=True)
    assert not diskroom.died_of_full_disk(bare, was_full=False)
    assert diskroom.died_of_full_disk(raised, was_full=False)
    assert not diskroom.died_of_full_disk(other, was_full=True)  # its own error, room or not
    said = diskroom.on_full_disk(bare, tmp_path)
    assert said.summary == (f"the disk is full: no space left in {tmp_path} "
                            "(node 0, rank 0: exited with code 1 (no traceback))")  # fmt: skip
    assert said.reason == "the disk is full" and said.exit_code == 1
