"""What a TrainJob may embed (job/embed.py): the notebook's own code is counted, and what
kale_ext adds is bounded with a message of its own. The command in pieces and a local run of a
notebook over the bound: tests/job/test_trainjob.py, tests/backends/local/test_backend.py."""

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook
from tests.job.test_trainjob import many_cells


def test_the_notebooks_own_code_is_the_lines_of_its_cells():
    from kale_ext.job.embed import own_code

    spec = build_job_spec(compile_notebook(notebook("a = 1\nb = 2", "print(a + b)")))
    assert own_code(spec) == "    a = 1\n    b = 2\n    print(a + b)"


def test_a_notebook_whose_own_code_is_too_large_is_refused_naming_its_size(monkeypatch):
    from kale_ext.job import embed, trainjob

    code = "data = " + repr(bytes(range(256)) * 64) + "\nprint(len(data))"  # 16 KiB of bytes
    spec = build_job_spec(compile_notebook(notebook(code)))
    command = trainjob.training_command(spec)
    monkeypatch.setattr(embed, "MAX_EMBEDDED_CODE", 1024)
    with pytest.raises(ConfigError) as e:
        embed.check_embeddable(spec, command)
    assert e.value.field == "source"
    assert "the notebook's code is too large to embed in a TrainJob" in str(e.value)
    assert "the limit is 1 KiB" in str(e.value) and "or run it locally" in str(e.value)


def test_too_much_of_kale_exts_own_says_so_and_how_many_cells(monkeypatch):
    from kale_ext.job import embed, trainjob

    spec = build_job_spec(compile_notebook(many_cells(2_000)))
    command = trainjob.training_command(spec)
    monkeypatch.setattr(embed, "MAX_EMBEDDED_COMMAND", 16 * 1024)
    with pytest.raises(ConfigError) as e:
        embed.check_embeddable(spec, command)
    assert "the job's command is too large to embed in a TrainJob" in str(e.value)
    assert "is kale_ext's own for 2000 cells" in str(e.value)
