import importlib.util
import inspect
import os
import subprocess
import sys

import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.errors import CompileError
from tests.conftest import notebook


def load(job, tmp_path):
    path = write_module(job, tmp_path)
    spec = importlib.util.spec_from_file_location(job.function_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, job.function_name), path


def run(job, tmp_path, *args) -> str:
    path = write_module(job, tmp_path)
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_body_order_and_markers(tmp_path):
    job = compile_notebook(
        notebook(
            ("md", "# title"),
            "print('train', helper(), np_name)",
            ("def helper():\n    return 42", ["functions"]),
            ("import os\nnp_name = os.name", ["imports"]),
            ("x = 'left out'", ["skip"]),
        )
    )
    src = job.source
    assert (
        src.index("# cell 4 (imports)") < src.index("# cell 3 (functions)") < src.index("# cell 2")
    )
    assert "left out" not in src
    assert run(job, tmp_path).startswith("train 42 ")


def test_parameters_become_keyword_defaults_and_can_be_overridden(tmp_path):
    job = compile_notebook(
        notebook(
            ("lr = 0.1\nlayers: list = [1, 2]\n'''doc'''\nname = None", ["parameters"]),
            "print(lr, layers, name)",
        )  # fmt: skip
    )
    assert job.parameters == {"lr": 0.1, "layers": [1, 2], "name": None}
    fn, _ = load(job, tmp_path)
    assert str(inspect.signature(fn)) == "(*, lr=0.1, layers=[1, 2], name=None)"
    assert run(job, tmp_path).strip() == "0.1 [1, 2] None"
    assert run(job, tmp_path, '{"lr": 0.5}').strip() == "0.5 [1, 2] None"


def test_module_is_importable_and_getsource_works(tmp_path):
    job = compile_notebook(notebook("x = 1"), function_name="train")
    fn, path = load(job, tmp_path)
    assert fn.__name__ == "train"
    assert inspect.getsource(fn).startswith("def train():")
    assert path.name == "train.py"


def test_future_imports_move_to_the_module_top(tmp_path):
    job = compile_notebook(
        notebook(
            ("from __future__ import annotations\nimport json", ["imports"]),
            "def f(x: Later) -> Later:\n    return x\nprint(f.__annotations__)",
        )  # fmt: skip
    )
    assert job.source.index("from __future__ import annotations") < job.source.index("def ")
    assert run(job, tmp_path).strip() == "{'x': 'Later', 'return': 'Later'}"


def test_output_is_deterministic():
    nb = notebook(("import json", ["imports"]), ("a = 1", ["parameters"]), "print(json.dumps(a))")
    assert compile_notebook(nb).source == compile_notebook(nb).source


def test_global_in_helper_reaches_the_function_scope(tmp_path):
    job = compile_notebook(
        notebook(
            ("count = 0\ndef bump():\n    global count\n    count += 1", ["functions"]),
            "bump(); bump()\nprint(count)",
        )
    )
    assert "nonlocal count" in job.source
    assert run(job, tmp_path).strip() == "2"


def test_kale_settings_are_collected():
    job = compile_notebook(
        notebook(
            ("x = 1", ["step:a", "limit:nvidia.com/gpu:1", "annotation:team:ml"]),
            ("print(x)", ["step:b", "image:python:3.11"]),
        )  # fmt: skip
    )
    assert job.settings == {
        "limits": {"nvidia.com/gpu": "1"},
        "annotations": {"team": "ml"},
        "image": "python:3.11",
    }


# ----- bad input: each gives a clear message and changes nothing -------------------------------


@pytest.mark.parametrize(
    "cells, message",
    [
        (("x = (1,\n",), "cell 1, line 1: syntax error"),
        (("x = 1", "\n\nfor i in range(3) print(i)"), "cell 2, line 3: syntax error"),
        ((("lr = compute()", ["parameters"]), "print(lr)"), "parameter `lr` must be a literal"),
        ((("lr = 1\nif lr: pass", ["parameters"]), "print(lr)"), "only assignments"),
        ((("a, b = 1, 2", ["parameters"]), "print(a)"), "one parameter per line"),
        ((("s = {1, 2}", ["parameters"]), "print(s)"), "has a set value"),
        (
            (("lr = 1", ["parameters"]), ("lr = 2", ["parameters"]), "print(lr)"),
            "cell 2, line 1: parameter `lr` is defined twice: here and in cell 1, line 1",
        ),
        ((("x = 1", ["skip"]),), "no training cells"),
        ((), "no training cells"),
        ((("c = 1", ["distributed"]), ("c = 2", ["distributed"]), "x = 1"), "only one cell"),
    ],
)
def test_bad_notebooks(write_nb, cells, message):
    path = write_nb(notebook(*cells))
    before = path.read_bytes()
    with pytest.raises(CompileError) as info:
        compile_notebook(path)
    assert message in str(info.value)
    assert path.read_bytes() == before


def test_bad_function_name():
    with pytest.raises(CompileError, match="not a valid Python identifier"):
        compile_notebook(notebook("x = 1"), function_name="my-train")


def test_ten_thousand_cells_compile(tmp_path):
    cells = [("import math", ["imports"]), ("n = 3", ["parameters"])]
    cells += [f"v{i} = math.sqrt({i}) + n" for i in range(10_000)]
    job = compile_notebook(notebook(*cells))
    assert job.source.count("# cell ") == 10_001
    assert "v9999 = math.sqrt(9999) + n" in job.source


def test_the_function_alone_keeps_its_checkpoints_as_the_kubeflow_sdk_ships_it(tmp_path):
    """The Kubeflow SDK's CustomTrainer runs the function's source alone (inspect.getsource),
    not the module: what `checkpoint` needs is in the function."""
    cell = (
        "state = checkpoint.latest()\n"
        "start = 0 if state is None else state['step']\n"
        "checkpoint.save({'step': start + 1}, step=start + 1)\n"
        "print('from', start)"
    )
    job = compile_notebook(notebook(("from kale_ext import checkpoint", ["imports"]), cell))
    fn, _ = load(job, tmp_path)
    script = inspect.getsource(fn) + f"\n{fn.__name__}()\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KALE_EXT_")}
    env.update(KALE_EXT_CHECKPOINT_DIR=str(tmp_path / "ckpt"), PYTHONPATH="")
    outs = []
    for run_name in ("first", "second"):  # a job, then another of its lineage
        env["KALE_EXT_CHECKPOINT_RUN"] = run_name
        done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.splitlines()[-1])
    assert outs == ["from 0", "from 1"]
