from dataclasses import dataclass, field

import pytest

from kale_ext.compile.notebook import Cell
from kale_ext.compile.transform import transform_cell


@dataclass
class Case:
    name: str
    source: str
    expected: str | None = None  # plain Python, or None when an error is expected
    packages: list[str] = field(default_factory=list)
    error: str = ""
    error_line: int | None = None
    index_urls: list[str] = field(default_factory=list)


CASES = [
    Case("plain python untouched", "x = 1\nprint(x % 2)\n", "x = 1\nprint(x % 2)\n"),
    Case("display magics removed", "%matplotlib inline\n%load_ext autoreload\nx = 1\n", "x = 1\n"),
    Case(
        "pip magic becomes packages",
        "%pip install -q torch==2.13.0 'numpy>=2'\nx = 1\n",
        "x = 1\n",
        ["torch==2.13.0", "numpy>=2"],
    ),
    Case(
        "shell pip with continuation",
        "!pip install -U pandas \\\n    scikit-learn\ny = 2\n",
        "y = 2\n",
        ["pandas", "scikit-learn"],
    ),
    Case(
        "python -m pip and index urls",
        "!python -m pip install --index-url https://example.org/simple foo\n",
        "",
        ["foo"],
        index_urls=["https://example.org/simple"],
    ),
    Case(
        "nested pip keeps a pass",
        "if True:\n    !pip install foo\n",
        "if True:\n    pass\n",
        ["foo"],
    ),
    Case("%%time keeps its code", "%%time\nx = 1\nprint(x)\n", "x = 1\nprint(x)\n"),
    Case("%%capture keeps its code", "%%capture out\nprint(1)\n", "print(1)\n"),
    Case("%time keeps its statement", "%time y = f(3)\n", "y = f(3)\n"),
    Case("%timeit drops its options", "%timeit -n 3 -r 1 f(3)\n", "f(3)\n"),
    Case("help is display only", "len?\nx = 1\n", "x = 1\n"),
    Case(
        "%env is translated",
        "%env MY_FLAG=1\n",
        "__import__('os').environ['MY_FLAG'] = '1'; print('env: MY_FLAG=1')"
        "  # %env, as IPython does it\n",
    ),
    Case(
        "%%writefile is translated",
        "%%writefile conf.yaml\na: $HOME\n",
        "with open('conf.yaml', 'w', encoding='utf-8') as _kale_file:  # %%writefile\n"
        "    _kale_file.write('a: $HOME\\n')\n",
    ),
    Case("indented cell is dedented like IPython does", "  x = 1\n  y = 2\n", "x = 1\ny = 2\n"),
    Case("shell command is an error", "x = 1\n!ls -la\n", error="`!ls`", error_line=2),
    Case("%%bash is an error", "%%bash\necho hi\n", error="`%%bash`", error_line=1),
    Case("%cd is an error", "x = 1\n\n%cd /tmp\n", error="`%cd`", error_line=3),
    Case("captured shell output is an error", "files = !ls\n", error="cannot", error_line=1),
    Case("pip -r is an error", "%pip install -r requirements.txt\n", error="-r", error_line=1),
    Case("pip with variables is an error", "!pip install $pkg\n", error="expands variables"),
    Case("invalid requirement", "%pip install 'numpy>>2'\n", error="invalid package"),
    Case(
        "line after a continued magic keeps its line number",
        "!pip install a \\\n  b\n!ls\n",
        error="`!ls`",
        error_line=3,
    ),
    Case(
        "magic inside %%time body located",
        "%%time\nx = 1\n!rm -rf x\n",
        error="`!rm`",
        error_line=3,
    ),
    Case(
        "syntax error after magic located",
        "%matplotlib inline\nx = (\n",
        error="syntax error",
        error_line=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_transform(case: Case):
    diags = []
    code = transform_cell(Cell(4, "code", case.source, (), "abc"), diags)
    if case.error:
        assert code is None
        [d] = diags
        assert d.severity == "error" and case.error in d.message, d.message
        assert d.cell == 4 and d.cell_id == "abc"
        if case.error_line:
            assert d.line == case.error_line
        return
    assert diags == []
    assert code.source == case.expected
    assert code.packages == case.packages
    assert code.index_urls == case.index_urls


def test_line_map_follows_removed_and_joined_lines():
    code = transform_cell(Cell(0, "code", "%%time\n!pip install a \\\n  b\nx = 1\ny = 2\n"), [])
    assert code.source == "x = 1\ny = 2\n"
    assert [code.cell_line(1), code.cell_line(2)] == [4, 5]


def test_kale_ext_magics_are_not_job_code():
    code = transform_cell(
        Cell(0, "code", "%load_ext kale_ext\n%kale_jobs\nx = 1\n%kale_logs job-a -f\n"), []
    )
    assert code.source == "x = 1\n"
    trainjob = transform_cell(Cell(1, "code", "%%trainjob --nodes 2\nprint('its own job')\n"), [])
    assert trainjob.source == ""
