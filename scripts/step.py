"""Run one slow setup step visibly: say what it does, a line every few seconds while it runs,
and how long it took. Usage: python scripts/step.py [--every SECONDS] "what it does" command...

`make demo` runs its installs through it, so a first run never sits silent. Only the standard
library: it runs before anything is installed.
"""

from __future__ import annotations

import subprocess
import sys
import time

#: Seconds between two "still ..." lines.
EVERY = 10


def run(what: str, command: list[str], every: float = EVERY) -> int:
    start = time.monotonic()
    print(f"==> {what}", flush=True)
    try:
        proc = subprocess.Popen(command)
    except OSError as e:
        print(f"==> {what}: cannot run {command[0]}: {e.strerror}", file=sys.stderr, flush=True)
        return 127
    while True:
        try:
            code = proc.wait(timeout=every)
            break
        except subprocess.TimeoutExpired:
            print(f"    ... {what} ({time.monotonic() - start:.0f} s)", flush=True)
        except KeyboardInterrupt:
            proc.terminate()
            return proc.wait() or 130
    took = time.monotonic() - start
    print(
        f"    {'done' if code == 0 else f'FAILED (exit code {code})'} in {took:.0f} s", flush=True
    )
    return code


def main(argv: list[str]) -> int:
    every = EVERY
    if argv[:1] == ["--every"] and len(argv) > 1:
        every, argv = float(argv[1]), argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    return run(argv[0], argv[1:], every)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
