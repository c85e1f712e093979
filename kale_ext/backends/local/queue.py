"""The local queue: jobs beyond this machine's capacity wait their turn, first in first out.

The CLI, the Jupyter server and the magics submit to one jobs folder from different processes,
so the line is kept in that folder: a small ledger (``.queue.json``, gone when the line is
empty) changed only under an exclusive ``flock`` of the jobs folder itself. A job needs nodes ×
processes-per-node processes ("CPUs") and nodes × GPUs per node; the capacity is the CPU count
and the GPUs present unless the defaults' ``local_capacity`` sets the processes.

- ``enter`` (at submit) puts a job at the end of the line, owned by the submitting process
  until ``hand_over`` names its supervisor;
- ``wait_turn`` (the supervisor) returns once every job ahead of it has started and the running
  jobs leave room for it, saying meanwhile why it waits and its place in line;
- ``leave`` frees what a job held. An entry whose owner no longer runs (a killed supervisor:
  checked by start time, not pid alone) or whose job folder is gone frees its place too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from ...job.procs import ASKED, Procs, counted, how_to_ask
from .ledger import locked_json
from .processes import runs, start_time

LEDGER = ".queue.json"
PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
#: How often a waiting supervisor looks at the line again.
POLL_SECONDS = 0.2


@dataclass(frozen=True)
class Need:
    """What a job holds while it runs, or what a machine has."""

    procs: int
    gpus: int = 0

    def words(self) -> str:
        gpus = f" and {_count(self.gpus, 'GPU')}" if self.gpus else ""
        return f"{_count(self.procs, 'CPU')}{gpus}"

    def fits(self, used: Need, capacity: Need) -> bool:
        return used.procs + self.procs <= capacity.procs and used.gpus + self.gpus <= capacity.gpus


def _count(n: int, what: str, many: str | None = None) -> str:
    return f"{n} {what if n == 1 else many or what + 's'}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def gpus_present() -> int:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else what nvidia-smi lists."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return 0 if visible.strip() in ("", "-1") else len(visible.split(","))
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def capacity(procs: int | None = None) -> Need:
    """This machine's capacity: ``procs`` processes (None: the CPU count) and its GPUs."""
    return Need(procs or os.cpu_count() or 1, gpus_present())


def need_of(record: dict) -> Need:
    """What a job (its job.json record) holds while it runs."""
    gpus = 0 if record.get("env", {}).get("CUDA_VISIBLE_DEVICES") == "" else record.get("gpus", 0)
    nodes = record["num_nodes"]
    return Need(nodes * record["procs_per_node"], nodes * (gpus or 0))


def check_fits(need: Need, record: dict, machine: Need) -> None:
    """A job that could never start here is refused at submit, not queued forever."""
    shape = f"{counted(record['num_nodes'], 'node')} × "
    if need.procs > machine.procs:
        why = record.get("procs_why")
        chosen = why not in (None, ASKED) and record["procs_per_node"] > 1
        how = (
            f"{how_to_ask(Procs(record['procs_per_node'], why))}; or "
            if chosen
            else "ask for fewer, "
        )
        raise ConfigError(
            "procs_per_node" if record["procs_per_node"] > 1 else "nodes",
            f"the job needs {_count(need.procs, 'process', 'processes')} at once ({shape}"
            f"{record['procs_per_node']} per node), more than the local capacity of "
            f"{machine.procs} (the defaults' local_capacity): {how}raise "
            "local_capacity, or run on Kubernetes",
        )
    if need.gpus > machine.gpus:
        raise ConfigError(
            "gpu",
            f"the job needs {_count(need.gpus, 'GPU')} ({shape}{record.get('gpus')} per node), "
            f"and this machine has {machine.gpus}: ask for fewer, or run on Kubernetes",
        )


def _ledger(jobs_dir: Path):
    """The ledger, read and written back under the queue's lock (other processes wait)."""
    return locked_json(
        jobs_dir,
        LEDGER,
        fresh=lambda: {"next": 0, "jobs": {}},
        empty=lambda data: not data["jobs"],  # an empty line leaves nothing behind
        valid=lambda data: isinstance(data.get("jobs"), dict),
    )


def _me() -> list:
    return [os.getpid(), start_time(os.getpid())]


def _prune(jobs_dir: Path, data: dict) -> None:
    """Free the places of jobs whose folder is gone or whose owner no longer runs."""
    for name, entry in list(data["jobs"].items()):
        if not (jobs_dir / name / "job.json").is_file() or not runs(*entry["owner"]):
            del data["jobs"][name]


def _add(data: dict, name: str, need: Need, machine: Need) -> None:
    data["jobs"][name] = {
        "seq": data["next"],
        "procs": need.procs,
        "gpus": need.gpus,
        "capacity": [machine.procs, machine.gpus],
        "owner": _me(),
        "running": False,
    }
    data["next"] += 1


def enter(jobs_dir: Path, name: str, need: Need, machine: Need) -> None:
    """Put a job at the end of the line (at submit, by the submitting process)."""
    with _ledger(jobs_dir) as data:
        _prune(jobs_dir, data)
        _add(data, name, need, machine)


def hand_over(jobs_dir: Path, name: str, pid: int, started: str | None) -> None:
    """The job's supervisor owns its place from now on."""
    with _ledger(jobs_dir) as data:
        if name in data["jobs"]:
            data["jobs"][name]["owner"] = [pid, started]


def supervisor_args(job_dir: Path) -> list[str]:
    """The supervisor's command line after the Python executable (processes.running_command
    finds a supervisor by it)."""
    return ["-m", "kale_ext.backends.local.supervisor", os.path.abspath(job_dir)]


def launch(job_dir: Path, need: Need, machine: Need) -> tuple[int, str | None]:
    """Put the job at the end of the line and start its supervisor (detached: it outlives the
    Jupyter server), which waits for the job's turn; its pid and start time."""
    enter(job_dir.parent, job_dir.name, need, machine)
    try:
        supervisor = subprocess.Popen(
            [sys.executable, *supervisor_args(job_dir)],
            stdin=subprocess.DEVNULL,
            stdout=open(job_dir / "supervisor.log", "ab"),  # noqa: SIM115 (the child owns it)
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    filter(None, (PACKAGE_ROOT, os.environ.get("PYTHONPATH")))
                ),
            },
        )
    except OSError:
        leave(job_dir.parent, job_dir.name)
        raise
    threading.Thread(target=supervisor.wait, daemon=True).start()  # reap it when it ends
    started = start_time(supervisor.pid)
    hand_over(job_dir.parent, job_dir.name, supervisor.pid, started)
    return supervisor.pid, started


def leave(jobs_dir: Path, name: str) -> None:
    """Free the job's place (it ended, or was cancelled while waiting)."""
    with _ledger(jobs_dir) as data:
        data["jobs"].pop(name, None)


def _turn(jobs_dir: Path, name: str, need: Need, machine: Need) -> str | None:
    """Take the job's capacity if its turn has come (None), else say why it waits."""
    with _ledger(jobs_dir) as data:
        _prune(jobs_dir, data)
        if name not in data["jobs"]:  # its submitter died before handing over: to the end
            _add(data, name, need, machine)
        mine = data["jobs"][name]
        mine["owner"] = _me()
        entries = data["jobs"].values()
        running = [e for e in entries if e["running"]]
        used = Need(sum(e["procs"] for e in running), sum(e["gpus"] for e in running))
        ahead = sum(1 for e in entries if not e["running"] and e["seq"] < mine["seq"])
        own = Need(mine["procs"], mine["gpus"])
        limit = Need(*mine["capacity"])
        if not ahead and own.fits(used, limit):
            mine["running"] = True
            return None
        in_use = f"{used.procs} of {limit.procs} CPUs in use"
        return f"waiting for {own.words()}, {_ordinal(ahead + 1)} in line ({in_use})"


def wait_turn(
    jobs_dir: Path, name: str, need: Need, machine: Need, waiting: Callable[[str], None]
) -> None:
    """Return once the job may start; meanwhile ``waiting(reason)`` is called at each look
    (it records the reason when it changed). Cancelling is the caller's signal handler raising
    out of this loop."""
    while (reason := _turn(jobs_dir, name, need, machine)) is not None:
        waiting(reason)
        time.sleep(POLL_SECONDS)
