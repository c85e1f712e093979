"""Hostile requests against a real server, in one bounded run (a load test, not a timed test).

    python benchmarks/hostile.py [--requests 4000] [--seconds 90] [--workers 4] [--jobs 4]
                                 [--smoke]

Starts `jupyter server` on a free loopback port (token auth, only kale_ext loaded, the local
backend, root and jobs in a temporary directory, the same harness as benchmarks/server.py). Then,
all at once:

- `--workers` threads send hostile requests round-robin from HOSTILE (oversized sweeps, a FIFO
  and a sparse 1 GiB file as notebook paths, huge tails, corrupt job records, bodies of the
  wrong type, size or nesting, an encoded traversal) until `--requests` were sent or
  `--seconds` passed;
- one thread submits `--jobs` small jobs (the records that must not be lost);
- one thread sends GET kale-ext/runtimes every 50 ms (the cheap request whose latency counts);
- one thread samples the server's resident memory every 20 ms.

Reports: requests tried, 2xx/4xx/5xx and failed connections, whether the server crashed,
records lost (jobs answered 201 but not listed by GET jobs), the server's peak memory growth,
and p50/p95/max of GET runtimes while the hostile requests ran. Loopback only; every loop is
bounded; the jobs are deleted at the end.

``--smoke`` (benchmarks/smoke.py): each hostile request once, by 2 clients, 1 job submitted
meanwhile. A crash, a lost record or a 5xx fails it as it fails the full run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import Server, pct  # noqa: E402  (benchmarks/server.py)
from timing import SMOKE, SMOKE_NICE, ThreadErrors  # noqa: E402

MIB = 1024 * 1024
BODY_LIMIT = 8 * MIB  #: KaleExtApp.max_body_bytes, the default


def notebook(*cells: tuple[str, list[str]]) -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {"tags": tags},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }  # fmt: skip
            for i, (source, tags) in enumerate(cells)
        ],
    }


TINY = notebook(("n = 1", ["parameters"]), ("print('tiny', n)", []))
SWEEP_NB = notebook(("quality = 0.5\nlayers = 1\nseed = 0", ["parameters"]), ("print(1)", []))
#: Records as a crash or a careless hand could leave them.
CORRUPT = {
    "garbage": b"\x00\xff not json at all",
    "cut-short": b'{"name": "cut-short", "status": "Complete", "runtime": "torch-distrib',
    "a-list": b"[1, 2, 3]",
}


def grid(*sizes: int) -> dict:
    names = ("quality", "layers", "seed")[: len(sizes)]
    return {"params": {k: [i / 1000 for i in range(n)] for k, n in zip(names, sizes, strict=True)}}


def hostile() -> list[tuple[str, str, str, bytes | dict | None]]:
    """(what, method, path, body): each is refused or answered without costing the server."""
    nested = b'{"notebook": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    pip_option = {"packages": ["numpy --extra-index-url http://x"]}
    host_path = {"config": {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}}
    return [
        ("sweep of 64,000,000 points", "POST", "sweeps",
         {"notebook": SWEEP_NB, "sweep": grid(400, 400, 400)}),
        ("sweep of 4,000,000 points", "POST", "sweeps",
         {"notebook": SWEEP_NB, "sweep": grid(2000, 2000)}),
        ("compile a FIFO", "POST", "compile", {"path": "hostile/pipe.ipynb"}),
        ("submit a FIFO", "POST", "jobs", {"path": "hostile/pipe.ipynb"}),
        ("compile a 1 GiB file", "POST", "compile", {"path": "hostile/huge.ipynb"}),
        ("a huge tail", "GET", "jobs/garbage/logs?tail=999999999999", None),
        ("a huge tail of a job", "GET", "jobs/{job}/logs?tail=99999999999999999999", None),
        ("logs of a corrupt record", "GET", "jobs/cut-short/logs", None),
        ("list beside corrupt records", "GET", "jobs", None),
        ("get a corrupt record", "GET", "jobs/a-list", None),
        ("not JSON", "POST", "compile", b"{not json"),
        ("a number for a notebook", "POST", "compile", {"notebook": 5}),
        ("200,000 nested brackets", "POST", "compile", nested),
        ("a 9 MiB body", "POST", "jobs", b'{"notebook": "' + b"x" * (9 * MIB) + b'"}'),
        ("a NUL in an env value", "POST", "jobs",
         {"notebook": TINY, "options": {"env": {"A": "x\x00y"}}}),
        ("a pip option as a package", "POST", "compile", {"notebook": TINY, "options": pip_option}),
        ("a hostPath volume", "POST", "compile", {"notebook": TINY, "options": host_path}),
        ("an encoded traversal", "DELETE", "jobs/..%2f..%2fetc", None),
        ("an unknown parameter", "GET", "runtimes?evil=1", None),
    ]  # fmt: skip


class Memory(threading.Thread):
    """Samples a process's resident memory every 20 ms; keeps the highest."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.done = pid, threading.Event()
        self.peak = self.now()

    def now(self) -> int:
        try:
            for row in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if row.startswith("VmRSS:"):
                    return int(row.split()[1]) * 1024
        except OSError:  # the process is gone
            pass
        return 0

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak = max(self.peak, self.now())


def announce(server: Server, method: str, path: str, length: int) -> tuple[int, bytes]:
    """A request that announces a body past the server's limit, then waits for the answer
    before sending it (as a client that honours an early answer does)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: token {server.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\nConnection: close\r\n\r\n".encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer.partition(b"\r\n\r\n")[2]


def prepare(workdir: Path) -> None:
    root, jobs = workdir / "root", workdir / "jobs"
    root.mkdir()
    (root / "work").mkdir()  # the jobs' workspace: the hostile files are not in it
    (root / "work" / "tiny.ipynb").write_text(json.dumps(TINY))
    (root / "hostile").mkdir()
    os.mkfifo(root / "hostile" / "pipe.ipynb")  # nobody writes it: reading it waits for ever
    with open(root / "hostile" / "huge.ipynb", "wb") as f:  # sparse: 1 GiB to a reader
        f.truncate(1024 * MIB)
    for name, text in CORRUPT.items():
        (jobs / name).mkdir(parents=True)
        (jobs / name / "job.json").write_bytes(text)


def run(args, workdir: Path) -> dict:
    prepare(workdir)
    server = Server(workdir, warm_up=False)
    try:
        status, body = server.request("POST", "/kale-ext/jobs", {"path": "work/tiny.ipynb"})
        assert status == 201, body[:300]
        first = json.loads(body)["name"]
        for _ in range(3):  # what any first use loads (the compiler, the models) is not growth
            server.request("POST", "/kale-ext/compile", {"path": "work/tiny.ipynb"})
            server.request("GET", "/kale-ext/runtimes")
        memory = Memory(server.proc.pid)
        before = memory.peak = memory.now()
        memory.start()
        requests = [(w, m, p.format(job=first), b) for w, m, p, b in hostile()]
        statuses: Counter = Counter()
        by_what: dict[str, Counter] = {w: Counter() for w, *_ in requests}
        lock, sent = threading.Lock(), [0]
        deadline = time.monotonic() + args.seconds
        stop = threading.Event()

        def attacker() -> None:
            while not stop.is_set() and time.monotonic() < deadline:
                with lock:
                    if sent[0] >= args.requests:
                        return
                    what, method, path, body = requests[sent[0] % len(requests)]
                    sent[0] += 1
                try:
                    if isinstance(body, bytes) and len(body) > BODY_LIMIT:
                        code, answer = announce(server, method, f"/kale-ext/{path}", len(body))
                    else:
                        code, answer = server.request(method, f"/kale-ext/{path}", body)
                    if code == 200 and path == "compile" and not json.loads(answer)["ok"]:
                        code = "200 ok:false"  # refused with the diagnostics a user reads
                except OSError as e:  # the server closed the connection or did not answer
                    code = type(e).__name__
                with lock:
                    statuses[f"{code // 100}xx" if isinstance(code, int) else code] += 1
                    by_what[what][code] += 1

        submitted: list[str] = [first]
        refused: list[tuple[int, bytes]] = []

        def submitter() -> None:
            for _ in range(args.jobs):
                status, body = server.request("POST", "/kale-ext/jobs", {"path": "work/tiny.ipynb"})
                if status == 201:
                    submitted.append(json.loads(body)["name"])
                else:
                    refused.append((status, body[:200]))

        cheap: list[float] = []

        def prober() -> None:
            while not stop.wait(0.05):
                t = time.perf_counter()
                try:
                    ok = server.request("GET", "/kale-ext/runtimes")[0] == 200
                except OSError:
                    ok = False
                cheap.append(time.perf_counter() - t if ok else float("inf"))

        started = time.monotonic()
        attackers = [threading.Thread(target=attacker, daemon=True) for _ in range(args.workers)]
        helpers = [threading.Thread(target=f, daemon=True) for f in (submitter, prober)]
        for t in attackers + helpers:
            t.start()
        for t in attackers + helpers[:1]:
            t.join(args.seconds + 120)
        stop.set()
        helpers[1].join(60)
        elapsed = time.monotonic() - started
        memory.done.set()
        memory.join()
        crashed = server.proc.poll() is not None
        listed: set[str] = set()
        if not crashed:
            status, body = server.request("GET", "/kale-ext/jobs")
            listed = {j["name"] for j in json.loads(body)["jobs"]} if status == 200 else set()
            for name in submitted:
                server.request("DELETE", f"/kale-ext/jobs/{name}")
        return {
            "tried": sent[0],
            "statuses": dict(statuses),
            "by_what": by_what,
            "crashed": crashed,
            "submitted": len(submitted),
            "refused": refused,
            "lost": sorted(set(submitted) - listed),
            "growth": memory.peak - before,
            "before": before,
            "cheap": cheap,
            "elapsed": elapsed,
        }
    finally:
        server.stop()


def report(r: dict, args) -> None:
    print(f"{r['tried']} hostile requests in {r['elapsed']:.1f} s by {args.workers} clients: "
          + ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items())))  # fmt: skip
    for what, codes in r["by_what"].items():
        print(f"  {what:<30} " + ", ".join(f"{k}×{v}" for k, v in sorted(codes.items(), key=str)))
    print(f"crashes: {'the server exited' if r['crashed'] else 'none (the server still answers)'}")
    lost, refused = r["lost"] or "", r["refused"] or ""
    print(f"records: {r['submitted']} jobs submitted (201), {len(r['lost'])} not listed {lost}; "
          f"{len(r['refused'])} submits refused {refused}")  # fmt: skip
    print(f"server memory: {r['before'] / MIB:.0f} MiB before, peak growth "
          f"{r['growth'] / MIB:.1f} MiB")  # fmt: skip
    ok = [x for x in r["cheap"] if x != float("inf")]
    failed = len(r["cheap"]) - len(ok)
    if ok:
        print(f"GET runtimes meanwhile: {len(r['cheap'])} sent, {failed} failed; p50 "
              f"{pct(ok, 0.5) * 1000:.0f} ms, p95 {pct(ok, 0.95) * 1000:.0f} ms, "
              f"max {max(ok) * 1000:.0f} ms")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=4000, help="hostile requests at most")
    p.add_argument("--seconds", type=float, default=90, help="time for them at most")
    p.add_argument("--workers", type=int, default=4, help="concurrent hostile clients")
    p.add_argument("--jobs", type=int, default=4, help="jobs submitted meanwhile")
    p.add_argument("--smoke", action="store_true", help=SMOKE)
    args = p.parse_args(argv)
    if args.smoke:
        args.requests, args.seconds, args.workers, args.jobs = len(hostile()), 60, 2, 1
        Server.settings = {"local_nice": SMOKE_NICE}
    errors = ThreadErrors()
    with tempfile.TemporaryDirectory(prefix="kale-hostile-") as tmp:
        r = run(args, Path(tmp))
    report(r, args)
    errors.check()
    bad = r["crashed"] or r["lost"] or r["statuses"].get("5xx")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
