"""A local job on an MPI runtime (deepspeed-distributed, mlx-distributed): one Open MPI ``mpirun``
on this machine, as the Trainer's MPI plugin has its launcher run it on a cluster
(``plugins/mpi/mpi.go``; job/mpi.py).

On a cluster the launcher runs ``mpirun --hostfile /etc/mpi/hostfile`` over a hostfile with a
line per node, ``slots=`` its processes, with ``OMPI_MCA_orte_default_hostfile``,
``OMPI_MCA_orte_keep_fqdn_hostnames`` and ``OMPI_MCA_orte_set_default_slots`` set (and
``OMPI_MCA_plm_rsh_args``, for SSH only: left out here). Here the hostfile is one line,
``localhost slots=<nodes × processes per node>``: a line per node would need a host name per
node, and Open MPI starts every host that is not this one over SSH. Open MPI places ranks by
slot, as on a cluster: rank r runs on node r // (processes per node), which is where this
module puts its output, its error record and its files. mpirun runs on loopback only, every
rank unbound (the job's cores are set on mpirun itself, resources.py), as root only with
``--allow-run-as-root``.

Each rank runs the TrainJob's own command (the same compiled entry as on a cluster) through a
fixed ``sh`` line that gives it its node's folders, and its error record a file of its own
(failures.py reads them: ``node-K.torchrun/mpi/attempt_0/<local rank>/error.json``), then
``exec``s it: the command's words are sh's arguments, never its script.

mpirun tags the ranks' output with their ranks (``--tag-output``; RankOutput puts the pieces
together into lines). Node 0 is the launcher, as on a cluster
(job/mpi.py: node_of): its log has every rank's lines, as mpirun gathers them, and mpirun's own;
node k's log has its own ranks' lines as well, so ``kale-ext logs NAME --node 1`` shows them
(a cluster's node pod logs only its sshd). The job's logs, all nodes, are node 0's: every line
once.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ...job.runtimes import Runtime
from .failures import RANK_RECORDS, torchrun_dir
from .lifetime import SCRATCH, scratch
from .outputs import STAGING, staging
from .processes import start as start_process
from .resources import pinned

#: What a local run on an MPI runtime needs, and how to get it.
INSTALL = "install Open MPI (Debian: apt-get install openmpi-bin)"
HOSTFILE = "hostfile"
VERSION_SECONDS = 10  # how long `mpirun --version` may take
#: The line mpirun starts on every rank: its node's folders under the job's ($0), from Open
#: MPI's own rank, and its error record's file; then the command ("$@"), in its place.
RANK_LINE = (
    "r=$OMPI_COMM_WORLD_RANK; k=$((r / {procs})); "
    'export TORCHELASTIC_ERROR_FILE="$0/node-$k.torchrun/{records}/$((r % {procs}))/error.json" '
    'KALE_EXT_WORKDIR="$0/node-$k{rank_dir}" KALE_EXT_OUTPUT_DIR="$0/{staging}/node-$k" '
    'TMPDIR="$0/{scratch}/node-$k"; exec "$@"'
)
#: A rank's working directory in its node's, when the node has several: each rank unpacks the
#: workspace, and two unpacking into one folder would each read the other's half-written files.
RANK_DIR = "rank-{}"
#: mpirun's tag before each piece of a rank's output it reads: `[1,3]<stdout>:`.
_TAG = re.compile(rb"\[\d{1,9},(\d{1,9})\]<std(?:out|err)>:")
MAX_TAG = 32  # bytes: the longest a tag may be
READ_SIZE = 64 * 1024
#: A rank's line is written once this long, whole or not (memory stays bounded).
MAX_PENDING = 256 * 1024


def mpirun() -> str | None:
    """The mpirun on PATH (None: there is none)."""
    return shutil.which("mpirun")


@functools.lru_cache(maxsize=8)
def _version(path: str, changed: int) -> str:
    """What ``path --version`` says first (``changed``: the file's mtime, so that a new one is
    asked again); "" when it says nothing in VERSION_SECONDS."""
    try:
        said = subprocess.run([path, "--version"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=VERSION_SECONDS)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (said.stdout.strip().splitlines() or [""])[0][:200]


def not_open_mpi(path: str) -> str | None:
    """What the mpirun at ``path`` says it is when it is not Open MPI's (MPICH's, say: the
    plugin starts Open MPI only, and kale_ext gives mpirun Open MPI's options); None when it is
    Open MPI's."""
    try:
        changed = os.stat(path).st_mtime_ns
    except OSError:
        return "it cannot be read"
    version = _version(path, changed)
    return None if "Open MPI" in version else f"it says {version or 'nothing'!r}"


#: The Trainer's MPI runtimes, as the local backend offers them (published_runtimes.py): the
#: launcher is the trainer and, with runLauncherAsNode, node 0.
MPI_RUNTIMES: dict[str, Runtime] = {
    f"{fw}-distributed": Runtime(
        name=f"{fw}-distributed",
        framework=fw,
        image="local",
        local=True,
        mpi=True,
        replicated_jobs=("node", "launcher"),
        trainer_job="launcher",
    )
    for fw in ("deepspeed", "mlx")
}


def missing(runtime: Runtime | str) -> str | None:
    """Why an MPI runtime cannot run here (no mpirun on PATH), in one sentence naming it; None
    when it can, or it is no MPI runtime of the local backend."""
    name = runtime if isinstance(runtime, str) else runtime.name
    if name not in MPI_RUNTIMES:
        return None
    path = mpirun()
    if path is None:
        what = "there is no mpirun on this machine's PATH"
    elif (other := not_open_mpi(path)) is not None:
        what = f"the mpirun on this machine's PATH ({path}) is not Open MPI's: {other}"
    else:
        return None
    return (
        f"runtime {name!r} starts its processes with Open MPI's mpirun, and {what}: {INSTALL} "
        "to run it here, or submit it to Kubernetes"
    )


def workdirs(job_dir: Path, record: dict) -> list[tuple[int, Path]]:
    """Each rank's node and working directory: its node's folder, or with several processes
    per node a folder of its own in it (RANK_DIR)."""
    procs = record["procs_per_node"]
    return [
        (k, job_dir / f"node-{k}" / (RANK_DIR.format(local) if procs > 1 else ""))
        for k in range(record["num_nodes"])
        for local in range(procs)
    ]


def prepare(job_dir: Path, record: dict) -> list[str]:
    """Write the job's hostfile and make every node's and rank's folders; the mpirun line of
    the job (its record's ``mpirun``, ``command`` and shape)."""
    procs, nodes = record["procs_per_node"], record["num_nodes"]
    hostfile = job_dir / HOSTFILE
    hostfile.write_text(f"localhost slots={nodes * procs}\n", encoding="utf-8")
    for k in range(nodes):
        staging(job_dir, k)  # made, as the nodes of other runtimes have them
        scratch(job_dir, k)
        for local in range(procs):
            (torchrun_dir(job_dir, k) / RANK_RECORDS / str(local)).mkdir(
                parents=True, exist_ok=True
            )
    for _, workdir in workdirs(job_dir, record):
        workdir.mkdir(parents=True, exist_ok=True)
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    rank_dir = "/" + RANK_DIR.format(f"$((r % {procs}))") if procs > 1 else ""
    line = RANK_LINE.format(procs=procs, records=RANK_RECORDS, staging=STAGING, scratch=SCRATCH,
                            rank_dir=rank_dir)  # fmt: skip
    return [
        record["mpirun"], "--hostfile", str(hostfile.resolve()), "-np", str(nodes * procs),
        *root, "--tag-output", "--bind-to", "none",
        "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", "lo",
        "--mca", "oob_tcp_if_include", "lo",
        "sh", "-c", line, str(job_dir.resolve()), *record["command"],
    ]  # fmt: skip


def launcher_env(job_dir: Path, record: dict) -> dict[str, str]:
    """What the MPI plugin gives the launcher (less what only SSH needs), with this hostfile."""
    return {
        "OMPI_MCA_orte_default_hostfile": str((job_dir / HOSTFILE).resolve()),
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": str(record["procs_per_node"]),
    }


def pin_all(record: dict) -> Callable[[], None] | None:
    """A preexec that pins mpirun (so every rank) to all the job's cores; None: no plan."""
    cores = (record.get("resources") or {}).get("cores")
    if not cores:
        return None
    return pinned({c for node in cores for c in node})


class RankOutput:
    """Reads mpirun's output (a pipe) in a thread of its own into the nodes' logs: every line
    into node 0's (the launcher's: every rank's, and mpirun's own), a rank's lines into its
    node's too, each with torchrun's prefix of its rank there (``[default1]:``) so the views
    tell the ranks apart.

    mpirun tags each piece of a rank's output as it reads it, not each line: an unbuffered
    ``print('up', 1)`` arrives as ``[1,1]<stdout>:up [1,1]<stdout>:1`` and a newline, and two
    ranks' pieces may come between each other's. So the text after a tag is that rank's until
    the next tag or the end of a line; text no tag precedes after a line's end is mpirun's own.
    A rank's line is written once whole (or once it is MAX_PENDING long)."""

    def __init__(self, job_dir: Path, record: dict):
        self.procs, nodes = record["procs_per_node"], record["num_nodes"]
        self.logs = [open(job_dir / f"node-{k}.log", "ab", buffering=0) for k in range(nodes)]
        self.current: int | None = None  # whose text comes now (None: mpirun's)
        self.pending: dict[int | None, bytes] = {}  # each one's line so far
        self.carry = b""  # the end of a read that may be the start of a tag
        self.thread: threading.Thread | None = None

    def follow(self, source: IO[bytes]) -> None:
        """Read ``source`` to its end in a thread, then close the logs."""
        self.thread = threading.Thread(target=self._pump, args=(source,), daemon=True)
        self.thread.start()

    def _pump(self, source: IO[bytes]) -> None:
        try:
            while data := os.read(source.fileno(), READ_SIZE):
                self.feed(data)
            self.feed(b"", end=True)
        finally:
            self.close()

    def close(self) -> None:
        for log in self.logs:
            log.close()

    def feed(self, data: bytes, end: bool = False) -> None:
        """Take the next piece of mpirun's output (``end``: the last, after the rest)."""
        data, self.carry = self.carry + data, b""
        cut = data.rfind(b"[", max(0, len(data) - MAX_TAG))
        if not end and cut >= 0 and b"\n" not in data[cut:] and not _TAG.match(data, cut):
            data, self.carry = data[:cut], data[cut:]  # a tag's start, maybe: with the next
        pos = 0
        for m in _TAG.finditer(data):
            self._text(data[pos : m.start()])
            self.current, pos = int(m.group(1)), m.end()
        self._text(data[pos:])
        if end:
            for who, rest in list(self.pending.items()):
                if rest:
                    self._line(who, rest + b"\n")
            self.pending.clear()

    def _text(self, text: bytes) -> None:
        while text:
            who = self.current
            i = text.find(b"\n")
            if i < 0:
                self.pending[who] = self.pending.get(who, b"") + text
                if len(self.pending[who]) >= MAX_PENDING:
                    self._line(who, self.pending.pop(who) + b"\n")
                return
            self._line(who, self.pending.pop(who, b"") + text[: i + 1])
            text, self.current = text[i + 1 :], None

    def _line(self, rank: int | None, line: bytes) -> None:
        outs = [(0, line)]
        if rank is not None:
            node = rank // self.procs
            outs = [(0, b"[default%d]:" % rank + line)]
            if 0 < node < len(self.logs):
                outs.append((node, b"[default%d]:" % (rank % self.procs) + line))
        for k, data in outs:
            try:
                self.logs[k].write(data)
            except OSError:  # a full disk: the job's end says so (diskroom.py)
                pass

    def join(self, timeout: float) -> None:
        """Wait until mpirun's output has ended (it ends with mpirun)."""
        if self.thread is not None:
            self.thread.join(timeout)


def start(
    job_dir: Path, record: dict, env: dict[str, str], preexec: Callable[[], None] | None
) -> tuple[subprocess.Popen, RankOutput]:
    """Start the job's mpirun with ``env`` and its launcher's; its output read into the logs.
    It leads a process group of its own; each rank leads another (Open MPI's), and mpirun
    passes a SIGTERM on to them."""
    proc = start_process(
        "mpirun",
        prepare(job_dir, record),
        cwd=job_dir / "node-0",
        env={**env, **launcher_env(job_dir, record)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=preexec,
    )
    assert proc.stdout is not None
    output = RankOutput(job_dir, record)
    output.follow(proc.stdout)
    return proc, output
