"""The package's layout keeps its promise: stages import only the stages before them, and
nothing imports a front end (CONTRIBUTING.md)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kale_ext"
#: Each stage may import itself and the stages before it; shared leaves are open to all.
ORDER = ["compile", "job", "backends", "runs", "front"]
SHARED = {"errors", "files", "metrics", "_version", "__version__", "__init__", "distributed"}
SHARED |= {"mlflow_api", "tracking_sink"}  # experiment tracking: the submit, supervisor and jobs
#: The public facades (`kale_ext.report`, `from kale_ext.distributed import ...`) may reach in.
PUBLIC = {"kale_ext", "kale_ext.__init__", "kale_ext.distributed"}
FRONT_ENDS = {"cli", "exporter", "server", "ipython", "display", "sdk"}


def stage_of(module: str) -> str | None:
    """The stage of `kale_ext.<top>...`, None for a shared leaf."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top in SHARED:
        return None
    return "front" if top in FRONT_ENDS else top


def imports_of(path: Path) -> list[tuple[str, int]]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names] if not node.module else [target]
            found += [(n, node.lineno) for n in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
    return [(n, line) for n, line in found if n.startswith("kale_ext")]


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "labextension" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_one_way(path):
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    own = stage_of(module)
    wrong = []
    for target, line in imports_of(path):
        theirs = stage_of(target)
        if theirs is None or module in PUBLIC:
            continue
        if own is None:
            wrong.append(f"line {line}: shared module imports {target}")
        elif ORDER.index(theirs) > ORDER.index(own):
            wrong.append(f"line {line}: {own} imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= 450, "split it by what its parts do"
