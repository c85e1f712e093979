"""Errors point at notebook cells: the excepthook every compiled module installs when imported
(kale_ext/compile/excepthook.py), run as the job runs it, in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kale_ext.compile import excepthook
from kale_ext.compile.compiler import compile_notebook, write_module
from tests.conftest import notebook


def run_job(nb: dict, tmp_path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Compile ``nb`` and run its module as a script, as a node without torchrun would."""
    module = write_module(compile_notebook(nb), tmp_path)
    return subprocess.run(
        [sys.executable, str(module)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


HELPER = ("def label_of(row):\n    return row['label']\n", ["functions"])


@pytest.mark.parametrize(
    ("cells", "headline", "frames"),
    [
        (
            ["x = 1", "row = {}\nprint(row['label'])"],
            """cell 2 ("training"), line 2: KeyError: 'label'""",
            ['File "notebook.ipynb", cell 2 ("training"), line 2, in notebook'],
        ),
        (
            [HELPER, "rows = [{'label': 1}, {}]\nfor row in rows:\n    label_of(row)"],
            """cell 1 ("functions"), line 2: KeyError: 'label'""",
            [
                'File "notebook.ipynb", cell 2 ("training"), line 3, in notebook',
                'File "notebook.ipynb", cell 1 ("functions"), line 2, in label_of',
            ],
        ),
        (  # the magic line is dropped from the module: the cell's own line numbers still count
            ["%matplotlib inline\n\nimport json\njson.loads('{')"],
            """cell 1 ("training"), line 4: json.decoder.JSONDecodeError: Expecting""",
            ['File "notebook.ipynb", cell 1 ("training"), line 4, in notebook'],
        ),
    ],
    ids=["body", "helper", "magic"],
)
def test_an_error_names_its_cell_and_line(tmp_path, cells, headline, frames):
    out = run_job(notebook(*cells), tmp_path)
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert lines[0].startswith(headline), out.stderr
    assert lines[1] == "Traceback (most recent call last):"
    shown = [line.strip() for line in lines if line.startswith("  File ")]
    assert [f for f in shown if "notebook.ipynb" in f] == frames
    assert not any(".py" in f and "json" not in f for f in shown), out.stderr  # no module path
    assert out.stderr.count(headline.split(": ", 1)[1]) == 2  # headline and the last line, once


def test_library_frames_stay_as_they_are(tmp_path):
    out = run_job(notebook("import json\njson.loads('{')"), tmp_path)
    shown = [line.strip() for line in out.stderr.splitlines() if line.startswith("  File ")]
    assert shown[0] == 'File "notebook.ipynb", cell 1 ("training"), line 2, in notebook'
    assert shown[1].startswith('File "') and "json" in shown[1] and "decoder.py" in shown[-1]
    assert "json.loads('{')" in out.stderr  # the cell's source line is shown


def test_a_chained_error_keeps_both_parts(tmp_path):
    cell = "try:\n    {}['a']\nexcept KeyError as e:\n    raise ValueError('no a') from e"
    out = run_job(notebook(cell), tmp_path)
    assert out.stderr.splitlines()[0] == 'cell 1 ("training"), line 4: ValueError: no a'
    assert 'cell 1 ("training"), line 2, in notebook' in out.stderr
    assert "direct cause" in out.stderr


def test_a_non_zero_exit_names_its_cell_and_line_too(tmp_path):
    error_file = tmp_path / "error.json"
    env = {"TORCHELASTIC_ERROR_FILE": str(error_file)}
    out = run_job(notebook("import sys\nprint('bye')\nsys.exit(3)"), tmp_path, env)
    said = 'cell 1 ("training"), line 3: SystemExit: 3'
    assert (out.returncode, out.stdout, out.stderr) == (3, "bye\n", said + "\n")
    assert json.loads(error_file.read_text())["kale_ext"]["headline"] == said


@pytest.mark.parametrize("cell", ["import sys\nsys.exit(0)", "import sys\nsys.exit()", "x = 1"])
def test_a_job_that_ends_well_prints_nothing(tmp_path, cell):
    out = run_job(notebook(cell), tmp_path, {"TORCHELASTIC_ERROR_FILE": str(tmp_path / "e")})
    assert (out.returncode, out.stderr) == (0, "")
    assert not (tmp_path / "e").exists()


def test_a_rank_mpirun_started_records_open_mpis_rank(tmp_path):
    """On an MPI runtime no torchrun sets RANK: the rank is Open MPI's."""
    error_file = tmp_path / "error.json"
    env = {"TORCHELASTIC_ERROR_FILE": str(error_file), "OMPI_COMM_WORLD_RANK": "3",
           "OMPI_COMM_WORLD_LOCAL_RANK": "1"}  # fmt: skip
    out = run_job(notebook("raise ValueError('no')"), tmp_path, env)
    assert out.returncode == 1
    record = json.loads(error_file.read_text())[excepthook.RECORD_KEY]
    assert (record["rank"], record["local_rank"]) == (3, 1)


def test_the_error_file_is_torchs_record_with_the_cell(tmp_path):
    """torchrun reads the file the way torch.distributed.elastic's ProcessFailure does."""
    error_file = tmp_path / "error.json"
    env = {"TORCHELASTIC_ERROR_FILE": str(error_file), "RANK": "3", "GROUP_RANK": "1"}
    out = run_job(notebook(("x = 1", ["imports"]), "y = {}\ny['label']"), tmp_path, env)
    assert out.returncode == 1
    data = json.loads(error_file.read_text())
    assert data[excepthook.RECORD_KEY] | {"time": 0} == {
        "headline": """cell 2 ("training"), line 2: KeyError: 'label'""",
        "exception": "KeyError: 'label'",
        "cell_index": 1,
        "cell_id": "c1",
        "label": "training",
        "line": 2,
        "rank": 3,
        "local_rank": 0,
        "node": 1,
        "time": 0,
    }
    pytest.importorskip("torch", reason="torch's own reader of the file")
    from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

    failure = ProcessFailure(local_rank=0, pid=1, exitcode=1, error_file=str(error_file))
    assert failure.message["message"] == data["kale_ext"]["headline"]
    assert failure.message["extraInfo"]["py_callstack"] == out.stderr


def test_importing_the_module_changes_no_other_error(tmp_path):
    """The hook handles errors that pass through the module; others go to the hook before it."""
    write_module(compile_notebook(notebook("x = 1")), tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", "import notebook; raise KeyError('elsewhere')"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert out.stderr.splitlines()[0] == "Traceback (most recent call last):"
    assert out.stderr.splitlines()[-1] == "KeyError: 'elsewhere'"


def test_the_embedded_source_uses_the_names_readers_expect():
    """The function is copied into each module: its literals must match these constants."""
    import inspect

    source = inspect.getsource(excepthook._kale_ext_errors)
    assert f'"{excepthook.RECORD_KEY}"' in source and f'"{excepthook.TERMINATION_LOG}"' in source


def test_under_torchrun_a_rank_writes_whole_lines_in_order(tmp_path):
    """torchrun --tee tails a rank's stdout and stderr files apart and prefixes each line it reads:
    the module writes both into one file, a whole line at a time (an unbuffered print(a, b)
    would be written, and read, in pieces)."""
    cell = (
        "import sys\nprint('out', 1)\nprint('err', 2, file=sys.stderr)\n"
        "print('buffered by lines:', sys.stdout.line_buffering and not sys.stdout.write_through)"
    )
    module = write_module(compile_notebook(notebook(cell)), tmp_path)
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    env = {**os.environ, "TORCHELASTIC_RUN_ID": "test", "PYTHONUNBUFFERED": "1"}
    with out.open("w") as o, err.open("w") as e:
        subprocess.run([sys.executable, str(module)], stdout=o, stderr=e, env=env, timeout=60,
                       cwd=tmp_path, check=True)  # fmt: skip
    assert out.read_text() == "out 1\nerr 2\nbuffered by lines: True\n"
    assert err.read_text() == ""
