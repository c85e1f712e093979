"""Build the control plane's binaries from Go modules (``versions.py``), once per version.

Each component's binaries go to ``<cache>/<name>-<version>/bin/`` (``<cache>`` is
``${XDG_CACHE_HOME:-~/.cache}/kale_ext/controlplane``), with a ``built`` file written last: a
folder without it is an unfinished build and is built again. A module without ``replace`` lines
is built with ``go install pkg@version``; ``k8s.io/kubernetes`` and etcd from a go.mod of our own
in ``<cache>/<name>-<version>/src`` that requires the module and replaces each of its
``replace`` targets with a published version (``go install`` refuses a module with ``replace``
lines). Go fetches from its module proxy only; its module and build caches are its own
(``go env GOMODCACHE GOCACHE``). A lock file per component keeps two test sessions from building
the same thing at once. While ``go`` builds, a progress line is printed at least every
``PROGRESS`` seconds; the time each build took is printed at its end.

``python -m tests.harness.controlplane.build`` builds what is missing and prints where.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.harness.controlplane.versions import COMPONENTS, Component

PROGRESS = 10.0  # seconds between progress lines while go builds (the brief: at most 15)
GO_FALLBACKS = ("/usr/local/go/bin/go", "/usr/lib/go/bin/go")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kale_ext" / "controlplane"


def go_binary() -> str:
    found = shutil.which("go") or next((g for g in GO_FALLBACKS if os.access(g, os.X_OK)), None)
    if found is None:
        raise RuntimeError("the control plane is built with Go (1.26+): `go` is not on PATH")
    return found


def binaries(component: Component) -> Path:
    """The folder of a component's built binaries."""
    return cache_root() / component.key / "bin"


def is_built(component: Component) -> bool:
    return (cache_root() / component.key / "built").exists()


def go_mod(component: Component) -> str:
    """The go.mod of our own for a component built with ``how="gomod"``."""
    lines = [f"module kale_ext.local/controlplane/{component.name}", "", "go 1.26.0", "",
             f"require {component.module} {component.version}", ""]  # fmt: skip
    if component.replace:
        lines.append("replace (")
        lines += [f"\t{m} => {m} {v}" for m, v in sorted(component.replace.items())]
        lines += [")", ""]
    return "\n".join(lines)


def _commands(component: Component, out: Path, src: Path) -> list[tuple[list[str], Path]]:
    """(argv, cwd) of the go commands that build the component into ``out``."""
    go = go_binary()
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    ldflags = ["-ldflags", " ".join(("-s", "-w", *component.ldflags))]
    if component.how == "install":
        return [([*nice, go, "install", "-v", *ldflags, f"{pkg}@{component.version}"], src)
                for pkg in component.binaries.values()]  # fmt: skip
    packages = list(component.binaries.values())
    if packages == ["."]:
        target = str(out / next(iter(component.binaries)))
    else:
        target = str(out) + "/"
    return [([*nice, go, "build", "-v", "-mod=mod", *ldflags, "-o", target, *packages], src)]


def _run(argv: list[str], cwd: Path, env: dict, label: str, log: Path) -> None:
    """Run a go command, printing a progress line at least every PROGRESS seconds."""
    started = time.monotonic()
    counts = {"lines": 0, "last": ""}
    with log.open("ab") as sink:
        sink.write(f"$ {' '.join(argv)}\n".encode())
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)  # fmt: skip

        def pump():
            for line in process.stdout:
                sink.write(line)
                sink.flush()
                counts["lines"] += 1
                counts["last"] = line.decode(errors="replace").strip()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            while True:
                try:
                    process.wait(PROGRESS)
                    break
                except subprocess.TimeoutExpired:
                    elapsed = time.monotonic() - started
                    print(f"building {label}: {elapsed:.0f} s, {counts['lines']} packages or "
                          f"downloads so far (last: {counts['last'][:80]})", flush=True)  # fmt: skip
        except BaseException:
            process.kill()
            process.wait()
            raise
        reader.join()
    if process.returncode:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        raise RuntimeError(f"building {label} failed (exit {process.returncode}); the last lines "
                           f"of {log}:\n" + "\n".join(tail))  # fmt: skip


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build(component: Component) -> Path:
    """The component's binaries folder, built first when it is not."""
    root = cache_root() / component.key
    if is_built(component):
        return root / "bin"
    with _locked(cache_root() / f"{component.key}.lock"):
        if is_built(component):  # another session built it while we waited
            return root / "bin"
        print(f"building {component.name} {component.version} into {root} (from nothing: "
              "minutes)", flush=True)  # fmt: skip
        started = time.monotonic()
        src, out = root / "src", root / "bin.partial"
        shutil.rmtree(out, ignore_errors=True)
        src.mkdir(parents=True, exist_ok=True)
        out.mkdir(parents=True)
        if component.how == "gomod":
            (src / "go.mod").write_text(go_mod(component))
            (src / "go.sum").unlink(missing_ok=True)
            if component.main:
                (src / "main.go").write_text(component.main)
        env = {**os.environ, "GOBIN": str(out), "GOFLAGS": "-buildvcs=false",
               "GOTOOLCHAIN": "local"}  # fmt: skip
        log = root / "build.log"
        log.write_bytes(b"")
        for argv, cwd in _commands(component, out, src):
            _run(argv, cwd, env, f"{component.name} {component.version}", log)
        missing = [b for b in component.binaries if not (out / b).exists()]
        if missing:
            raise RuntimeError(f"building {component.name} made no {', '.join(missing)} ({log})")
        shutil.rmtree(root / "bin", ignore_errors=True)
        out.rename(root / "bin")
        took = time.monotonic() - started
        (root / "built").write_text(f"{took:.0f} s\n")
        print(f"built {component.name} {component.version} in {took:.0f} s", flush=True)
    return root / "bin"


def build_all(components=COMPONENTS) -> dict[str, Path]:
    """Every binary by name, building what is missing; prints the total time of a build."""
    started, built_any = time.monotonic(), False
    out: dict[str, Path] = {}
    for component in components:
        built_any |= not is_built(component)
        folder = build(component)
        out.update({name: folder / name for name in component.binaries})
    if built_any:
        print(f"control plane built in {time.monotonic() - started:.0f} s", flush=True)
    return out


if __name__ == "__main__":
    for name, path in build_all().items():
        print(f"{name}: {path}")
    sys.exit(0)
