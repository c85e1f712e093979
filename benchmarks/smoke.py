"""Every benchmark in its smoke mode, so none rots (`make benchmarks`, run by `make check`).

    python benchmarks/smoke.py [--timeout 240] [--parallel 2] [NAME.py ...]

Runs each ``benchmarks/*.py`` script but the helpers below with ``--smoke`` (a tiny run through
the same code as the full run: see each script's docstring) as a subprocess of this Python, with
this checkout first on PYTHONPATH (so its kale_ext runs, in the script and in the servers and
jobs it starts, wherever the virtualenv's editable install points). Prints a line per script as
it ends, with the tail of its output when it failed, and exits non-zero when one failed, timed
out or has no ``--smoke`` (a new benchmark cannot come without one). The figures are not
checked: a smoke run only has to get through. Then checks, without a browser, that what the
panel's Playwright benchmark imports is still exported where it imports it from (its run needs
a browser: benchmarks/panel/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The scripts that are not benchmarks, and why.
HELPERS = {
    "timing.py": "the benchmarks' shared helpers",
    "smoke.py": "this runner",
}
#: Started first when several run at once: the longest (real servers and jobs).
LONGEST = ("cluster.py", "server.py", "sweep.py", "tracking.py", "local_run.py", "hostile.py")
#: Lines of a failed script's output printed.
TAIL = 25


def benchmarks(folder: Path = HERE) -> list[Path]:
    """The benchmark scripts in ``folder``: every ``*.py`` but the HELPERS."""
    return sorted(p for p in folder.glob("*.py") if p.name not in HELPERS)


def has_smoke(script: Path) -> bool:
    """Whether ``script`` defines a ``--smoke`` flag (one without it fails when run so anyway)."""
    return re.search(r"""add_argument\(\s*["']--smoke["']""", script.read_text()) is not None


@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    cpu: float  # seconds of CPU: the script's and those of the processes it waited for
    why: str = ""  # when not ok: what went wrong, then the tail of the output


def _read(pipe, chunks: list[bytes]) -> None:
    while chunk := os.read(pipe.fileno(), 65536):
        chunks.append(chunk)


def run(script: Path, timeout: float) -> Result:
    """``script --smoke`` in a session of its own (a timeout ends every process it started)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(script), "--smoke"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read, args=(proc.stdout, chunks), daemon=True)
    reader.start()
    why = ""
    # ended, but not reaped yet: until it is, its pid (its session's and group's) stays its own
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() - started > timeout:
            why = f"no end after {timeout:g} s"
            break
        time.sleep(0.05)
    seconds = time.monotonic() - started
    with contextlib.suppress(ProcessLookupError):  # it, on a timeout; what it left in its group
        os.killpg(proc.pid, signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0)  # the script's own CPU time and its children's
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(5)  # a process in a session of its own may still hold the pipe
    if not reader.is_alive():
        proc.stdout.close()
    if not why and proc.returncode:
        why = f"exit status {proc.returncode}"
    if why:
        tail = b"".join(chunks).decode(errors="replace").rstrip().splitlines()[-TAIL:]
        why = "\n".join([why, *("    " + line for line in tail)])
    return Result(script.name, not why, seconds, usage.ru_utime + usage.ru_stime, why)


# -- the panel's Playwright benchmark, without a browser --

IMPORT = re.compile(r"""^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"](\.[^'"]+)['"]""", re.M)
REQUIRE = re.compile(r"""^const\s*\{([^}]*)\}\s*=\s*require\(\s*['"](\.[^'"]+)['"]\s*\)""", re.M)
DECLARED = re.compile(
    r"^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?"
    r"(?:function\*?|const|let|var|class|interface|type|enum)\s+(\w+)",
    re.M,
)
LISTED = re.compile(r"^export\s+(?:type\s+)?\{([^}]*)\}", re.M)
STAR = re.compile(r"""^export\s+\*\s+from\s+['"](\.[^'"]+)['"]""", re.M)
MODULE_EXPORTS = re.compile(r"module\.exports\s*=\s*\{([^}]*)\}")


def _names(listed: str, last: bool) -> set[str]:
    """The names of ``{ a, b as c, type d }``: the first of each ``as`` pair, or the last."""
    out = set()
    for item in listed.split(","):
        words = item.replace("type ", " ").split()
        if words:
            out.add(words[-1] if last else words[0])
    return out


def _source(base: Path, spec: str) -> Path | None:
    """The file a relative import names (TypeScript's and Node's resolution, in short)."""
    target = (base / spec).resolve()
    for candidate in (target, *(target.with_name(target.name + e) for e in (".ts", ".tsx", ".js")),
                      target / "index.ts", target / "index.js"):  # fmt: skip
        if candidate.is_file():
            return candidate
    return None


def exported(path: Path, seen: frozenset[Path] = frozenset()) -> set[str]:
    """The names ``path`` exports (following ``export * from``)."""
    text = path.read_text()
    out = set(DECLARED.findall(text))
    for listed in LISTED.findall(text) + MODULE_EXPORTS.findall(text):
        out |= _names(listed, last=True)
    for spec in STAR.findall(text):
        source = _source(path.parent, spec)
        if source is not None and source not in seen:
            out |= exported(source, seen | {path})
    return out


def panel_imports(folder: Path) -> tuple[int, list[str]]:
    """How many names the panel benchmark's files import from the project's own files, and
    the ones no longer found there (or whose file is gone)."""
    count, missing = 0, []
    for path in sorted([*folder.glob("*.ts"), *folder.glob("*.js")]):
        text = path.read_text()
        for listed, spec in IMPORT.findall(text) + REQUIRE.findall(text):
            names = _names(listed, last=False)
            count += len(names)
            source = _source(path.parent, spec)
            if source is None:
                missing.append(f"{path.name}: {spec} is gone")
                continue
            gone = sorted(names - exported(source))
            if gone:
                missing.append(f"{path.name}: {', '.join(gone)} no longer exported by {spec}")
    return count, missing


def main(argv: list[str] | None = None, folder: Path = HERE) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="only these scripts (default: all)")
    parser.add_argument("--timeout", type=float, default=240, help="seconds a script may take")
    parser.add_argument("--parallel", type=int, default=2, help="scripts run at once")
    args = parser.parse_args(argv)
    started = time.monotonic()
    scripts = benchmarks(folder)
    if args.names:
        scripts = [s for s in scripts if s.name in args.names]
    failed = []
    for script in scripts:
        if not has_smoke(script):
            print(f"smoke {script.name}: FAILED: it has no --smoke flag (every benchmark needs "
                  f"one: benchmarks/README.md; or name it in smoke.py's HELPERS)")  # fmt: skip
            failed.append(script.name)
    todo = [s for s in scripts if s.name not in failed]
    cpu = 0.0
    todo.sort(key=lambda s: LONGEST.index(s.name) if s.name in LONGEST else len(LONGEST))
    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        for future in as_completed([pool.submit(run, s, args.timeout) for s in todo]):
            r = future.result()
            took = f"{r.seconds:.1f} s ({r.cpu:.1f} s CPU)"
            if r.ok:
                print(f"smoke {r.name}: ok in {took}", flush=True)
            else:
                print(f"smoke {r.name}: FAILED in {took}: {r.why}", flush=True)
                failed.append(r.name)
            cpu += r.cpu
    if not args.names and (folder / "panel").is_dir():
        count, missing = panel_imports(folder / "panel")
        if missing:
            print("smoke panel/: FAILED: " + "; ".join(missing))
            failed.append("panel/")
        else:
            print(f"smoke panel/: ok, the {count} names it imports are exported (its browser "
                  "run: benchmarks/panel/README.md)")  # fmt: skip
    total = time.monotonic() - started
    took = f"{total:.0f} s, {cpu:.0f} s CPU, load average {os.getloadavg()[0]:.1f}"
    if failed:
        print(f"smoke: {len(failed)} FAILED ({', '.join(failed)}) in {took}")
        return 1
    print(f"smoke: {len(scripts)} benchmarks ok in {took}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
