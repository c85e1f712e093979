"""A local job's rendezvous port: claimed from other jobs and the OS, yet free for the
framework's own listener to bind (XGBoost's RabitTracker sets no SO_REUSEADDR)."""

from __future__ import annotations

import datetime
import socket
import subprocess
import sys
from dataclasses import dataclass

import pytest

from kale_ext.backends.local.ports import (
    ALWAYS_LOW,
    DEFAULT_EPHEMERAL,
    bindable,
    claim_port,
    ephemeral_range,
    search_range,
)
from kale_ext.errors import BackendError


@dataclass
class RangeCase:
    text: str | None  # ip_local_port_range's content (None: no such file)
    ephemeral: tuple[int, int]
    searched: tuple[int, int]  # first and last port a claim may take


RANGES = [
    RangeCase("32768\t60999\n", (32768, 60999), (ALWAYS_LOW, 32767)),  # Linux's default
    RangeCase("49152 65535\n", (49152, 65535), (ALWAYS_LOW, 49151)),  # IANA's
    RangeCase("1024 65535\n", (1024, 65535), (ALWAYS_LOW, 65535)),  # no room below: everywhere
    RangeCase("10500 60999\n", (10500, 60999), (ALWAYS_LOW, 65535)),  # fewer than MIN_SPAN
    RangeCase("garbage", DEFAULT_EPHEMERAL, (ALWAYS_LOW, 32767)),
    RangeCase(None, DEFAULT_EPHEMERAL, (ALWAYS_LOW, 32767)),
]


@pytest.mark.parametrize("case", RANGES, ids=[str(c.text) for c in RANGES])
def test_ports_are_searched_outside_the_ephemeral_range(case, tmp_path):
    path = tmp_path / "ip_local_port_range"
    if case.text is not None:
        path.write_text(case.text)
    assert ephemeral_range(str(path)) == case.ephemeral
    found = search_range(case.ephemeral)
    assert (found[0], found[-1]) == case.searched


def free_ports(count: int) -> range:
    """``count`` consecutive ports below the ephemeral range that a plain bind takes now."""
    ports = search_range(ephemeral_range())
    for start in range(ports.start + 7000, ports.stop - count, count):
        if all(bindable(p) for p in range(start, start + count)):
            return range(start, start + count)
    raise AssertionError("no free ports on this machine")


def test_a_claimed_port_is_free_for_a_plain_bind(tmp_path):
    """What XGBoost's tracker does: bind without SO_REUSEADDR, then listen."""
    with claim_port(str(tmp_path)) as claim:
        with socket.socket() as tracker:
            tracker.bind(("0.0.0.0", claim.port))
            tracker.listen()
        assert claim.port < ephemeral_range()[0] or search_range(ephemeral_range()).stop == 65536


def test_the_real_xgboost_tracker_binds_a_claimed_port(tmp_path):
    """A held (bound) port made this fail with `Address already in use`."""
    from xgboost import collective
    from xgboost.tracker import RabitTracker

    with claim_port(str(tmp_path)) as claim:
        tracker = RabitTracker(host_ip="127.0.0.1", n_workers=1, port=claim.port)
        tracker.start()
        args = tracker.worker_args()
        assert args["dmlc_tracker_port"] == claim.port
        with collective.CommunicatorContext(**args):
            assert collective.broadcast("ready", 0) == "ready"
        tracker.wait_for(60)


def test_torch_rendezvous_binds_a_claimed_port(tmp_path):
    from torch.distributed import TCPStore

    with claim_port(str(tmp_path)) as claim:
        timeout = datetime.timedelta(seconds=30)
        server = TCPStore("127.0.0.1", claim.port, 2, True, timeout, wait_for_workers=False)
        client = TCPStore("127.0.0.1", claim.port, 2, False, timeout)
        client.set("rank1", "ready")
        assert server.get("rank1") == b"ready"


def test_two_claims_never_share_a_port(tmp_path):
    ports = free_ports(2)
    with claim_port(str(tmp_path), ports) as one, claim_port(str(tmp_path), ports) as two:
        assert {one.port, two.port} == set(ports)
        with pytest.raises(BackendError, match=f"no free port .* in {ports[0]}-{ports[-1]}"):
            claim_port(str(tmp_path), ports)


def claimant(scope: str, port: int) -> subprocess.Popen:
    """Another process that has claimed ``port`` and holds it until its stdin closes."""
    code = (
        "import sys\n"
        "from kale_ext.backends.local.ports import claim_port\n"
        f"c = claim_port({scope!r}, range({port}, {port + 1}))\n"
        "print(c.port, flush=True); sys.stdin.read()\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert other.stdout.readline().strip() == str(port)  # it holds the claim
    return other


def test_a_claim_made_by_another_process_is_respected_until_it_ends(tmp_path):
    """Supervisors are separate processes: the claim is a name any process of the user sees."""
    port = free_ports(1)
    other = claimant(str(tmp_path), port[0])
    try:
        with pytest.raises(BackendError, match="no free port"):
            claim_port(str(tmp_path), port)
    finally:
        other.stdin.close()  # it ends, and its claim with it
        other.wait(timeout=30)
    with claim_port(str(tmp_path), port) as claim:
        assert claim.port == port[0]


def test_a_port_in_use_is_never_claimed(tmp_path):
    ports = free_ports(2)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", ports[0]))
        listener.listen()
        for _ in range(4):  # whichever port the search starts at
            with claim_port(str(tmp_path), ports) as claim:
                assert claim.port == ports[1]


def test_a_released_claim_can_be_claimed_again(tmp_path):
    port = free_ports(1)
    claim = claim_port(str(tmp_path), port)
    claim.close()
    claim.close()  # twice is harmless
    with claim_port(str(tmp_path), port) as again:
        assert again.port == port[0]


def test_a_killed_claimant_frees_its_port_and_leaves_no_file(tmp_path, monkeypatch):
    """kill -9 of a supervisor: its port is free at once, and nothing stands on disk for it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    port = free_ports(1)
    other = claimant("killed", port[0])
    other.kill()
    other.wait(timeout=30)
    with claim_port("killed", port) as claim:
        assert claim.port == port[0]
    assert list(tmp_path.iterdir()) == []
