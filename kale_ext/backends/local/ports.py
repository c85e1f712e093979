"""A local job's rendezvous port: claimed for the job's whole life, yet left unbound, so the
framework's own listener binds it exactly as on a cluster.

Why not hold it bound. A port picked with ``bind(0)`` and released before the job binds it
races: in the seconds a node takes to start, another job, any ``bind(0)`` or any outgoing
connection may take it. Holding it bound (not listening) works for torch, whose TCPStore sets
SO_REUSEADDR, but XGBoost's ``RabitTracker`` binds without it and fails with `Address already in
use` on its own ``DMLC_TRACKER_PORT``. So the port is kept from the others another way:

- the OS: the port is chosen outside the ephemeral range (``ip_local_port_range``), which is
  where ``bind(0)`` and outgoing connections get theirs; the OS never hands it out;
- other local jobs (any jobs folder, any kale_ext process of this user): a name per port in
  Linux's abstract socket namespace, bound by the job's supervisor while the job lives. No file
  stands for it (a lock file per port was left behind by every killed supervisor, and a folder of
  them in /tmp); the name goes with the process, so a killed supervisor leaves nothing claimed,
  on disk or off it; and the socket is not inherited by the nodes;
- a program already listening there, or connections lingering in TIME_WAIT: before it is
  claimed, the port must take a plain bind (no SO_REUSEADDR), as the tracker's will.

On a machine whose ephemeral range leaves fewer than MIN_SPAN ports below it, ports are taken
from the whole range above ALWAYS_LOW: still locked and checked, with only the OS's own picks
left to chance.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import socket
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


def claim_name(port: int, scope: str = "") -> bytes:
    """The abstract socket name that claims ``port`` for this user (``scope``: a separate set of
    claims, for tests)."""
    tag = hashlib.sha256(scope.encode()).hexdigest()[:12] if scope else "all"
    return f"\0kale_ext-port-{os.getuid()}-{tag}-{port}".encode()


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

    def __init__(self, port: int, holder: socket.socket):
        self.port = port
        self._holder: socket.socket | None = holder

    def close(self) -> None:
        if self._holder is not None:
            self._holder.close()  # the name is free again
            self._holder = None

    def __enter__(self) -> PortClaim:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def _hold(port: int, scope: str) -> socket.socket | None:
    """A socket bound to ``port``'s claim name, or None when another process holds it."""
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # close-on-exec: nodes lack it
    try:
        holder.bind(claim_name(port, scope))
    except OSError as e:
        holder.close()
        if e.errno == errno.EADDRINUSE:
            return None
        raise BackendError(f"cannot claim a port for the job's rendezvous: {e.strerror}") from None
    return holder


def claim_port(scope: str = "", ports: range | None = None) -> PortClaim:
    """A port no other local job holds and a plain bind can take, claimed until closed."""
    ports = ports if ports is not None else search_range(ephemeral_range())
    start = random.randrange(len(ports))  # noqa: S311 (spreading jobs, not a secret)
    for i in range(min(TRIES, len(ports))):
        port = ports[(start + i) % len(ports)]
        holder = _hold(port, scope)
        if holder is None:
            continue
        if bindable(port):
            return PortClaim(port, holder)
        holder.close()
    raise BackendError(
        f"no free port for the job's rendezvous in {ports.start}-{ports.stop - 1} "
        f"after {min(TRIES, len(ports))} tries"
    )
