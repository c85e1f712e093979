"""The local backend against bare torchrun and the Kubeflow SDK's LocalProcessBackend, in one run.

    python benchmarks/local_run.py [--repeat 3] [--skip-sdk] [--smoke]

1. Wall time of the example (examples/digits_ddp.ipynb, 2 processes) through the local backend,
   from submit to Complete, against bare `torchrun --nproc_per_node=2` of the same compiled
   module. Target ≤ 1.25× (aim 1.1×). Then the same with a 5 MiB, 2,000-file workspace beside
   the notebook (packed, then unpacked into the node's folder): target ≤ 1.25× too. The example
   runs from a copy in a temporary folder (its outputs land beside the copy).
2. The same function through the Kubeflow SDK's LocalProcessBackend (it builds a venv and
   installs torch on every run): the ratio.
3. Log latency: from a `print` in rank 1 to the line reaching a `logs(follow=True)` reader,
   p50/p95 over 200 lines. Target p95 ≤ 250 ms.

``--smoke`` (benchmarks/smoke.py): the same steps once, on examples/plain_python.ipynb (no
torch in the workers), a 40-file workspace, 20 log lines, and the SDK's client and trainer made
but not run (its run installs torch).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timing import SMOKE, SMOKE_NICE, best  # noqa: E402
from workspace import make_workspace  # noqa: E402

from kale_ext.backends.local.backend import LocalBackend  # noqa: E402
from kale_ext.backends.local.ports import claim_port  # noqa: E402
from kale_ext.backends.submit import submit  # noqa: E402
from kale_ext.compile.compiler import compile_notebook, write_module  # noqa: E402

EXAMPLE = ROOT / "examples" / "digits_ddp.ipynb"
SMOKE_EXAMPLE = ROOT / "examples" / "plain_python.ipynb"


def latency_notebook(lines: int) -> dict:
    """Rank 1 prints ``lines`` lines stamped with the time they were sent, 20 ms apart."""
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": (
                "import os, time\n"
                "rank = int(os.environ['RANK'])\n"
                f"for i in range({lines}):\n"
                "    time.sleep(0.02)\n"
                "    if rank == 1:\n"
                "        print(f'sent {time.time():.6f}', flush=True)\n")},
        ],
    }  # fmt: skip


def bare_torchrun(module: Path) -> None:
    with claim_port() as claim:  # held until torchrun ends, as the local backend's supervisor does
        out = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
             f"--master_port={claim.port}", str(module)],
            capture_output=True, text=True, cwd=module.parent,
        )  # fmt: skip
    if out.returncode:
        raise RuntimeError(f"bare torchrun failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")


def local_backend(backend: LocalBackend, notebook: Path) -> None:
    name = submit(backend, notebook, {"nodes": 1, "procs_per_node": 2}).name
    info = backend.wait(name, interval=0.02)
    assert info.status.value == "Complete", info.reason


def sdk_local_process(module: Path, function: str, run: bool = True) -> float:
    """The SDK's LocalProcessBackend on the same function (needs torch in a fresh venv); with
    ``run`` false, its client, runtime and trainer are made but nothing is run (0 s)."""
    code = f"""
import importlib.util, time
from kubeflow.trainer import TrainerClient, CustomTrainer, LocalProcessBackendConfig
spec = importlib.util.spec_from_file_location({function!r}, {str(module)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
client = TrainerClient(LocalProcessBackendConfig())
runtime = client.get_runtime("torch-distributed")
trainer = CustomTrainer(
    func=mod.{function}, packages_to_install=["torch==2.13.0", "scikit-learn"])
if not {run!r}:  # made, not run
    print(0.0)
    raise SystemExit
start = time.perf_counter()
name = client.train(runtime=runtime, trainer=trainer)
client.wait_for_job_status(name, status={{"Complete"}}, timeout=900, polling_interval=1)
print(time.perf_counter() - start)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=module.parent
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def latency(backend: LocalBackend, lines: int) -> list[float]:
    name = submit(backend, latency_notebook(lines), {"nodes": 2}).name
    delays = []
    for line in backend.logs(name, follow=True):
        if line.text.startswith("sent "):
            delays.append(time.time() - float(line.text.split()[1]))
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-sdk", action="store_true", help="skip the SDK's ~60 s run")
    parser.add_argument("--smoke", action="store_true", help=SMOKE)
    args = parser.parse_args()
    example, files, size, lines = EXAMPLE, 2000, 5 * 2**20, 200
    if args.smoke:
        example, files, size, lines, args.repeat = SMOKE_EXAMPLE, 40, 2**18, 20, 1
    with tempfile.TemporaryDirectory() as tmp:
        compiled = compile_notebook(example)
        module = write_module(compiled, tmp)
        jobs = Path(tmp) / "jobs"
        backend = LocalBackend(jobs, nice=SMOKE_NICE) if args.smoke else LocalBackend(jobs)
        alone, with_files = Path(tmp) / "alone", Path(tmp) / "with-files"
        for folder in (alone, with_files):
            folder.mkdir()
            shutil.copy(example, folder / example.name)
        make_workspace(with_files / "project", files, size)
        bare = best(lambda: bare_torchrun(module), args.repeat)
        ours = best(lambda: local_backend(backend, alone / example.name), args.repeat)
        shipped = best(lambda: local_backend(backend, with_files / example.name), args.repeat)
        print(f"{example.name}, best of {args.repeat}")
        print(f"bare torchrun --nproc_per_node=2     {bare:7.2f} s")
        ratio = f"{ours / bare:.2f}x bare (target ≤ 1.25x)"
        print(f"kale_ext local backend (1 node × 2)  {ours:7.2f} s   {ratio}")
        ratio = f"{shipped / bare:.2f}x bare (target ≤ 1.25x)"
        what = f"{size / 2**20:g} MiB {files:,}-file workspace"
        print(f"  with a {what}  {shipped:7.2f} s   {ratio}")
        if not args.skip_sdk:
            sdk = sdk_local_process(module, compiled.function_name, run=not args.smoke)
            if args.smoke:
                print("Kubeflow SDK LocalProcessBackend     its client and trainer made, not run")
            else:
                print(f"Kubeflow SDK LocalProcessBackend     {sdk:7.2f} s   "
                      f"{sdk / ours:.1f}x kale_ext")  # fmt: skip
        delays = sorted(latency(backend, lines))
        p50 = statistics.median(delays) * 1000
        p95 = delays[int(len(delays) * 0.95) - 1] * 1000
        print(f"log latency rank 1 → follow reader   p50 {p50:.0f} ms, p95 {p95:.0f} ms over "
              f"{len(delays)} lines (target p95 ≤ 250 ms)")  # fmt: skip
        print(
            json.dumps(
                {
                    "bare_s": bare,
                    "local_s": ours,
                    "ratio": ours / bare,
                    "workspace_s": shipped,
                    "workspace_ratio": shipped / bare,
                    "latency_p95_ms": p95,
                }
            )  # fmt: skip
        )


if __name__ == "__main__":
    main()
