"""Code generation: cells indented into one function, strings byte-exact, a module that runs as
a script (its call footer), and function names derived from notebook file names."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from kale_ext import __version__
from kale_ext.compile import excepthook, leave, resultsave
from kale_ext.compile.codegen import Section, function_name_for, indent_code, render_module
from kale_ext.compile.compiler import compile_notebook
from tests.conftest import notebook


def run(source: str, tmp_path: Path, *args: str) -> str:
    """Run a generated module as a script; its standard output."""
    path = tmp_path / "module.py"
    path.write_text(source, encoding="utf-8")
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize(
    "stem, name",
    [
        ("digits_ddp", "digits_ddp"),
        ("My Notebook", "my_notebook"),
        ("Run (copy 2)", "run_copy_2"),
        ("  train  ", "train"),
        ("2024-run", "train_2024_run"),  # an identifier cannot start with a digit
        ("---", "train"),
        ("", "train"),
        ("class", "class_"),  # a keyword is not a name
        ("import", "import_"),
        ("données", "données"),  # Python names may be non-ASCII
    ],
)
def test_function_names_from_notebook_stems(stem, name):
    assert function_name_for(stem) == name
    assert name.isidentifier()


@pytest.mark.parametrize(
    "source, lines",
    [
        ("x = 1\nprint(x)", ["    x = 1", "    print(x)"]),
        ("if x:\n\treturn 1", ["    if x:", "            return 1"]),  # a tab is 8 columns
        ("if x:\n\t  y = 2", ["    if x:", "              y = 2"]),
        ("x = 'a\tb'", ["    x = 'a\tb'"]),  # a tab inside a line is kept
        ("a = 1\n\n   \nb = 2", ["    a = 1", "", "", "    b = 2"]),  # blank lines emptied
        ('s = """a\n  b\n"""', ['    s = """a', "  b", '"""']),  # a string's lines untouched
        ("s = b'''a\n\tb'''", ["    s = b'''a", "\tb'''"]),
        ('s = f"""{x}\n{y}"""', ['    s = f"""{x}', '{y}"""']),
        ("s = 'a\\\n  b'", ["    s = 'a\\", "  b'"]),  # a backslash-continued string
        ("x = 1 + \\\n  2", ["    x = 1 + \\", "      2"]),  # a continued line of code
        (
            'def f():\n    """Doc."""\n    return 1',
            ["    def f():", '        """Doc."""', "        return 1"],
        ),
    ],
)
def test_indentation_of_tricky_sources(source, lines):
    assert indent_code(source) == lines


def test_strings_tabs_and_non_ascii_survive_exactly(tmp_path):
    cell = (
        'text = """first\n  second\n\tthird $HOME `x`"""\n'
        "def f():\n\tif True:\n\t\treturn 'é ✓ \\\\n'\n"
        "cont = 'a' \\\n    'b'\n"
        "print(repr(text), f(), cont)\n"
    )
    job = compile_notebook(notebook(cell))
    namespace = {}
    exec(compile(cell.replace("print(", "result = ("), "c", "exec"), namespace)
    assert run(job.source, tmp_path).strip() == " ".join(
        [repr(namespace["text"]), namespace["f"](), namespace["cont"]]
    )


@pytest.mark.parametrize(
    "cell",
    [
        'def f():\n    """One line."""\n    return 1\ntext = f.__doc__\n',  # no parse
        'def f():\n    """One line."""\n    return 1\ntext = """a\n  b"""\n',
        'text = \'"""\' + """\n  inside\n"""\n',  # a quoted triple quote hides one
        'text = """a""" + """\n  b\n"""\n',  # an odd count on the opening line
        "text = '''x \"\"\"\n  y'''\n",  # one kind inside the other
        'text = f"""{1}\n  {2}"""\n',
        '# a comment with """ in it\ntext = """\n  kept\n"""\n',
    ],
)
def test_multi_line_strings_are_never_reindented(cell, tmp_path):
    job = compile_notebook(notebook(cell + "print(repr(text))"))
    namespace = {}
    exec(compile(cell, "c", "exec"), namespace)
    assert run(job.source, tmp_path).strip() == repr(namespace["text"])


def test_the_module_byte_for_byte():
    source, _ = render_module(
        "train", {"lr": 0.1, "name": "a'b"}, [Section(0, "imports", "import os")], set(), "t.ipynb"
    )
    assert source == (
        f"# Compiled by kale_ext {__version__} from t.ipynb: edit the notebook, not this file.\n"
        "# Run: python train.py '{\"param\": value}'  or  torchrun --nproc_per_node=2 train.py\n"
        "\n"
        "\n"
        'def train(*, lr=0.1, name="a\'b"):\n'
        '    """Compiled from t.ipynb by kale_ext."""\n'
        "    # cell 1 (imports)\n"
        "    import os\n"
        "\n"
        "\n"
        f"{inspect.getsource(excepthook._kale_ext_errors)}"
        "\n"
        "\n"
        "_kale_ext_exit = _kale_ext_errors(globals(), 't.ipynb', (\n"
        "    (8, 1, 0, None, 'imports', None),\n"
        "))\n"
        "del _kale_ext_errors\n"
        "\n"
        "\n"
        f"{inspect.getsource(resultsave._kale_ext_keep)}"
        "\n"
        "\n"
        f"{inspect.getsource(leave._kale_ext_leave)}"
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    import json\n"
        "    import sys\n"
        "\n"
        "    try:\n"
        "        _kale_ext_keep(train(**(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})), "
        "'.kale-ext', 104857600, 'KALE_EXT_RESULT_MAX_BYTES')\n"
        "    except SystemExit as stop:\n"
        "        _kale_ext_exit(stop)\n"
        "        raise\n"
        "    _kale_ext_leave()\n"
    )


def test_the_call_footer_passes_json_arguments_as_keywords(tmp_path):
    body = Section(1, "training", "print(repr(lr), repr(tags))")
    source, _ = render_module("fit", {"lr": 0.1, "tags": ["a"]}, [body], set(), "fit.ipynb")
    assert run(source, tmp_path) == "0.1 ['a']\n"  # no argument: the defaults
    assert run(source, tmp_path, '{"lr": 1e-3, "tags": []}') == "0.001 []\n"
    imported = subprocess.run(
        [sys.executable, "-c", "import module"], capture_output=True, text=True, cwd=tmp_path
    )
    assert imported.returncode == 0 and imported.stdout == ""  # importing it runs nothing


def test_a_function_without_code_still_runs(tmp_path):
    source, source_map = render_module("empty", {}, [Section(0, "training", "\n  \n")], set(), "e")
    assert "def empty():" in source and "    pass" in source and source_map == []
    assert run(source, tmp_path) == ""


def test_the_line_map_points_at_each_cells_code():
    sections = [Section(0, "imports", "import os\n\n"), Section(3, "training", "a = 1\nb = 2")]
    source, source_map = render_module("f", {}, sections, set(), "n", future={"annotations"})
    lines = source.splitlines()
    assert lines[2] == "from __future__ import annotations"  # before any code
    assert [(m["cell"], m["first_line"], m["lines"]) for m in source_map] == [
        (0, 9, 1),  # trailing blank lines dropped
        (3, 12, 2),
    ]
    assert lines[7:13] == [
        "    # cell 1 (imports)",
        "    import os",
        "",
        "    # cell 4 (training)",
        "    a = 1",
        "    b = 2",
    ]


def test_a_string_holding_a_line_separator_stays_one_string():
    """str.splitlines would cut at U+2028, a form feed or \\x1c inside a literal."""
    from kale_ext.compile.compiler import compile_notebook
    from tests.conftest import notebook

    for char in ("\u2028", "\x0c", "\x1c", "\x85"):
        job = compile_notebook(notebook(f"s = 'a{char}b'\nprint(len(s))"))
        namespace: dict = {}
        exec(compile(job.source, job.module_filename, "exec"), namespace)  # it compiles
        assert f"'a{char}b'" in job.source


def test_checkpoints_travel_with_the_module_and_need_no_kale_ext(tmp_path):
    """`from kale_ext import checkpoint` becomes the module's own code: a run where kale_ext
    cannot be imported saves, and the next run of the lineage resumes from it."""
    job = compile_notebook(
        notebook(
            "from kale_ext import checkpoint\nstate = checkpoint.latest()\n"
            "start = state['step'] + 1 if state else 0\nprint('start', start)\n"
            "checkpoint.save({'step': start}, step=start)"
        )
    )
    assert job.uses_checkpoint and "kale_ext shim: kale_ext.checkpoint" in job.source
    (tmp_path / "module.py").write_text(job.source, encoding="utf-8")
    no_kale_ext = "import runpy, sys; sys.modules['kale_ext'] = None; " + (
        "runpy.run_path('module.py', run_name='__main__')"
    )
    outs = []
    for run_id in ("first", "second"):
        env = {"PATH": "/usr/bin:/bin", "KALE_EXT_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
               "KALE_EXT_CHECKPOINT_RUN": run_id}  # fmt: skip
        out = subprocess.run([sys.executable, "-c", no_kale_ext], capture_output=True,
                             text=True, cwd=tmp_path, env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr
        outs.append([line for line in out.stdout.splitlines() if line.startswith("start")])
    assert outs == [["start 0"], ["start 1"]]
