import os
import stat
import subprocess
import sys

import pytest

from kale_ext.files import umask, write_atomic
from tests.conftest import notebook


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_get_the_users_umask(tmp_path, mask, expected):
    old = os.umask(mask)
    try:
        assert umask() == mask
        write_atomic(tmp_path / "a" / "out.txt", "x")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a" / "out.txt") == expected
    assert (tmp_path / "a" / "out.txt").read_text() == "x"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["out.txt"]  # no temporary left


def test_compiled_module_and_trainjob_get_the_users_umask(write_nb, tmp_path):
    """`kale-ext compile --trainjob` as a user with umask 022 runs it: both files 0644."""
    path = write_nb(notebook("print(1)"))
    out = subprocess.run(
        [sys.executable, "-m", "kale_ext.cli", "compile", str(path), "-o", str(tmp_path / "b")]
        + ["--trainjob"],
        capture_output=True,
        text=True,
        umask=0o022,
    )
    assert out.returncode == 0, out.stderr
    written = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert "trainjob.yaml" in written and any(n.endswith(".py") for n in written)
    assert {n: mode(tmp_path / "b" / n) for n in written} == {n: 0o644 for n in written}
