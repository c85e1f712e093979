"""Helper processes end with the server, however it ends (kill -9 included).

The compile processes are children of multiprocessing's fork server, and each holds the pipe
whose closing tells the fork server to exit: so neither sees the server die by itself (a
parent-death signal would wait for the fork server, which waits for them). Each compile process
therefore watches the server itself: a thread waits on the server's pidfd (Linux), else checks
that it still runs every second, and ends the process when the server has gone. The fork server
and multiprocessing's resource tracker then exit on their own, their pipes closed.
"""

from __future__ import annotations

import os
import select
import threading

from ..backends.local.processes import alive


def _wait_for_pidfd(fd: int) -> None:
    select.select([fd], [], [])  # readable when the process has ended
    os._exit(1)


def _poll(pid: int) -> None:
    tick = threading.Event()
    while alive(pid):
        tick.wait(1.0)
    os._exit(1)


def die_with(server_pid: int) -> None:
    """End this process when process ``server_pid`` ends (at once when it has already)."""
    try:
        fd = os.pidfd_open(server_pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd here: check every second
        target, args = _poll, (server_pid,)
    else:
        target, args = _wait_for_pidfd, (fd,)
    threading.Thread(target=target, args=args, name="kale_ext-lifeline", daemon=True).start()
