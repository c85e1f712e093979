"""kale_ext against the Kubeflow SDK on the same real control plane: the digits example on 2 nodes.

    python benchmarks/cluster.py [--repeat 3] [--smoke]

Starts the real control plane (tests/harness/controlplane: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, JobSet, Kubeflow Trainer v2.3.0 and the process
kubelet; its binaries must be built: ``python -m tests.harness.controlplane.build``), then runs,
alternately, ``--repeat`` times each, two clients as a user runs them, each a process of its own:

- kale_ext: ``kale-ext run digits_ddp.ipynb --backend kubernetes --nodes 2 --follow`` (on a copy
  of examples/digits_ddp.ipynb; it compiles the notebook, submits, streams both ranks' logs and
  exits at the job's end);
- the Kubeflow SDK (0.5.0), as its docs use it: ``TrainerClient().train(runtime=
  "torch-distributed", trainer=CustomTrainer(func, num_nodes=2, packages_to_install))`` with the
  same function (the notebook compiled by kale_ext, loaded from its module) and the same
  packages, then ``wait_for_job_status(..., {"Running"})`` (its ``get_job_logs`` returns nothing
  while the pod is Pending), ``get_job_logs(name, follow=True)`` printing each line (node 0:
  the SDK follows one node a call), and ``wait_for_job_status(..., {"Complete"})``; its polling
  interval at the least it takes, 1 s.

For each run, in seconds from the client's start: both pods Running and the TrainJob's Complete
condition (seen by a watch in this process), the function's first line (``N training and M test
images``) and last (``saved digits_model.pt``, rank 0's) in the client's output, the client's
exit; the client's CPU seconds (in all, and after
``submitted``: while it follows the job) and its peak RSS (``wait4``). Prints every run, the
medians and the ratios kale_ext / SDK (target: every ratio ≤ 1.0). Each job is deleted before
the next starts. Both worlds are checked to be 2 processes.

``--smoke`` (benchmarks/smoke.py): one run each with ``epochs=1``. Without the control plane's
binaries it fails at once with a one-line reason.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.harness, from a checkout

from timing import SMOKE  # noqa: E402

from tests.harness.controlplane.build import is_built  # noqa: E402
from tests.harness.controlplane.versions import COMPONENTS  # noqa: E402

EXAMPLE = ROOT / "examples" / "digits_ddp.ipynb"
NAMESPACE = "default"
GROUP, VERSION, PLURAL = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
NODES = 2
#: The training function's first line (its data cell), in either client's output.
FIRST_LINE = re.compile(r"\d+ training and \d+ test images, (\d+) process\(es\)")
#: Its last line (rank 0's, after the test accuracy): the function is done on node 0.
LAST_LINE = re.compile(r"saved digits_model\.pt")
SUBMITTED = re.compile(r"^submitted (\S+)")
#: Seconds a client may take (a job of the example: 20-60 s on the 2-core VM).
CLIENT_TIMEOUT = 900
TICK = os.sysconf("SC_CLK_TCK")

#: The SDK's client, as its docs use it (argv: module, function; func_args, packages, nodes as
#: JSON).
SDK_CLIENT = """\
import importlib.util, json, sys
from kubeflow.trainer import CustomTrainer, TrainerClient
module, function = sys.argv[1:3]
args, packages, nodes = map(json.loads, sys.argv[3:6])
spec = importlib.util.spec_from_file_location(function, module)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
client = TrainerClient()
name = client.train(runtime="torch-distributed", trainer=CustomTrainer(
    func=getattr(mod, function), func_args=args or None, num_nodes=nodes,
    packages_to_install=packages))
print("submitted", name, flush=True)
client.wait_for_job_status(name, status={"Running", "Complete"}, polling_interval=1)
for line in client.get_job_logs(name, follow=True):
    print(line, flush=True)
client.wait_for_job_status(name, status={"Complete"}, polling_interval=1)
"""


def missing_binaries() -> list[str]:
    """The control plane's components this needs (all but Kueue) not built yet."""
    return [f"{c.name} {c.version}" for c in COMPONENTS if c.name != "kueue" and not is_built(c)]


# -- the client, measured --


def cpu_seconds(pid: int) -> float:
    """A process's CPU seconds so far (user + system), from /proc; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime: fields 14 and 15


@dataclass
class Client:
    """What one client process did: its lines with the seconds since its start, its exit status,
    its CPU seconds (in all, and at its ``submitted`` line), its peak RSS."""

    lines: list[tuple[float, str]] = field(default_factory=list)
    status: int = 0
    cpu: float = 0.0
    cpu_at_submit: float = 0.0
    peak_rss_mib: float = 0.0
    started: float = 0.0  # time.monotonic() just before the process started
    seconds: float = 0.0  # from its start to its end

    def first(self, pattern: re.Pattern) -> tuple[float, re.Match] | None:
        """The seconds and match of the first line matching ``pattern``."""
        for at, line in self.lines:
            if found := pattern.search(line):
                return at, found
        return None

    def output(self, last: int = 40) -> str:
        return "\n".join(line for _, line in self.lines[-last:])


def run_client(argv: list[str], env: dict, cwd: Path, timeout: float = CLIENT_TIMEOUT) -> Client:
    """Run ``argv`` to its end, its output (stdout and stderr) read line by line as it comes,
    each line stamped; its CPU read from /proc at its ``submitted`` line and from ``wait4`` at
    its end (its own and its waited-for children's, with its peak RSS)."""
    out = Client(started=time.monotonic())
    started = out.started
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)  # fmt: skip

    def read():
        for line in proc.stdout:
            at = time.monotonic() - started
            if not out.cpu_at_submit and SUBMITTED.match(line):
                out.cpu_at_submit = cpu_seconds(proc.pid)  # not reaped before the pipe ends
            out.lines.append((at, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, 9))
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    out.seconds = time.monotonic() - started
    proc.returncode = out.status = os.waitstatus_to_exitcode(status)
    reader.join(30)
    proc.stdout.close()
    out.cpu = usage.ru_utime + usage.ru_stime
    out.peak_rss_mib = usage.ru_maxrss / 1024
    return out


# -- the cluster, watched --


class Watch:
    """When each TrainJob's pods were all Running, and when it was Complete (monotonic seconds),
    from two watches of the API server; started with ``start()``, threads that end with us."""

    def __init__(self, kubeconfig: Path):
        from kubernetes import client, config

        self.api = config.new_client_from_config(config_file=str(kubeconfig))
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.running: dict[str, float] = {}
        self.complete: dict[str, float] = {}
        self._phases: dict[str, dict[str, str]] = {}
        self._changed = threading.Condition()
        self.stopped = threading.Event()  # the control plane goes: its watches end quietly

    def start(self) -> None:
        for loop in (self._pods, self._trainjobs):
            threading.Thread(target=self._forever, args=(loop,), daemon=True).start()

    def _forever(self, loop) -> None:
        while not self.stopped.is_set():  # a watch ends when the server's timeout does
            try:
                loop()
            except Exception as e:  # noqa: BLE001 (a dropped connection: say it, watch again)
                if not self.stopped.is_set():
                    print(f"watch: {e!r}; again", file=sys.stderr)
                    self.stopped.wait(1)

    def _pods(self) -> None:
        from kubernetes import watch

        stream = watch.Watch().stream(self.core.list_namespaced_pod, NAMESPACE,
                                      label_selector=JOBSET_LABEL, timeout_seconds=300)  # fmt: skip
        for event in stream:
            now, pod = time.monotonic(), event["object"]
            job = pod.metadata.labels[JOBSET_LABEL]
            with self._changed:
                phases = self._phases.setdefault(job, {})
                phases[pod.metadata.name] = "" if event["type"] == "DELETED" else pod.status.phase
                running = sum(p == "Running" for p in phases.values())
                if running >= NODES and job not in self.running:
                    self.running[job] = now
                    self._changed.notify_all()

    def _trainjobs(self) -> None:
        from kubernetes import watch

        stream = watch.Watch().stream(self.custom.list_namespaced_custom_object, GROUP, VERSION,
                                      NAMESPACE, PLURAL, timeout_seconds=300)  # fmt: skip
        for event in stream:
            now, tj = time.monotonic(), event["object"]
            conditions = (tj.get("status") or {}).get("conditions") or []
            done = any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)
            name = tj["metadata"]["name"]
            with self._changed:
                if done and name not in self.complete:
                    self.complete[name] = now
                    self._changed.notify_all()

    def until_complete(self, name: str, timeout: float = 60) -> float:
        """When ``name`` was Complete (a watch event may come after its client ended)."""
        with self._changed:
            if not self._changed.wait_for(lambda: name in self.complete, timeout):
                raise RuntimeError(f"{name}: no Complete condition seen in {timeout:.0f} s")
            return self.complete[name]

    def delete(self, name: str, timeout: float = 120) -> None:
        """Delete the TrainJob in the foreground and wait until it and its pods are gone."""
        from kubernetes.client import V1DeleteOptions
        from kubernetes.client.exceptions import ApiException

        options = V1DeleteOptions(propagation_policy="Foreground")
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, name,
                                                    body=options)  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.custom.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, name)
            except ApiException as e:
                if e.status != 404:
                    raise
                selector = f"{JOBSET_LABEL}={name}"
                if not self.core.list_namespaced_pod(NAMESPACE, label_selector=selector).items:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"{name}: not gone {timeout:.0f} s after its delete")


# -- one run --

#: The figures of a run, in the table's order: (key, label, unit).
FIGURES = (
    ("running", "both pods Running", "s"),
    ("first_line", "first training line in the client", "s"),
    ("last_line", "last training line in the client", "s"),
    ("complete", "TrainJob Complete", "s"),
    ("exit", "client exits", "s"),
    ("cpu", "client CPU, in all", "s"),
    ("cpu_following", "client CPU after submit (following)", "s"),
    ("rss", "client peak RSS", "MiB"),
)


def measure(who: str, client: Client, watch: Watch) -> dict:
    """The figures of one run from its client and the watch (raises when it did not complete
    with a world of NODES processes)."""
    found = client.first(SUBMITTED)
    if client.status or found is None:
        raise RuntimeError(f"{who}: exit status {client.status}:\n{client.output()}")
    name = found[1].group(1)
    first, last = client.first(FIRST_LINE), client.first(LAST_LINE)
    if first is None or last is None or int(first[1].group(1)) != NODES:
        raise RuntimeError(f"{who} {name}: no first line of a world of {NODES}:\n"
                           f"{client.output()}")  # fmt: skip
    started = client.started
    complete = watch.until_complete(name)
    if name not in watch.running:
        raise RuntimeError(f"{who} {name}: its {NODES} pods were never seen Running together")
    return {
        "name": name,
        "running": watch.running[name] - started,
        "first_line": first[0],
        "last_line": last[0],
        "complete": complete - started,
        "exit": client.seconds,
        "cpu": client.cpu,
        "cpu_following": client.cpu - client.cpu_at_submit,
        "rss": client.peak_rss_mib,
    }


def kale_ext_client(folder: Path, parameters: dict) -> list[str]:
    params = [a for k, v in parameters.items() for a in ("--param", f"{k}={v}")]
    return [sys.executable, "-m", "kale_ext.cli", "run", str(folder / EXAMPLE.name),
            "--backend", "kubernetes", "--nodes", str(NODES), *params, "--follow"]  # fmt: skip


def sdk_client(module: Path, function: str, parameters: dict, packages: list[str]) -> list[str]:
    return [sys.executable, "-c", SDK_CLIENT, str(module), function,
            *map(json.dumps, (parameters, packages, NODES))]  # fmt: skip


def table(runs: dict[str, list[dict]]) -> list[str]:
    """The medians of each figure, kale_ext's and the SDK's, and their ratio."""
    n = len(runs["kale_ext"])
    out = [f"{'median of ' + str(n):38} {'kale_ext':>10} {'SDK':>10} {'kale_ext / SDK':>15}"]
    for key, label, unit in FIGURES:
        ours = statistics.median(r[key] for r in runs["kale_ext"])
        theirs = statistics.median(r[key] for r in runs["sdk"])
        ratio = ours / theirs if theirs else float("inf")
        verdict = "met" if ratio <= 1.0 else "MISSED"
        out.append(f"{label + ' (' + unit + ')':38} {ours:10.2f} {theirs:10.2f} "
                   f"{ratio:9.2f} ({verdict})")  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each client")
    parser.add_argument("--kubeconfig", help="use the control plane already running there "
                        "(`python -m tests.harness.controlplane --kubeconfig K`)")  # fmt: skip
    parser.add_argument("--smoke", action="store_true", help=SMOKE)
    args = parser.parse_args()
    parameters = {"epochs": 1} if args.smoke else {}
    if args.smoke:
        args.repeat = 1
    if not args.kubeconfig and (missing := missing_binaries()):
        print(f"cluster.py: the control plane's binaries are not built ({', '.join(missing)}): "
              "`python -m tests.harness.controlplane.build` builds them (Go 1.26+)")  # fmt: skip
        return 1
    from kale_ext.compile.compiler import compile_notebook, write_module
    from kale_ext.compile.packages import requirements
    from tests.harness.controlplane.fixtures import start_control_plane, stop_control_plane

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kale-ext-cluster-bench-") as tmp:
        folder = Path(tmp)
        notebook = folder / "notebook"
        notebook.mkdir()
        shutil.copy(EXAMPLE, notebook)
        compiled = compile_notebook(EXAMPLE)
        module = write_module(compiled, folder)
        started = time.monotonic()
        plane = None
        if not args.kubeconfig:  # no Kueue: no job here is queued
            plane = start_control_plane(folder / "cp", timeout=300, with_kueue=False)
            print(f"control plane ready in {time.monotonic() - started:.1f} s", flush=True)
        kubeconfig = Path(args.kubeconfig) if plane is None else plane.kubeconfig
        watch = None
        try:
            watch = Watch(kubeconfig)
            env = {**os.environ, "KUBECONFIG": str(kubeconfig), "PYTHONUNBUFFERED": "1"}
            env.pop("KUBERNETES_SERVICE_HOST", None)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
            watch.start()
            clients = {
                "kale_ext": kale_ext_client(notebook, parameters),
                "sdk": sdk_client(module, compiled.function_name, parameters,
                                  requirements(compiled.packages)),
            }  # fmt: skip
            runs: dict[str, list[dict]] = {"kale_ext": [], "sdk": []}
            for i in range(args.repeat):  # alternated: the machine's load hits both alike
                for who, argv in clients.items():
                    client = run_client(argv, env, notebook)
                    run = measure(who, client, watch)
                    runs[who].append(run)
                    print(f"run {i + 1} {who:8} {run['name']}: " + ", ".join(
                        f"{key} {run[key]:.2f}" for key, _, _ in FIGURES), flush=True)  # fmt: skip
                    watch.delete(run["name"])
        finally:
            if watch is not None:
                watch.stopped.set()
            if plane is not None:
                stop_control_plane(plane)
    print(f"\n{EXAMPLE.name} on {NODES} nodes, {args.repeat} run(s) each, alternated"
          f"{' (smoke: epochs=1)' if args.smoke else ''}; load average {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")  # fmt: skip
    print("\n".join(table(runs)))
    print(json.dumps(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
