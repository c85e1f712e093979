"""The compiled output stays byte for byte what it was: the example notebooks, the 105-cell
notebook benchmarks/server.py compiles (golden/bench105.ipynb) and a notebook of tricky cells
(magics, `global`, star and `__future__` imports, multi-line strings, tabs, CRLF, report()),
each compiled and compared with its golden files, as are the errors of a notebook full of them
(each naming its cell and line). The goldens were written by the compiler before its work was
cut (issue 28); a change to what the compiler writes must change them on purpose:

    python -m tests.compile.test_golden --write

Compared: the module's source (kale_ext's version in its first line written as VERSION) and
everything else CompiledJob.to_dict() holds but the source's digest, the packages by name
(their pins are this machine's installed versions).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kale_ext import __version__
from kale_ext.compile.compiler import compile_notebook
from kale_ext.compile.kept import forget_cells
from kale_ext.compile.notebook import parse_notebook
from kale_ext.compile.packages import requirement_name
from kale_ext.errors import CompileError
from tests.conftest import EXAMPLES, notebook

GOLDEN = Path(__file__).resolve().parent / "golden"

TRICKY = notebook(
    ("%pip install -q 'numpy>=1.20'\nimport math, json\nfrom os.path import *", ["imports"]),
    ("lr = 0.1\nsteps: int = 3\nname = 'run %d'\nflags = {'a': [1, 2]}", ["parameters"]),
    (
        "from __future__ import annotations\nfrom kale_ext import report\n\n"
        "def scaled(v: Tensor, k=2):\n\t'''Scale.\n\n\tIndented docstring: %s kept.\n\t'''\n"
        "\treturn v * k\n\n"
        "class Box:\n    size: Missing = 1\n    def grow(self):\n        global counter\n"
        "        counter += 1\n        return self.size\n",
        ["functions"],
    ),
    ("counter = 0\ntext = '''line one\n  % not a magic\n!not a shell\n'''\nprint(text)"),
    ("%%time\nfor i in range(steps):\n    counter += i\nprint(counter)  # help? no"),
    ("%matplotlib inline\n%time total = sum(range(3))\n%timeit -n 1 -r 1 scaled(2)"),
    ("%env MODE=fast\nwith_cont = 1 + \\\n    2\nreport(step=1, loss=lr * with_cont)"),
    ("%%writefile notes.txt\nsome %s text\n"),
    ("x = 5\r\ny = x % 3\r\nprint(f'{x}%{y}', display(y))\r\n"),
    ("x?\nprint(isfile(__file__) if False else name)", ["training"]),
    ("del text\nsquares = [i * i for i in range(steps)]\nprint(max(squares))"),
    ("print('left out')", ["skip"]),
    ("def later():\n    global total\n    total = 1\n    return basename('a/b')\nlater()"),
    ("s = 'a\\\nb'\nassert s == 'ab', s\nprint(s, lambda: counter)"),
    ("  indented = 1\n  print(indented)"),
    ("", ["training"]),
    ("md", "# the end"),
)

ERRORS = notebook(
    ("import math", ["imports"]),
    ("lr = 0.1\nlr = 0.2", ["parameters"]),
    "print(undefined_name, math.pi)\nprint(lrr)",
    "x = 1\n!ls -la",
    "%%bash\necho hi",
    "y = (\n",
    "return 3",
    "print(later_name)",
    "later_name = 1\nfiles = !ls",
    ("a = 1", ["imports", "skip"]),
    "from kale_ext import report as r",
    "await thing()",
    "%cd /tmp",
    "print(get_ipython())",
)


def cases() -> dict[str, object]:
    """Name → a notebook's dict (or a path)."""
    return {
        **{p.stem: p for p in sorted(EXAMPLES.glob("*.ipynb"))},
        "bench105": GOLDEN / "bench105.ipynb",
        "tricky": TRICKY,
    }


def compiled(nb) -> dict:
    """What the golden files hold for a notebook: its source apart, then the rest."""
    if isinstance(nb, Path):
        nb = parse_notebook(nb.read_bytes(), nb.name)
    job = compile_notebook(nb).to_dict()
    job.pop("kale_ext_version")
    job.pop("source_sha256")  # the source's, compared itself (its first line names the version)
    job["source"] = job["source"].replace(f"kale_ext {__version__} ", "kale_ext VERSION ", 1)
    job["packages"] = [requirement_name(p) for p in job["packages"]]
    return json.loads(json.dumps(job, default=str))  # tuples as lists, as the golden reads


def errors(nb) -> list[dict]:
    with pytest.raises(CompileError) as e:
        compile_notebook(nb)
    return [d.to_dict() for d in e.value.diagnostics]


@pytest.mark.parametrize("kept", [False, True], ids=["first", "kept"])
@pytest.mark.parametrize("name", list(cases()))
def test_output_is_unchanged(name, kept):
    """Compiled afresh and again with every cell's work kept from an earlier compile."""
    forget_cells()
    nb = cases()[name]
    if kept:
        compiled(nb)
    got = compiled(nb)
    source = got.pop("source")
    assert source == (GOLDEN / f"{name}.py.txt").read_text(encoding="utf-8")
    assert got == json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def test_errors_are_unchanged():
    forget_cells()
    got = errors(ERRORS)
    assert got == json.loads((GOLDEN / "errors.json").read_text(encoding="utf-8"))
    assert all(d["cell"] is not None for d in got)
    assert errors(ERRORS) == got  # again, every cell's work kept


def write() -> None:
    for name, nb in cases().items():
        got = compiled(nb)
        (GOLDEN / f"{name}.py.txt").write_text(got.pop("source"), encoding="utf-8")
        (GOLDEN / f"{name}.json").write_text(json.dumps(got, indent=1) + "\n", encoding="utf-8")
    (GOLDEN / "errors.json").write_text(json.dumps(errors(ERRORS), indent=1) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write()
