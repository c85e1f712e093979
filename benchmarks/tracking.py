"""What tracking costs, in one run: MLflow tracking of a loop that reports every step, or
(``--progress``) progress.

    python benchmarks/tracking.py [--steps 20000] [--work 0 2000] [--repeat 3]
    python benchmarks/tracking.py --progress [--steps 5000] [--repeat 5] [--jobs 100]
    python benchmarks/tracking.py --smoke

With ``--progress`` (see :func:`progress_main`): the cost of ``report(step=s, total=n, ...)``
on a step of 200 µs of CPU against the same report without progress (target ≤ 1.02), and
against no report; the cost of following a job's progress from its log (its supervisor's
share); the server's cost of 100 running jobs' progress (GET kale-ext/jobs of a real Jupyter
server, with and without their progress).

Compiles a notebook whose loop does ``--work`` iterations of arithmetic (a fixed amount of CPU,
so time the sender thread takes shows) and one
``report(step=s, loss=..., accuracy=...)`` per step, and runs it as a job's process does (stdout
to a log file), untracked and tracked (a real ``mlflow server`` on a loopback port, SQLite
store). Prints the loop's best-of-N time each way and their ratio (target ≤ 1.05), and how many
metric points reached the server (all of them: batched, never one request per report).

``--smoke``: both, tiny (100 steps, once; 2 running jobs): benchmarks/smoke.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.harness, from a checkout

from timing import SMOKE  # noqa: E402

from kale_ext.compile.compiler import compile_notebook, write_module  # noqa: E402
from kale_ext.mlflow_api import RUN_ID_ENV, URI_ENV, Tracking  # noqa: E402
from tests.conftest import notebook  # noqa: E402
from tests.harness.mlflow_server import mlflow_server  # noqa: E402

LOOP = """\
import time
start, cpu = time.perf_counter(), time.process_time()
for s in range(steps):
    sum(i * i for i in range(work))
    report(step=s, loss=1.0 / (s + 1), accuracy=s / steps)
print("LOOP", time.perf_counter() - start, time.process_time() - cpu)
"""


def loop_seconds(module: Path, folder: Path, env: dict, params: dict) -> tuple[float, ...]:
    """Run the compiled module once as a job's node runs it: the loop's wall and CPU seconds
    (the process's, so the sender thread's share counts), and the whole process's CPU seconds
    (its exit's last send included)."""
    log = folder / "node.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with log.open("wb") as out:
        command = [sys.executable, str(module), json.dumps(params)]
        subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    lines = [line for line in log.read_text().splitlines() if line.startswith("LOOP ")]
    if not lines or "tracking is off" in log.read_text():
        raise SystemExit(f"the run went wrong:\n{log.read_text()[-2000:]}")
    wall, cpu = map(float, lines[-1].split()[1:])
    return wall, cpu, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="default: 20000, 5000")
    parser.add_argument("--work", type=int, nargs="+", default=[0, 2000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--progress", action="store_true", help="measure progress instead")
    parser.add_argument("--jobs", type=int, default=100, help="running jobs (--progress)")
    parser.add_argument("--smoke", action="store_true", help=SMOKE + "; both runs")
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.work, args.repeat, args.jobs = 100, [0], 1, 2
        progress_main(args.steps, args.repeat, args.jobs)
    elif args.progress:
        progress_main(args.steps or 5000, args.repeat, args.jobs)
        return
    args.steps = args.steps or 20_000
    job = compile_notebook(
        notebook(
            ("steps = 100\nwork = 0", ["parameters"]),
            ("from kale_ext import report", ["imports"]),
            LOOP,
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        module = write_module(job, folder)
        with mlflow_server(folder / "mlflow") as url:
            tracking = Tracking(url)
            plain = {**os.environ, "RANK": "0"}
            plain.pop(RUN_ID_ENV, None)
            for work in args.work:
                params = {"steps": args.steps, "work": work}
                untracked, tracked, run = [], [], ""
                for i in range(args.repeat):  # interleaved: load on the machine hits both
                    untracked.append(loop_seconds(module, folder, plain, params))
                    run = tracking.create_run("benchmark", f"work-{work}-{i}")
                    env = {**plain, URI_ENV: url, RUN_ID_ENV: run}
                    tracked.append(loop_seconds(module, folder, env, params))
                points = tracking.call("GET", "metrics/get-history",
                                       {"run_id": run, "metric_key": "loss",
                                        "max_results": args.steps})  # fmt: skip
                best = [min(t[k] for t in untracked) for k in range(3)]
                mine = [min(t[k] for t in tracked) for k in range(3)]
                print(f"{args.steps} steps, {work} iterations of work each "
                      f"({best[1] / args.steps * 1e6:.1f} µs of CPU per step), best of "
                      f"{args.repeat}: ratio tracked/untracked: loop CPU "
                      f"{mine[1] / best[1]:.3f} (target ≤ 1.05), loop wall "
                      f"{mine[0] / best[0]:.3f}, whole process CPU {mine[2] / best[2]:.3f}; "
                      f"{len(points.get('metrics', []))} of {args.steps} loss points on the "
                      "server")  # fmt: skip


# -- progress --

#: ``mode``: 0 no report, 1 a report without progress, 2 the same with progress, 3 progress only
PROGRESS_LOOP = """\
import time
start, cpu = time.perf_counter(), time.process_time()
for s in range(steps):
    x = 0
    for i in range(work):
        x += i * i
    if mode == 1:
        report(step=s + 1, loss=1.0 / (s + 1))
    elif mode == 2:
        report(step=s + 1, total=steps, loss=1.0 / (s + 1))
    elif mode == 3:
        report(step=s + 1, total=steps)
print("LOOP", time.perf_counter() - start, time.process_time() - cpu)
"""
STEP_SECONDS = 200e-6


def progress_main(steps: int, repeat: int, jobs: int) -> None:
    """Prints what progress costs a job's loop, its supervisor and the server."""
    job = compile_notebook(
        notebook(
            ("steps = 100\nwork = 0\nmode = 0", ["parameters"]),
            ("from kale_ext import report", ["imports"]),
            PROGRESS_LOOP,
        )
    )
    env = {**os.environ, "RANK": "0"}
    env.pop(RUN_ID_ENV, None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        module = write_module(job, folder)
        work = 1000  # iterations for a step of STEP_SECONDS of CPU, found from a first run
        probe = loop_seconds(module, folder, env, {"steps": 2000, "work": work, "mode": 0})[1]
        work = max(1, round(work * STEP_SECONDS / (probe / 2000)))
        best = [float("inf")] * 4
        for _ in range(repeat):  # interleaved: load on the machine hits every mode
            for mode in range(4):
                params = {"steps": steps, "work": work, "mode": mode}
                best[mode] = min(best[mode], loop_seconds(module, folder, env, params)[1])
        per_step = [b / steps * 1e6 for b in best]
        print(f"report() on a step of {per_step[0]:.0f} µs of CPU ({steps} steps, best of "
              f"{repeat}): with progress / without {best[2] / best[1]:.3f} (target ≤ 1.02); "
              f"report with progress / no report {best[2] / best[0]:.3f}; progress only / no "
              f"report {best[3] / best[0]:.3f} (µs per step: none {per_step[0]:.1f}, report "
              f"{per_step[1]:.1f}, with progress {per_step[2]:.1f}, progress only "
              f"{per_step[3]:.1f})")  # fmt: skip
        loop_seconds(module, folder, env, {"steps": steps, "work": 0, "mode": 2})
        follow_cost(folder / "node.log", steps)
        server_cost(folder, jobs, repeat)


def follow_cost(log: Path, lines: int) -> None:
    """A supervisor's CPU to follow rank 0's log of ``lines`` progress reports."""
    from kale_ext.backends.local.progressfile import ProgressFollower

    job_dir = log.parent / "follow"
    job_dir.mkdir()
    (job_dir / "node-0.log").write_bytes(log.read_bytes())
    follower = ProgressFollower(job_dir, 1)
    cpu = time.process_time()
    found = follower.poll(every=0)
    spent = time.process_time() - cpu
    size = log.stat().st_size
    print(f"following progress: {spent / lines * 1e6:.2f} µs of CPU per report line "
          f"({size / 1e6:.1f} MB, {lines} lines, read to {found and found.percent}%)")  # fmt: skip


def server_cost(folder: Path, jobs: int, repeat: int) -> None:
    """GET kale-ext/jobs of a real Jupyter server with ``jobs`` running jobs, with and without
    their progress: latency and the server process's CPU per request."""
    from kale_ext.backends.local.processes import start_time
    from kale_ext.progress import Progress
    from tests.harness.server import JupyterProcess

    jobs_dir, me = folder / "jobs", os.getpid()
    progress = json.dumps(Progress.of(45, 100, "step", "report", eta_seconds=65).to_json())
    for i in range(jobs):
        job_dir = jobs_dir / f"job-{i:03d}"
        job_dir.mkdir(parents=True)
        record = {"name": job_dir.name, "status": "Running", "runtime": "torch-distributed",
                  "num_nodes": 2, "procs_per_node": 1, "created": "2026-11-27T12:00:00Z",
                  "started": "2026-11-27T12:00:00Z", "supervisor_pid": me,
                  "supervisor_started": start_time(me), "provenance": {},
                  "nodes": [{"index": k, "state": "Running"} for k in range(2)]}  # fmt: skip
        (job_dir / "job.json").write_text(json.dumps(record))
        (job_dir / "progress.json").write_text(progress)
    (folder / "root").mkdir()
    server = JupyterProcess(folder / "root", jobs_dir, folder / "home")
    try:
        results = {}
        for _ in range(repeat):
            for kept in (True, False):
                for i in range(jobs):
                    job_dir = jobs_dir / f"job-{i:03d}"
                    src, dst = (("hidden", "progress.json") if kept else
                                ("progress.json", "hidden"))  # fmt: skip
                    if (job_dir / src).exists():
                        (job_dir / src).rename(job_dir / dst)
                wall, cpu = _timed_gets(server, 10)
                listed = json.loads(server.get("jobs"))["jobs"]
                assert all((j["progress"] is not None) == kept for j in listed), "not running"
                best = results.get(kept, (float("inf"), float("inf")))
                results[kept] = (min(best[0], wall), min(best[1], cpu))
    finally:
        server.stop()
    (w1, c1), (w0, c0) = results[True], results[False]
    print(f"GET kale-ext/jobs of {jobs} running jobs, best of {repeat}×10: with progress "
          f"{w1 * 1e3:.1f} ms ({c1 * 1e3:.1f} ms of server CPU), without {w0 * 1e3:.1f} ms "
          f"({c0 * 1e3:.1f} ms); ratio {c1 / c0:.3f} CPU, {w1 / w0:.3f} wall; progress costs "
          f"{(c1 - c0) / jobs * 1e6:.0f} µs of server CPU per job and request")  # fmt: skip


def _timed_gets(server, n: int) -> tuple[float, float]:
    """Mean wall and server-CPU seconds of a GET kale-ext/jobs."""
    stat = Path(f"/proc/{server.proc.pid}/stat")

    def cpu() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    server.get("jobs")  # warm
    wall, before = time.perf_counter(), cpu()
    for _ in range(n):
        server.get("jobs")
    return (time.perf_counter() - wall) / n, (cpu() - before) / n


if __name__ == "__main__":
    main()
