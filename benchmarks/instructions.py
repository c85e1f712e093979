"""What one POST compile costs a compile process, in instructions (callgrind), not seconds.

    python benchmarks/instructions.py [--requests 20] [--modes same one-cell all-cells] [--smoke]

The wall clock on a shared 2-core VM drifts by 15-30% from one hour to the next (benchmarks/
README.md, sixth and seventh rounds), more than most changes move it; the instructions a request
executes do not: the same code counts the same to within about 2%, whatever else the machine
runs. For each of server.py's modes (the 105-cell notebook sent as JSON: all the same, one cell
changed, every cell changed), a child process prepares the calls a compile process receives,
answers 5 of them, then ``--requests`` more; run under callgrind once with those and once
without, the difference divided by ``--requests`` is one request's instructions: the imports
and the set-up cancel out.

The baseline, measured in the same run: CPython's own symbol table (its parser included) of
every changed cell's plain Python, which no compile of those cells can do without. Prints each
mode's millions of instructions a request and, for every cell changed, its ratio to that floor.
Needs valgrind (Debian: `apt install valgrind`). Each child runs about 90-150 s under callgrind;
two run at once.

``--smoke`` (benchmarks/smoke.py): every cell changed and the floor, 1 request, the children run
without callgrind (under it, Python's imports alone take minutes): each child's CPU time in ns
stands for its instruction count, so the figures mean nothing, but every step runs.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import SMOKE  # noqa: E402

#: server.py's modes, as it names them, and how this prints them.
MODES = {"same": "all the same", "one-cell": "one cell changed", "all-cells": "every cell changed"}
FLOOR = "floor"
WARM = 5


def calls(mode: str, count: int, root: str) -> list[bytes]:
    """The pickled calls a compile process gets for ``count`` requests of ``mode``, as the
    server makes them (server.py's bodies, compile_inputs.preview_inputs' reads)."""
    from server import compile_bodies

    from kale_ext.server import service
    from kale_ext.server.app import KaleExtApp
    from kale_ext.server.compile_inputs import preview_inputs

    app = KaleExtApp()
    app.jobs_dir = os.path.join(root, "jobs")
    app.initialize_settings()
    out = []
    for body in compile_bodies(mode, count)[0]:
        data = json.loads(body)
        notebook, options = data["notebook"], data["options"]
        runtime, installed, defaults = preview_inputs(app, notebook, options)
        args = (notebook, "notebook.ipynb", None, options, runtime, defaults, installed, root)
        out.append(pickle.dumps((service.preview_json, args), protocol=pickle.HIGHEST_PROTOCOL))
    return out


def plain_cells(count: int) -> list[list[str]]:
    """For ``count`` every-cell-changed requests, the plain Python of each code cell."""
    from server import compile_bodies

    from kale_ext.compile.notebook import parse_notebook
    from kale_ext.compile.transform import transform_cell

    out = []
    for body in compile_bodies("all-cells", count)[0]:
        notebook = parse_notebook(json.loads(body)["notebook"])
        codes = [transform_cell(c, []) for c in notebook.cells if c.cell_type == "code"]
        out.append([code.source for code in codes if code is not None])
    return out


def child(mode: str, requests: int, most: int) -> NoReturn:
    """Prepare ``most`` + WARM requests' work, do WARM of them, then ``requests`` more."""
    import gc

    from kale_ext.server.compile_worker import GC_THRESHOLDS, answer

    with tempfile.TemporaryDirectory() as root:
        os.environ["JUPYTER_DATA_DIR"] = root  # nothing read from the user's own
        if mode == FLOOR:
            import _symtable

            work = [
                lambda cells=cells: [_symtable.symtable(s, "<cell>", "exec") for s in cells]
                for cells in plain_cells(most + WARM)
            ]
        else:
            work = [lambda call=call: answer(call) for call in calls(mode, most + WARM, root)]
        gc.set_threshold(*GC_THRESHOLDS)  # as a compile process has it
        for do in work[:WARM]:
            do()
        gc.freeze()
        for do in work[WARM : WARM + requests]:
            do()
        print(f"CPU ns: {time.process_time_ns()}")  # what --smoke counts
        sys.stdout.flush()
        os._exit(0)  # no interpreter tear-down in the count


def collected(mode: str, requests: int, most: int, smoke: bool = False) -> int:
    """The instructions a child executes, as callgrind counts them (``smoke``: the child run
    without callgrind, the CPU nanoseconds it reports instead)."""
    command = [sys.executable, __file__, "--child", mode, str(requests), str(most)]
    if not smoke:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    run = subprocess.run(
        command, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True
    )
    found = re.search(r"CPU ns: (\d+)", run.stdout) if smoke else None
    found = found or re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        how = "the child" if smoke else "callgrind"
        sys.exit(f"{how} of {mode} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    return int(found[1])


def per_request(mode: str, requests: int, smoke: bool = False) -> float:
    """Millions of instructions one request of ``mode`` costs (two children, side by side)."""
    with ThreadPoolExecutor(2) as pool:
        more, less = pool.map(lambda n: collected(mode, n, requests, smoke), (requests, 0))
    return (more - less) / requests / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help=SMOKE + "; no callgrind")
    args = parser.parse_args(argv)
    if args.child:
        mode, requests, most = args.child
        child(mode, int(requests), int(most))
    if args.smoke:
        args.requests, args.modes = 1, ["all-cells"]
        print("--smoke: CPU ns, not instructions, stand for the counts below")
    elif shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt install valgrind)")
    print(f"instructions a request in a compile process, {args.requests} requests a mode, "
          "PYTHONHASHSEED=0 (callgrind: the same code counts within about 2%)")  # fmt: skip
    results = {mode: per_request(mode, args.requests, args.smoke) for mode in args.modes}
    floor = per_request(FLOOR, args.requests, args.smoke) if "all-cells" in results else None
    for mode, millions in results.items():
        line = f"  notebooks {MODES[mode]}: {millions:.1f} M"
        if mode == "all-cells" and floor:
            line += f", {millions / floor:.2f}x the floor"
        print(line)
    if floor:
        print(f"  floor: CPython's symbol table of every changed cell (its parser included): "
              f"{floor:.1f} M")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
