"""Helper processes end with the server, however it ends (kill -9 included).

A compile process (compile_worker.py) ends when its stdin, a pipe from the server, ends: the
kernel closes it when the server dies. In case another process came to hold that pipe too (a
child forked without exec), each compile process also watches the server itself: a thread waits
on the server's pidfd (Linux), else checks that it still runs every second, and ends the process
when the server has gone.
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
