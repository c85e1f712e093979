"""`jupyter nbconvert --to trainjob`, as a real subprocess."""

import shutil
import subprocess
import sys

import yaml

from tests.conftest import EXAMPLES, notebook
from tests.harness.crd import validate_trainjob


def nbconvert(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "trainjob", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def test_exports_the_module_and_the_trainjob_by_default(tmp_path):
    """What the README says: the same files as `kale-ext compile --trainjob`."""
    shutil.copy(EXAMPLES / "digits_ddp.ipynb", tmp_path)
    out = nbconvert("digits_ddp.ipynb", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    source = (tmp_path / "digits_ddp.py").read_text()
    assert source.startswith("# Compiled by kale_ext") and "def digits_ddp(*, lr=0.05" in source
    obj = yaml.safe_load((tmp_path / "digits_ddp.trainjob.yaml").read_text())
    validate_trainjob(obj)
    assert obj["metadata"]["annotations"]["kale-ext.io/function"] == "digits_ddp"


def test_module_only_when_asked(tmp_path):
    shutil.copy(EXAMPLES / "plain_python.ipynb", tmp_path)
    out = nbconvert("plain_python.ipynb", "--TrainJobExporter.trainjob=False", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain_python.ipynb", "plain_python.py"]


def test_a_compile_error_fails_with_cell_and_line(write_nb, tmp_path):
    path = write_nb(notebook("x = 1", "print(y)"), "broken.ipynb")
    out = nbconvert(path, cwd=tmp_path)
    assert out.returncode != 0
    assert "cell 2, line 1: name `y` used in cell 2, line 1 is never defined" in out.stderr
    assert not (path.parent / "broken.py").exists()
