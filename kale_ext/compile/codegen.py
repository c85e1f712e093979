"""Code generation: one self-contained function in a real, importable module.

Each cell's code is indented into the function body below a ``# cell N`` marker; lines that
continue a multi-line string are left exactly as they are, so strings keep their bytes.
The output is deterministic: the same notebook gives byte-identical source.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import keyword
import re
from dataclasses import dataclass

from .. import __version__, checkpoint, trainer_status
from ..metrics import PREFIX as METRIC_PREFIX
from ..mlflow_api import RUN_ID_ENV
from . import excepthook, kept, leave, resultsave
from .notebook import source_lines

INDENT = "    "

#: Each shim's lines at the top of the function, in this order (checkpoint's uses report).
_SHIM_SOURCE = {
    "display": (
        "def display(*objs, **kwargs):  # kale_ext shim: a notebook's display() prints reprs\n"
        "    for obj in objs:\n"
        "        print(repr(obj))\n"
    ),
    "report": (
        "def report(step=None, **metrics):  # kale_ext shim: kale_ext.report, stdlib only\n"
        "    import json as _json, os as _os\n"
        "    record = {'step': step, 'rank': int(_os.environ.get('RANK', 0)), **metrics}\n"
        f"    print({METRIC_PREFIX!r} + _json.dumps(record, default=float), flush=True)\n"
        "    if _kale_ext_track is not None:\n"
        "        _kale_ext_track(record)\n"
        "    status = globals().get('_kale_ext_status')  # to Kubeflow Trainer (module level)\n"
        "    if status is not None:\n"
        "        status(record)\n"
        "_kale_ext_track = None  # kale_ext shim: report() also goes to MLflow in a tracked job\n"
        f"if __import__('os').environ.get({RUN_ID_ENV!r}):\n"
        "    try:\n"
        "        from kale_ext.tracking_sink import track as _kale_ext_track\n"
        "    except ImportError:  # an image without kale_ext: the logs still carry the metrics\n"
        "        pass\n"
    ),
    "checkpoint": (  # its source is the function's own: the Kubeflow SDK ships the function alone
        "checkpoint = _kale_ext_checkpoint(  # kale_ext shim: kale_ext.checkpoint\n"
        f"    __import__('os').environ, {checkpoint.SETTINGS!r}, report)\n"
    ),
}


@dataclass(frozen=True)
class Section:
    """One cell's code in the body."""

    cell_index: int
    label: str  # e.g. "imports"
    source: str
    cell_id: str | None = None
    cell_lines: tuple[int, ...] | None = None  # the cell's line of each source line; None: same


def function_name_for(notebook_stem: str) -> str:
    """A valid identifier derived from a notebook's file name."""
    name = re.sub(r"\W+", "_", notebook_stem.strip().lower()).strip("_")
    if not name or not name.isidentifier():
        name = f"train_{name}" if name else "train"
    if keyword.iskeyword(name):
        name += "_"
    return name


def _string_continuation_lines(source: str) -> set[int]:
    """1-based lines that begin inside a multi-line string (they must not be re-indented)."""
    if "\\\n" not in source and _triple_quotes_close_on_their_line(source):
        return set()
    inside: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
        ):
            if node.end_lineno and node.end_lineno > node.lineno:
                inside.update(range(node.lineno + 1, node.end_lineno + 1))
    return inside


def _triple_quotes_close_on_their_line(source: str) -> bool:
    """True when no string can span lines: every line holds an even number of each triple
    quote and, those aside, no other quote (a quoted triple quote hides one). Else ask the
    AST (one-line docstrings, the common case, need no parse)."""
    if '"""' not in source and "'''" not in source:
        return True
    for line in source_lines(source):
        if '"""' in line or "'''" in line:
            if line.count('"""') % 2 or line.count("'''") % 2:
                return False
            rest = line.replace('"""', "").replace("'''", "")
            if '"' in rest or "'" in rest:
                return False
    return True


def indent_code(source: str, prefix: str = INDENT) -> list[str]:
    """``source`` indented by ``prefix``, leading tabs expanded, strings untouched."""
    keep = _string_continuation_lines(source)
    if not keep and "\t" not in source:  # most cells: every line gets the prefix
        return [
            prefix + line if line and not line.isspace() else "" for line in source_lines(source)
        ]
    out = []
    for i, line in enumerate(source_lines(source), start=1):
        if i in keep:
            out.append(line)
        elif not line.strip():
            out.append("")
        else:
            stripped = line.lstrip(" \t")
            lead = line[: len(line) - len(stripped)].expandtabs(8)
            out.append(prefix + lead + stripped)
    return out


@kept.by_source
def _body_lines(source: str) -> tuple[str, ...]:
    """A cell's lines in the function's body: indented, without trailing blank lines."""
    code = indent_code(source)
    while code and not code[-1]:
        code.pop()
    return tuple(code)


def parameters_text(parameters: dict[str, object], required=()) -> str:
    """``a, b=2``: the parameters, those in ``required`` without a default."""
    return ", ".join(k if k in required else f"{k}={v!r}" for k, v in parameters.items())


def signature_text(arguments: ast.arguments, lazy: bool) -> str:
    """A function's parameters as its ``def`` wrote them (kinds, annotations, defaults; the
    entrypoint takes no *args or **kwargs). An annotation that names more than builtins is
    written as a string (PEP 563's form) unless the module's annotations are ``lazy`` already:
    the compiled module defines the function before any of the notebook's names exist."""

    def one(arg: ast.arg, default: ast.expr | None) -> str:
        text = arg.arg
        if arg.annotation is not None:
            names = {n.id for n in ast.walk(arg.annotation) if isinstance(n, ast.Name)}
            written = ast.unparse(arg.annotation)
            text += f": {written if lazy or names <= _BUILTINS else repr(written)}"
        if default is not None:
            text += (" = " if arg.annotation is not None else "=") + ast.unparse(default)
        return text

    a = arguments
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    parts = [one(arg, d) for arg, d in zip(positional, defaults, strict=True)]
    if a.posonlyargs:
        parts.insert(len(a.posonlyargs), "/")
    if a.kwonlyargs:
        parts.append("*")
        parts += [one(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    return ", ".join(parts)


_BUILTINS = frozenset(dir(builtins))


def docstring_lines(doc: str) -> list[str]:
    """A docstring whose value is exactly ``doc``, as the function's first statement."""
    if '"""' in doc or "\\" in doc or doc.endswith('"') or "\r" in doc:
        return [INDENT + repr(doc)]
    return (INDENT + '"""' + doc + '"""').split("\n")


def render_module(
    function_name: str,
    parameters: dict[str, object],
    sections: list[Section],
    shims: set[str],
    notebook_name: str,
    future: set[str] = frozenset(),
    required: tuple[str, ...] = (),
    signature: ast.arguments | None = None,
    docstring: str | None = None,
) -> tuple[str, list[dict]]:
    """The module's source, and a map from module lines back to cells. ``required``: the
    parameters without a default (the job always passes them). ``signature`` and
    ``docstring``: the function's own, where the notebook wrote the function (an entrypoint);
    else its parameters are keyword-only and its docstring says where it came from."""
    if signature is not None:
        params = signature_text(signature, "annotations" in future)
        signature_line = f"def {function_name}({params}):"
    else:
        params = parameters_text(parameters, required)
        signature_line = (
            f"def {function_name}(*, {params}):" if params else f"def {function_name}():"
        )
    if docstring is None:
        docstring = f"Compiled from {notebook_name} by kale_ext."
    lines = [
        f"# Compiled by kale_ext {__version__} from {notebook_name}: "
        "edit the notebook, not this file.",
        f"# Run: python {function_name}.py '{{\"param\": value}}'  or  torchrun --nproc_per_node=2 "
        f"{function_name}.py",
        *(f"from __future__ import {feature}" for feature in sorted(future)),
        "",
        "",
        signature_line,
        *docstring_lines(docstring),
    ]
    for shim in (s for s in _SHIM_SOURCE if s in shims):
        if shim == "checkpoint":  # what the shim calls (kale_ext/checkpoint.py), in the function
            lines += indent_code(_checkpoint_source()) + [""]
        lines += indent_code(_SHIM_SOURCE[shim]) + [""]
    source_map = []
    for section in sections:
        code = _body_lines(section.source)
        if not code:
            continue
        lines.append(f"{INDENT}# cell {section.cell_index + 1} ({section.label})")
        source_map.append(
            {
                "cell": section.cell_index,
                "cell_id": section.cell_id,
                "label": section.label,
                "first_line": len(lines) + 1,
                "lines": len(code),
                "cell_lines": _cell_lines(section, len(code)),
            }
        )
        lines += code
        lines.append("")
    if lines[-1] == "":
        lines.pop()
    if not sections or not source_map:
        lines.append(f"{INDENT}pass")
    if "report" in shims:  # report()'s progress to Kubeflow Trainer (trainer_status.py)
        lines += ["", "", _trainer_status()]  # one block, built once a process
    lines += ["", "", *error_hook(notebook_name, source_map), "", "", _keep_source()]
    lines += ["", "", _leave_source()]
    keep = (resultsave.FOLDER, resultsave.MAX_BYTES, resultsave.MAX_BYTES_ENV)
    call = f"{function_name}(**(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {{}}))"
    lines += [
        "",
        "",
        'if __name__ == "__main__":',
        f"{INDENT}import json",
        f"{INDENT}import sys",
        "",
        f"{INDENT}try:",
        f"{INDENT * 2}_kale_ext_keep({call}, {', '.join(map(repr, keep))})",
        f"{INDENT}except SystemExit as stop:",
        f"{INDENT * 2}_kale_ext_exit(stop)",
        f"{INDENT * 2}raise",
        f"{INDENT}_kale_ext_leave()",
        "",
    ]
    return "\n".join(lines), source_map


@functools.cache
def _trainer_status() -> str:
    """report()'s poster of progress to Kubeflow Trainer (kale_ext/trainer_status.py), with
    kale_ext/progress.py's source: both standard library only, at the module's level."""
    return trainer_status.embedded("_kale_ext_status").rstrip("\n")


@functools.cache
def _checkpoint_source() -> str:
    """kale_ext/checkpoint.py's in-job code, copied verbatim (standard library only)."""
    return inspect.getsource(checkpoint._kale_ext_checkpoint).rstrip("\n")


def _cell_lines(section: Section, count: int) -> list[int] | None:
    if section.cell_lines is None:
        return None
    lines = list(section.cell_lines[:count])
    return None if not lines or lines == list(range(1, count + 1)) else lines


@functools.cache
def _hook_source() -> str:
    return inspect.getsource(excepthook._kale_ext_errors).rstrip("\n")


@functools.cache
def _leave_source() -> str:
    """How a rank ends once the function returned (compile/leave.py), copied verbatim."""
    return inspect.getsource(leave._kale_ext_leave).rstrip("\n")


@functools.cache
def _keep_source() -> str:
    """What saves rank 0's return value (compile/resultsave.py), copied verbatim."""
    return inspect.getsource(resultsave._kale_ext_keep).rstrip("\n")


def error_hook(notebook_name: str, source_map: list[dict]) -> list[str]:
    """Module-level lines that install the excepthook (compile/excepthook.py) with this
    module's line map, one cell a line: (first line, line count, cell index, cell id, label,
    the cell's line of each module line or None when they count alike). The hook's own source
    is one item (its lines, built once a process)."""
    cells = [
        (s["first_line"], s["lines"], s["cell"], s["cell_id"], s["label"], s["cell_lines"])
        for s in source_map
    ]
    return [
        _hook_source(),
        "",
        "",
        f"_kale_ext_exit = _kale_ext_errors(globals(), {notebook_name!r}, (",
        *(f"{INDENT}{(*c[:5], tuple(c[5]) if c[5] else None)!r}," for c in cells),
        "))",
        "del _kale_ext_errors",
    ]
