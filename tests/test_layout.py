"""The package's layout keeps its promise: stages import only the stages before them, and
nothing imports a front end (CONTRIBUTING.md)."""

import ast
import json
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kale_ext"
PANEL = PACKAGE.parent / "labextension" / "src"  # the panel's TypeScript: no circles either
#: Each stage may import itself and the stages before it; shared leaves are open to all.
ORDER = ["compile", "job", "backends", "runs", "front"]
SHARED = {"errors", "files", "metrics", "progress", "_version", "__version__", "__init__"}
SHARED |= {"distributed"}
SHARED |= {"mlflow_api", "tracking_sink"}  # experiment tracking: the submit, supervisor and jobs
SHARED |= {"trainer_status"}  # report()'s progress to Kubeflow Trainer's status URL
SHARED |= {"terminal"}  # text from a job or a notebook made safe to show on a terminal
SHARED |= {"lineage"}  # a job's lineage and last checkpoint, as every view reads them
SHARED |= {"peers"}  # one HTTP request to a peer, bounded by total time, redirects not followed
SHARED |= {"checkpoint"}  # checkpoints in a job: the in-job code compiled jobs carry
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


def _runtime_nodes(tree: ast.AST):
    """Every node, but those under `if TYPE_CHECKING:` (names for type hints, never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in TYPE_CHECKING:
            yield from (n for child in node.orelse for n in ast.walk(child))
            continue
        yield node
        yield from _runtime_nodes(node)


TYPE_CHECKING = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def imports_of(path: Path) -> list[tuple[str, int]]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in _runtime_nodes(ast.parse(path.read_text())):
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


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(
        ".__init__"
    )


def import_graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (at its top or in a function); `from x import
    y` counts as importing x.y where that is a module, else x."""
    modules = {module_of(p): p for p in MODULES}

    def resolve(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    return {m: {resolve(t) for t, _ in imports_of(p)} - {m, ""} for m, p in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


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


def test_no_two_modules_import_each_other():
    """What two modules share belongs in a third they both import (CONTRIBUTING.md)."""
    found = circles(import_graph())
    assert not found, "modules that import each other:\n" + "\n".join(" ↔ ".join(c) for c in found)


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b", "c"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["c", "d"], ["a", "b"]]),
    ],
)
def test_circles_are_found_however_long(graph, expected):
    assert circles(graph) == expected


#: `import ... from './x'` and `export ... from '../y'` (types too: they are what ties files).
TS_IMPORT = re.compile(r"""(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"](\.{1,2}/[^'"]+)['"]""")


def ts_import_graph(folder: Path) -> dict[str, set[str]]:
    """Each TypeScript file of ``folder`` (its path there) → the files of ``folder`` it imports."""
    files = {p.resolve() for p in folder.rglob("*.ts*")}

    def resolve(source: Path, spec: str) -> str | None:
        base = (source.parent / spec).resolve()
        for candidate in (Path(f"{base}.ts"), Path(f"{base}.tsx"), base / "index.ts"):
            if candidate in files:
                return candidate.relative_to(folder.resolve()).as_posix()
        return None

    root = folder.resolve()
    return {
        p.relative_to(root).as_posix(): {
            t for spec in TS_IMPORT.findall(p.read_text()) if (t := resolve(p, spec))
        }
        for p in files
    }


@pytest.mark.parametrize(
    "sources, expected",
    [
        ({"a.ts": "import { b } from './b';", "b.ts": "export const b = 1;"}, []),
        (
            {"a.ts": "import type { B } from './b';", "b.tsx": "import { a } from './a';"},
            [["a.ts", "b.tsx"]],
        ),
        (
            {
                "p/a.ts": "import {\n  x,\n  y\n} from '../q/c';",
                "q/c.ts": "export { z } from './d';",
                "q/d.tsx": "import type { A } from '../p/a';",
            },
            [["p/a.ts", "q/c.ts", "q/d.tsx"]],
        ),
        (
            {"a.ts": "import { i } from './i';", "i/index.ts": "import { a } from '../a';"},
            [["a.ts", "i/index.ts"]],
        ),
        ({"a.ts": "import * as R from 'react';", "b.ts": "// from './a'"}, []),
    ],
)
def test_typescript_circles_are_found(tmp_path, sources, expected):
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert circles(ts_import_graph(tmp_path)) == expected


def test_no_two_typescript_files_import_each_other():
    """Type-only imports count: they tie two files as much as any (CONTRIBUTING.md)."""
    graph = ts_import_graph(PANEL)
    assert len(graph) >= 50 and "panel/state.ts" in graph, sorted(graph)  # the folder was read
    assert "form/model.ts" in graph["panel/state.ts"], graph["panel/state.ts"]
    found = circles(graph)
    assert not found, "files that import each other:\n" + "\n".join(" ↔ ".join(c) for c in found)


STYLE = PACKAGE.parent / "labextension" / "style"


def style_entries(folder: Path) -> dict[str, list[str]]:
    """The stylesheets each of JupyterLab's two style entry points names (package.json's
    `styleModule`, index.js, and `style`, index.css), beside every stylesheet the folder has."""
    return {
        "folder": sorted(p.name for p in folder.glob("*.css") if p.name != "index.css"),
        "index.js": sorted(
            re.findall(r"^import '\./([\w-]+\.css)';$", _text(folder / "index.js"), re.M)
        ),
        "index.css": sorted(
            re.findall(r"^@import url\('([\w-]+\.css)'\);$", _text(folder / "index.css"), re.M)
        ),
    }


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_stylesheet_neither_entry_point_imports_is_found(tmp_path):
    (tmp_path / "base.css").write_text("")
    (tmp_path / "prune.css").write_text("")
    (tmp_path / "index.js").write_text("import './base.css';\n")
    (tmp_path / "index.css").write_text("@import url('base.css');\n@import url('prune.css');\n")
    found = style_entries(tmp_path)
    assert found["index.js"] != found["folder"] == found["index.css"]


def test_both_style_entry_points_import_every_stylesheet():
    """A stylesheet neither imports is never shown (prune.css once shipped so)."""
    package = json.loads((PACKAGE.parent / "package.json").read_text(encoding="utf-8"))
    assert package["styleModule"] == "labextension/style/index.js"
    assert package["style"] == "labextension/style/index.css"
    found = style_entries(STYLE)
    assert len(found["folder"]) >= 4 and "base.css" in found["folder"], found
    assert found["index.js"] == found["folder"] == found["index.css"], found
