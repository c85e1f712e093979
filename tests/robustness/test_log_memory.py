"""Item 3: a 200 MB log (one 64 MiB line in it) streams from a real server in bounded memory, in
events of at most 256 KiB, while the server keeps answering other requests."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path

from kale_ext.backends.logpieces import MAX_PIECE
from tests.conftest import notebook
from tests.robustness.conftest import call

MIB = 1024 * 1024
#: 136 MiB of 1 KiB lines, then one line of 64 MiB, then a last short line.
FLOOD = notebook(
    "import sys\n"
    "line = 'y' * 1023 + '\\n'\n"
    "for _ in range(136 * 1024 // 64):\n"
    "    sys.stdout.write(line * 64)\n"
    "sys.stdout.write('x' * (64 * 1024 * 1024) + '\\n')\n"
    "print('the end')\n"
)


def rss(pid: int) -> int:
    """Resident memory of a process, in bytes."""
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class Peak(threading.Thread):
    """Samples a process's resident memory until stopped; keeps the highest."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, rss(pid), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.01):
            self.peak = max(self.peak, rss(self.pid))


class Latency(threading.Thread):
    """GET jobs/{name} over and over until stopped; keeps the slowest answer's time."""

    def __init__(self, server, name: str):
        super().__init__(daemon=True)
        self.server, self.name, self.slowest, self.count = server, name, 0.0, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            start = time.monotonic()
            assert call(self.server, "GET", f"jobs/{self.name}").status == 200
            self.slowest = max(self.slowest, time.monotonic() - start)
            self.count += 1


def stream(server, path: str):
    """(every LogLine event's data without its text but with the text's length, the end's
    data), read 1 MiB at a time."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    conn.request("GET", f"/kale-ext/{path}", headers={"Authorization": f"token {server.token}"})
    response = conn.getresponse()
    assert response.status == 200, response.read()[:300]
    lines, end, buffer = [], None, b""
    while chunk := response.read1(MIB):
        buffer += chunk
        *blocks, buffer = buffer.split(b"\n\n")
        for block in blocks:
            if block.startswith(b":"):
                continue
            head, _, data = block.rpartition(b"data: ")
            value = json.loads(data)
            if b"event: end" in head:
                end = value
            else:
                value["length"] = len(value.pop("text").encode())
                lines.append(value)
    conn.close()
    return lines, end


def test_3_a_200_mb_log_streams_in_bounded_memory(server):
    answer = call(server, "POST", "jobs", json.dumps({"notebook": FLOOD}).encode())
    assert answer.status == 201, answer.body
    name = answer.json["name"]
    deadline = time.monotonic() + 180
    while (status := call(server, "GET", f"jobs/{name}").json["status"]) not in (
        "Complete",
        "Failed",
    ):
        assert time.monotonic() < deadline, "the job did not write its log within 180 s"
        time.sleep(0.2)
    assert status == "Complete"
    stream(server, f"jobs/{name}/logs?tail=1")  # loads what streaming needs: not the log's cost

    peak, latency = Peak(server.proc.pid), Latency(server, name)
    before = peak.peak
    peak.start()
    latency.start()
    lines, end = stream(server, f"jobs/{name}/logs")
    peak.done.set(), latency.done.set()
    peak.join(), latency.join()

    growth = peak.peak - before
    print(f"streamed {len(lines)} events; server grew {growth / MIB:.1f} MiB; slowest GET of "
          f"{latency.count}: {latency.slowest * 1000:.0f} ms")  # fmt: skip
    assert growth < 50 * 1000 * 1000, f"the server grew by {growth / MIB:.0f} MiB"
    assert latency.count and latency.slowest < 2.0, f"GET jobs/{name} took {latency.slowest:.2f} s"
    assert end == {"status": "Complete", "status_text": "Complete", "reason": None}
    assert sum(x["length"] for x in lines) >= 200 * 1000 * 1000
    assert max(x["length"] for x in lines) <= MAX_PIECE  # no event carries more than 256 KiB
    first = next(i for i, x in enumerate(lines) if x.get("partial"))
    last = next(i for i, x in enumerate(lines) if i > first and not x.get("partial"))
    assert sum(x["length"] for x in lines[first : last + 1]) == 64 * MIB  # the long line, whole
    assert last - first + 1 >= 64 * MIB // MAX_PIECE  # in pieces, each marked but the last
    assert lines[-1]["length"] == len("the end")
