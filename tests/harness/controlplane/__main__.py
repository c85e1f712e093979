"""``python -m tests.harness.controlplane --kubeconfig PATH``: build what is missing, start the
control plane, write PATH, print ``ready <api-server-url>`` and run until SIGTERM or SIGINT (or
until the process that started it ends), then stop everything it started."""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.harness.controlplane.controlplane import ControlPlane

PR_SET_PDEATHSIG = 1


def _follow_parent() -> None:
    """SIGTERM when the process that started this one ends: it stops as if asked to."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() == 1:
        os.kill(os.getpid(), signal.SIGTERM)


async def _main(args) -> int:
    folder = Path(args.folder) if args.folder else Path(tempfile.mkdtemp(prefix="kale-ext-cp-"))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    started = time.monotonic()
    plane = ControlPlane(folder, Path(args.kubeconfig), with_kueue=not args.no_kueue)
    try:
        start = loop.create_task(plane.start())
        waiting = loop.create_task(stop.wait())
        await asyncio.wait({start, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not start.done():
            start.cancel()
            await asyncio.gather(start, return_exceptions=True)
            return 130
        start.result()
        took = time.monotonic() - started
        build = plane.timings.get("build", 0.0)
        print(f"control plane started in {plane.timings['start']:.1f} s (warm start; "
              f"{build:.1f} s checking or building binaries; {took:.1f} s in all); "
              f"logs in {folder / 'logs'}", flush=True)  # fmt: skip
        print(f"ready {plane.server}", flush=True)
        await waiting
        return 0
    finally:
        await plane.stop()
        print("control plane stopped", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.controlplane",
                                     description=__doc__)  # fmt: skip
    parser.add_argument("--kubeconfig", required=True, help="where to write the kubeconfig")
    parser.add_argument("--folder", help="where etcd, logs and pods live (default: a new "
                        "temporary folder)")  # fmt: skip
    parser.add_argument("--no-kueue", action="store_true", help="start no Kueue")
    args = parser.parse_args(argv)
    _follow_parent()
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
