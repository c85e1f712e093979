"""What MLflow tracking adds to a training loop that reports every step, in one run.

    python benchmarks/tracking.py [--steps 20000] [--work 0 2000] [--repeat 3]

Compiles a notebook whose loop does ``--work`` iterations of arithmetic (a fixed amount of CPU,
so time the sender thread takes shows) and one
``report(step=s, loss=..., accuracy=...)`` per step, and runs it as a job's process does (stdout
to a log file), untracked and tracked (a real ``mlflow server`` on a loopback port, SQLite
store). Prints the loop's best-of-N time each way and their ratio (target ≤ 1.05), and how many
metric points reached the server (all of them: batched, never one request per report).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.harness, from a checkout

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
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--work", type=int, nargs="+", default=[0, 2000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
