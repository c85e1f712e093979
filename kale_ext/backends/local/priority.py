"""Local jobs run below the server's CPU priority: the defaults' ``local_nice`` (10 unless set).

While jobs take every core, the Jupyter server, the panel and the kernels stay responsive; on an
idle machine the jobs get all of it anyway. Two settings make that so on Linux:

- each node's processes run ``nice`` steps below the supervisor (set before the node starts, and
  inherited by everything it starts);
- where the scheduler weighs sessions against each other as groups (autogroup, the default of
  most desktop kernels), a process's nice counts only within its group: each node is a session
  of its own, and so is each worker torchrun starts. So the group of every session the job's
  processes lead is lowered too. The kernel lets a user who is not root change one group a tenth
  of a second; a group it refuses is lowered again at the next look (``Groups.lower``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable
from pathlib import Path


def lower_priority(nice: int) -> Callable[[], None] | None:
    """A preexec that starts a node ``nice`` steps below this process, its session's group
    too (None for 0)."""
    if not nice:
        return None

    def lower() -> None:
        os.nice(nice)
        set_group_nice("self", nice)

    return lower


def group_of(pid: int | str) -> tuple[str, int] | None:
    """The scheduler group of ``pid`` and its nice value (None: no process, or no autogroups)."""
    try:
        name, _, nice = Path(f"/proc/{pid}/autogroup").read_text().split()
        return name, int(nice)
    except (OSError, ValueError):
        return None


def set_group_nice(pid: int | str, nice: int) -> bool:
    """Set the nice value of ``pid``'s group; False when the kernel asks to try later (a user who
    is not root: one change a tenth of a second). No autogroups, or no process: nothing to do."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except OSError as e:
        return e.errno != errno.EAGAIN
    return True


class Groups:
    """Lowers the groups of a job's processes to ``nice``: each group once it is as asked."""

    def __init__(self, nice: int):
        self.nice = nice
        self.pending = bool(nice)

    def lower(self, pids: Iterable[int]) -> None:
        """Lower the groups of ``pids`` not yet at ``nice`` (one write per group)."""
        if not self.nice:
            return
        seen: set[str] = set()
        pending = False
        for pid in pids:
            group = group_of(pid)
            if group is None or group[0] in seen:
                continue
            seen.add(group[0])
            if group[1] < self.nice and not set_group_nice(pid, self.nice):
                pending = True
        self.pending = pending
