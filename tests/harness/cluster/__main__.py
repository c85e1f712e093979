"""Run the emulated cluster until interrupted (for the browser tests, or to try it by hand)::

    python -m tests.harness.cluster --kubeconfig PATH [--folder DIR] [--namespace NS]
                                    [--trainer-status]

It writes the kubeconfig to PATH once it serves, prints ``ready <url>`` on standard output,
and stops (ending every pod's process) on SIGINT or SIGTERM. Run it from the repository's root.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from tests.harness.cluster import EmulatedCluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.cluster", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--kubeconfig", required=True, type=Path, help="where to write it")
    parser.add_argument("--folder", type=Path, help="the pods' folders (default: a new one)")
    parser.add_argument("--namespace", default="team", help="the kubeconfig's namespace")
    parser.add_argument("--trainer-status", action="store_true",
                        help="turn on the Trainer's TrainJobStatus feature (its status server)")  # fmt: skip
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="emulated-cluster-"))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with EmulatedCluster(folder, namespace=args.namespace,
                         trainer_status=args.trainer_status) as cluster:  # fmt: skip
        args.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cluster.kubeconfig, args.kubeconfig)
        print(f"ready {cluster.url}", flush=True)
        stop.wait()
    if args.folder is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
