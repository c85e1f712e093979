"""A 12-trial sweep (parallelism 4) against the same 12 jobs run by hand in batches of 4.

    python benchmarks/sweep.py [--trials 12] [--parallel 4] [--repeat 2] [--smoke]

Both on the local backend, with a short plain-Python job, in one run, alternated ``--repeat``
times (this machine's neighbours move a single pair by ±15 %). Prints each time, the best of
each and their ratio. Target: ≤ 1.15 (the sweep's driver starts a trial as soon as a slot
frees). ``--smoke``: 1 trial, once (benchmarks/smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import SMOKE, SMOKE_NICE  # noqa: E402

from kale_ext.backends.local import LocalBackend  # noqa: E402
from kale_ext.backends.submit import submit  # noqa: E402
from kale_ext.runs import sweep  # noqa: E402
from tests.conftest import notebook  # noqa: E402

TRAINING = "from kale_ext import report\nfor step in range(3):\n    report(step=step, score=x)\n"


def by_hand(backend: LocalBackend, path: Path, trials: int, parallel: int, run: int) -> float:
    started = time.monotonic()
    for first in range(0, trials, parallel):
        names = [submit(backend, path, {"parameters": {"x": k}, "name": f"hand-{run}-{k}"}).name
                 for k in range(first, min(first + parallel, trials))]  # fmt: skip
        for name in names:
            backend.wait(name, timeout=300, interval=0.1)
    return time.monotonic() - started


def swept(backend: LocalBackend, path: Path, trials: int, parallel: int) -> float:
    started = time.monotonic()
    values = ",".join(str(k) for k in range(trials))
    name = sweep.start(backend, path, {"x": values}, parallel=parallel, metric="score")["name"]
    while sweep.get(name)["status"] in ("Starting", "Running"):
        time.sleep(0.05)
    assert sweep.get(name)["status"] == "Complete", sweep.get(name)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help=SMOKE)
    args = parser.parse_args()
    if args.smoke:
        args.trials, args.parallel, args.repeat = 1, 1, 1
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KALE_EXT_JOBS_DIR"] = str(Path(tmp) / "jobs")
        if args.smoke:  # the sweep's driver reads its jobs' priority from the defaults
            config = Path(tmp) / "config"
            config.mkdir()
            settings = {"KaleExtApp": {"local_nice": SMOKE_NICE}}
            (config / "jupyter_server_config.json").write_text(json.dumps(settings))
            os.environ["JUPYTER_CONFIG_DIR"] = str(config)
        path = Path(tmp) / "nb" / "bench.ipynb"  # its folder, the workspace, holds no jobs
        path.parent.mkdir()
        path.write_text(json.dumps(notebook(("x = 0", ["parameters"]), (TRAINING, ["training"]))))
        jobs = Path(tmp) / "jobs"
        backend = LocalBackend(jobs, nice=SMOKE_NICE) if args.smoke else LocalBackend(jobs)
        hand, auto = [], []
        for _ in range(args.repeat):  # alternated: the machine's load hits both alike
            hand.append(by_hand(backend, path, args.trials, args.parallel, len(hand)))
            auto.append(swept(backend, path, args.trials, args.parallel))
    print(f"by hand, batches of {args.parallel}: " + ", ".join(f"{t:.1f}" for t in hand) + " s")
    print(f"sweep, parallel {args.parallel}:     " + ", ".join(f"{t:.1f}" for t in auto) + " s")
    print(f"ratio of the best {min(auto) / min(hand):.2f} (target ≤ 1.15)")


if __name__ == "__main__":
    main()
