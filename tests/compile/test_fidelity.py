"""Fidelity: the compiled function prints what the notebook prints.

For every notebook of the corpus (the examples and tests/notebooks), two real runs are compared:
the notebook's non-skipped cells executed top to bottom by nbclient in a real kernel, and the
compiled module run as a script with default parameters. Printed output (stdout and the
text of display() calls) must be identical. Cells that compile to no code (install lines,
display-only magics) are left out of the comparison: their output is IPython's, not the job's.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.compile.notebook import Role, parse_notebook, plan_cell
from tests.conftest import EXAMPLES

#: A Kubeflow SDK notebook run top to bottom submits itself to a cluster: its job is proven the
#: SDK's own by test_sdk_parity.py and run locally by test_sdkcall.py instead.
SDK_NOTEBOOKS = {"sdk_digits.ipynb", "sdk_mpi.ipynb"}
CORPUS = [p for p in sorted(EXAMPLES.glob("*.ipynb")) if p.name not in SDK_NOTEBOOKS] + sorted(
    (Path(__file__).parents[1] / "notebooks").glob("*.ipynb")
)


def notebook_output(path: Path, workdir: Path, cells_with_code: set[int]) -> str:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    plans = [plan_cell(c) for c in parse_notebook(path.read_bytes(), path.name).cells]
    keep = [i for i, p in enumerate(plans) if p.role not in (None, Role.SKIP, Role.DISTRIBUTED)]
    nb.cells = [nb.cells[i] for i in keep]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    ).execute()
    text = []
    for index, cell in zip(keep, nb.cells, strict=True):
        if index not in cells_with_code:
            continue
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                text.append(out.text)
            elif out.output_type == "display_data" and "text/plain" in out.data:
                text.append(out.data["text/plain"] + "\n")
            elif out.output_type == "error":
                pytest.fail(f"the notebook itself fails in cell {index + 1}: {out.ename}")
    return "".join(text)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_compiled_function_prints_what_the_notebook_prints(path, tmp_path):
    job = compile_notebook(path)
    module = write_module(job, tmp_path / "job")
    run_dir = tmp_path / "script"
    nb_dir = tmp_path / "notebook"
    run_dir.mkdir()
    nb_dir.mkdir()
    result = subprocess.run(
        [sys.executable, str(module)], capture_output=True, text=True, cwd=run_dir, timeout=300
    )
    assert result.returncode == 0, result.stderr
    expected = notebook_output(path, nb_dir, {s["cell"] for s in job.source_map})
    assert expected.strip(), "the corpus notebook prints nothing: the comparison would be empty"
    assert result.stdout == expected
    shutil.rmtree(tmp_path)
