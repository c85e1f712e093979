"""A local job's rendezvous port: claimed for the job's whole life, yet left unbound, so the
framework's own listener binds it exactly as on a cluster.

Why not hold it bound. A port picked with ``bind(0)`` and released before the job binds it
races: in the seconds a node takes to start, another job, any ``bind(0)`` or any outgoing
connection may take it. Holding it bound (not listening) works for torch, whose TCPStore sets
SO_REUSEADDR, but XGBoost's ``RabitTracker`` binds without it and fails with `Address already in
use` on its own ``DMLC_TRACKER_PORT``. So the port is kept from the others another way:

- the OS: the port is chosen outside the ephemeral range (``ip_local_port_range``), which is
  where ``bind(0)`` and outgoing connections get theirs; the OS never hands it out;
- other local jobs (any jobs folder, any kale_ext process of this user): a lock file per port,
  ``flock``-ed by the job's supervisor while the job lives; the lock goes with the process, so a
  killed supervisor leaves nothing claimed;
- a program already listening there, or connections lingering in TIME_WAIT: before it is
  claimed, the port must take a plain bind (no SO_REUSEADDR), as the tracker's will.

On a machine whose ephemeral range leaves fewer than MIN_SPAN ports below it, ports are taken
from the whole range above ALWAYS_LOW: still locked and checked, with only the OS's own picks
left to chance.
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

from ...errors import BackendError

#: Ports below this are often fixed services' (databases, web servers, Jupyter's 8888...).
ALWAYS_LOW = 10000
#: The fewest ports worth searching below the ephemeral range.
MIN_SPAN = 1000
#: The Linux default ephemeral range, where ip_local_port_range cannot be read.
DEFAULT_EPHEMERAL = (32768, 60999)
#: How many ports one claim tries before giving up.
TRIES = 200


def ephemeral_range(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int]:
    """The OS's ephemeral ports (``bind(0)``, outgoing connections): (first, last)."""
    try:
        low, high = (int(v) for v in Path(path).read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL
    return low, high


def search_range(ephemeral: tuple[int, int]) -> range:
    """Where claims look: below the ephemeral range, or (no room there) the whole range."""
    if ephemeral[0] - ALWAYS_LOW >= MIN_SPAN:
        return range(ALWAYS_LOW, ephemeral[0])
    return range(ALWAYS_LOW, 65536)


def locks_dir() -> Path:
    """The per-user folder of port locks, shared by every kale_ext process of this user."""
    return Path(tempfile.gettempdir()) / f"kale_ext-ports-{os.getuid()}"


def bindable(port: int) -> bool:
    """Whether a plain bind (no SO_REUSEADDR) to ``port`` on every address succeeds now."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind(("0.0.0.0", port))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class PortClaim:
    """A port claimed for a job: ``port``; released by ``close()`` (or at the end of a
    ``with``, or when the process ends)."""

    def __init__(self, port: int, lock: int):
        self.port = port
        self._lock = lock

    def close(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)  # closing the descriptor drops its flock
            self._lock = -1

    def __enter__(self) -> PortClaim:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def _lock(folder: Path, port: int) -> int | None:
    """The open, exclusively locked lock file of ``port``, or None when another holds it."""
    fd = os.open(folder / str(port), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def claim_port(folder: Path | None = None, ports: range | None = None) -> PortClaim:
    """A port no other local job holds and a plain bind can take, claimed until closed."""
    folder = folder or locks_dir()
    ports = ports if ports is not None else search_range(ephemeral_range())
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise BackendError(f"cannot create the port locks folder {folder}: {e.strerror}") from None
    start = random.randrange(len(ports))  # noqa: S311 (spreading jobs, not a secret)
    for i in range(min(TRIES, len(ports))):
        port = ports[(start + i) % len(ports)]
        fd = _lock(folder, port)
        if fd is None:
            continue
        if bindable(port):
            return PortClaim(port, fd)
        os.close(fd)
    raise BackendError(
        f"no free port for the job's rendezvous in {ports.start}-{ports.stop - 1} "
        f"after {min(TRIES, len(ports))} tries"
    )
