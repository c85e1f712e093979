"""Runs one local job: a process per node, each the TrainJob's own command with the PET_*
environment the Trainer torch plugin gives a node; records every state change in job.json.

    python -m kale_ext.backends.supervisor JOB_DIR

It runs detached from the Jupyter server (its own session), so a job outlives a server restart.
When a node fails, the other nodes are stopped: no orphans are left behind.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ...compile.codegen import write_atomic

_FAILURE = re.compile(
    r"rank\s*:\s*(?P<rank>\d+)\s*\(local_rank:\s*(?P<local>\d+)\)\s*\n\s*exitcode\s*:\s*(?P<code>-?\d+)"
)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_record(job_dir: Path) -> dict:
    return json.loads((job_dir / "job.json").read_text())


def write_record(job_dir: Path, record: dict) -> None:
    write_atomic(job_dir / "job.json", json.dumps(record, indent=2))


def signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def failure_reason(record: dict, node: int, code: int, log: Path) -> str:
    """Plain language for a failed node, naming the rank and signal where torchrun said so."""
    try:
        text = log.read_text(errors="replace")[-20000:]
    except OSError:
        text = ""
    failures = list(_FAILURE.finditer(text))
    m = failures[-1] if failures else None
    if m:
        rank, child = int(m["rank"]), int(m["code"])
        if child < 0:
            return (
                f"rank {rank} (node {node}) was killed by signal {-child} ({signal_name(-child)})"
            )
        return f"rank {rank} (node {node}) exited with code {child}"
    if code < 0:
        return f"node {node} was killed by signal {-code} ({signal_name(-code)})"
    return f"node {node} exited with code {code}"


def run(job_dir: Path) -> int:
    record = read_record(job_dir)
    nodes = record["num_nodes"]
    procs: list[subprocess.Popen] = []
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    for k in range(nodes):
        env = {
            **os.environ,
            **record["env"],
            "PET_NNODES": str(nodes),
            "PET_NPROC_PER_NODE": str(record["procs_per_node"]),
            "PET_NODE_RANK": str(k),
            "PET_MASTER_ADDR": "127.0.0.1",
            "PET_MASTER_PORT": str(record["master_port"]),
        }
        workdir = job_dir / f"node-{k}"
        workdir.mkdir(exist_ok=True)
        with open(job_dir / f"node-{k}.log", "ab", buffering=0) as log:
            procs.append(
                subprocess.Popen(
                    record["command"],
                    cwd=workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # each node is its own process group
                )
            )
    record.update(status="Running", started=now())
    record["nodes"] = [{"index": k, "state": "Running", "pid": p.pid} for k, p in enumerate(procs)]
    write_record(job_dir, record)

    failed: tuple[int, int] | None = None
    deadline_s = record.get("active_deadline_seconds")
    ends_by = time.monotonic() + deadline_s if deadline_s else None
    expired = False
    family: dict[int, str] = {}  # every process the nodes started: torchrun's workers run in
    last_scan = 0.0  # sessions of their own, and would outlive a killed agent
    while not stopping:
        if time.monotonic() - last_scan > 0.5:
            family.update(descendants({p.pid for p in procs}))
            last_scan = time.monotonic()
        codes = [p.poll() for p in procs]
        bad = [(k, c) for k, c in enumerate(codes) if c not in (None, 0)]
        if bad:
            failed = bad[0]
            break
        if all(c == 0 for c in codes):
            break
        if ends_by is not None and time.monotonic() > ends_by:
            expired = True
            break
        time.sleep(0.05)

    for p in procs:  # stop whatever still runs: a failed job leaves no orphans
        if p.poll() is None:
            _kill_group(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(p.pid, signal.SIGKILL)
            p.wait()
    family.update(descendants({p.pid for p in procs}))
    for pid, started in family.items():  # no orphans, whatever their process group
        if _start_time(pid) == started:  # the same process, not a reused PID
            _kill(pid, signal.SIGKILL)

    record = read_record(job_dir)  # keep what others recorded meanwhile
    for k, p in enumerate(procs):
        state = "Succeeded" if p.returncode == 0 else "Failed"
        record["nodes"][k].update(state=state, exit_code=p.returncode)
    if stopping:
        record.update(status="Failed", reason="cancelled")
    elif expired:
        record.update(status="Failed", reason=f"DeadlineExceeded: ran longer than {deadline_s} s")
    elif failed:
        node, code = failed
        reason = failure_reason(record, node, code, job_dir / f"node-{node}.log")
        record["nodes"][node]["reason"] = reason
        record.update(status="Failed", reason=reason)
    else:
        record.update(status="Complete", reason=None)
    record["finished"] = now()
    write_record(job_dir, record)
    return 0


def _stat(pid: int | str) -> list[str] | None:
    try:
        text = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # fields after the command name


def _start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None


def descendants(roots: set[int]) -> dict[int, str]:
    """Live descendants of ``roots`` with their start times (empty where there is no /proc)."""
    children: dict[int, list[tuple[int, str]]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    for entry in entries:
        fields = _stat(entry)
        if fields:
            children.setdefault(int(fields[1]), []).append((int(entry), fields[19]))
    found: dict[int, str] = {}
    todo = list(roots)
    while todo:
        for child, started in children.get(todo.pop(), []):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
