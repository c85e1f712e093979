"""Notebooks written for the Kubeflow SDK: a cell tagged `entrypoint` defines the job."""

import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.errors import CompileError
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from tests.compile.test_compiler import run
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob

TRAIN_FN = (
    "import json\n"
    "def train_fn(lr: float = 0.01, epochs=2):\n"
    "    '''Train.'''\n"
    "    import os\n"
    "    print(json.dumps({'lr': lr, 'epochs': epochs}), os.sep)\n"
    "    if epochs > 5:\n"
    "        return\n"
    "    print('done')\n"
)
DRIVER = (
    "from kubeflow.trainer import TrainerClient, CustomTrainer\n"
    "client = TrainerClient()\n"
    "job = client.train(trainer=CustomTrainer(func=train_fn, num_nodes=2,\n"
    "    resources_per_node={'cpu': 2, 'memory': '4Gi'}, packages_to_install=['numpy'],\n"
    "    env={'MODE': 'fast'}))\n"
)


def test_the_entrypoint_function_is_the_job(tmp_path):
    job = compile_notebook(notebook((TRAIN_FN, ["entrypoint"]), DRIVER, "scratch = 1"))
    assert job.function_name == "train_fn"
    assert job.parameters == {"lr": 0.01, "epochs": 2}
    assert run(job, tmp_path).splitlines() == ['{"lr": 0.01, "epochs": 2} /', "done"]
    assert run(job, tmp_path, '{"epochs": 9}').splitlines() == ['{"lr": 0.01, "epochs": 9} /']
    [note] = job.warnings
    assert note.cell == 1 and "drives TrainerClient" in note.message


def test_custom_trainer_literals_become_the_job_defaults():
    job = compile_notebook(notebook((TRAIN_FN, ["entrypoint"]), DRIVER))
    spec = build_job_spec(job)
    obj = trainjob_dict(spec)
    validate_trainjob(obj)
    trainer = obj["spec"]["trainer"]
    assert trainer["numNodes"] == 2
    assert trainer["resourcesPerNode"]["requests"] == {"cpu": "2", "memory": "4Gi"}
    assert trainer["env"] == [{"name": "MODE", "value": "fast"}]
    assert spec.requirements == ["numpy"]  # packages_to_install, as listed
    assert build_job_spec(job, {"nodes": 3}).nodes == 3  # explicit options still win


def test_the_function_body_is_checked_for_self_containment():
    nb = notebook(("def train_fn():\n    print(dataset)\n", ["entrypoint"]), "dataset = [1, 2]")
    with pytest.raises(CompileError) as info:
        compile_notebook(nb)
    [err] = info.value.errors
    assert "`dataset` used in cell 1, line 2 is defined only in cell 2" in err.message
    assert "not part of the job (the job is the entrypoint function in cell 1)" in err.message


@pytest.mark.parametrize(
    "cell, message",
    [
        ("def a():\n    pass\ndef b():\n    pass\n", "exactly one function"),
        ("x = 1\ndef a():\n    pass\n", "exactly one function"),
        ("@deco\ndef a():\n    pass\n", "cannot be decorated"),
        ("def a(lr=compute()):\n    pass\n", "must be a literal"),
        ("def a(*args):\n    pass\n", "*args or **kwargs"),
        ("def a(x, /, y=1):\n    pass\n", "cannot be positional-only (before `/`)"),
    ],
)
def test_bad_entrypoint_cells(cell, message):
    with pytest.raises(CompileError) as info:
        compile_notebook(notebook((cell, ["entrypoint"])))
    assert message in str(info.value) and info.value.errors[0].cell == 0


def test_one_entrypoint_only(tmp_path):
    nb = notebook(
        ("def a():\n    print(1)\n", ["entrypoint"]), ("def b():\n    pass\n", ["entrypoint"])
    )
    with pytest.raises(CompileError, match="only one cell may be tagged `entrypoint`"):
        compile_notebook(nb)
    write_module(compile_notebook(notebook(("def a():\n    print(1)\n", ["entrypoint"]))), tmp_path)


def test_cli_compiles_an_sdk_style_notebook(write_nb, tmp_path):
    from tests.cli import cli

    path = write_nb(notebook((TRAIN_FN, ["entrypoint"]), DRIVER), "sdk_style.ipynb")
    out = cli("compile", path, "-o", tmp_path / "out", "--trainjob")
    assert out.returncode == 0, out.stderr
    assert "function   train_fn(lr=0.01, epochs=2)" in out.stdout
    assert "2 nodes" in out.stdout and "drives TrainerClient" in out.stdout
    assert (tmp_path / "out" / "train_fn.py").exists() and (
        tmp_path / "out" / "trainjob.yaml"
    ).exists()


def test_the_compile_api_names_the_job_function(tmp_path):
    """compile_notebook(entrypoint=NAME): the job is that function, no tag needed; the other
    untagged cells are left out."""
    nb = notebook("def helper():\n    pass\n", "def train_fn(lr=0.5):\n    print('lr', lr)\n",
                  "print('driver')")  # fmt: skip
    job = compile_notebook(nb, entrypoint="train_fn")
    assert job.function_name == "train_fn" and job.parameters == {"lr": 0.5}
    assert run(job, tmp_path).splitlines() == ["lr 0.5"]
    with pytest.raises(CompileError, match="no cell defines the function `nope`"):
        compile_notebook(nb, entrypoint="nope")


def test_an_argument_without_a_default_is_given_by_the_job(tmp_path):
    nb = notebook(("def train_fn(model_name, lr=0.1):\n    print(model_name, lr)\n",
                   ["entrypoint"]))  # fmt: skip
    job = compile_notebook(nb)
    assert job.required_parameters == ["model_name"]
    spec = build_job_spec(job, {"parameters": {"model_name": "bert"}})
    assert spec.func_args == {"model_name": "bert"}
    assert run(job, tmp_path, '{"model_name": "bert"}').splitlines() == ["bert 0.1"]
    from kale_ext.errors import ConfigError

    with pytest.raises(ConfigError, match="--param model_name=VALUE") as info:
        build_job_spec(job)
    assert info.value.field == "parameters.model_name"


SIGNED = (
    "def train_fn(model_name: str, epochs: int = 2, *, cfg: Config | None = None, lr=0.1):\n"
    '    """Train one model.\n\n    Args: as named.\n    """\n'
    "    import inspect, json, sys\n"
    "    print(model_name, epochs, cfg, lr)\n"
    "    me = sys._getframe().f_globals[sys._getframe().f_code.co_name]  # this function\n"
    "    print(json.dumps([str(inspect.signature(me)), me.__doc__]))\n"
)


def _loaded(job, folder):
    import importlib.util

    path = write_module(job, folder)
    loaded = importlib.util.spec_from_file_location(job.function_name, path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return getattr(module, job.function_name)


def test_the_compiled_function_keeps_the_users_signature_and_docstring(tmp_path):
    import inspect

    nb = notebook("class Config:\n    pass\n", (SIGNED, ["entrypoint"]))
    job = compile_notebook(nb)
    fn = _loaded(job, tmp_path)
    written = {"__builtins__": __builtins__}
    exec("class Config: pass\n" + SIGNED.replace("train_fn", "original", 1), written)
    original = written["original"]
    assert fn.__doc__ == original.__doc__ == "Train one model.\n\n    Args: as named.\n    "
    ours, theirs = inspect.signature(fn), inspect.signature(original)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]
    # annotations as written; one naming the notebook's class is a string (PEP 563's form):
    # the module defines the function before the notebook's names exist
    assert [p.annotation for p in ours.parameters.values()] == [
        str,
        int,
        "Config | None",
        inspect.Parameter.empty,
    ]
    assert list(job.parameters) == ["model_name", "epochs", "cfg", "lr"]
    assert job.required_parameters == ["model_name"]


def test_the_summary_shows_no_default_for_a_required_parameter(write_nb, tmp_path):
    from tests.cli import cli

    path = write_nb(notebook("class Config:\n    pass\n", (SIGNED, ["entrypoint"])))
    out = cli("compile", path, "-o", tmp_path / "out")
    assert out.returncode == 0, out.stderr
    assert "function   train_fn(model_name, epochs=2, cfg=None, lr=0.1)" in out.stdout


def test_the_shipped_function_runs_with_its_arguments_by_name(tmp_path):
    """As the Kubeflow SDK ships a function: its source in the TrainJob's command, called with
    func_args by name; the signature and docstring are the user's there too."""
    import json
    import shlex
    import subprocess
    import sys

    from kale_ext.job.runtimes import Runtime
    from kale_ext.job.trainjob import training_command

    nb = notebook("class Config:\n    pass\n", (SIGNED, ["entrypoint"]))
    job = compile_notebook(nb)
    runtime = Runtime(name="xgboost-distributed", framework="xgboost")  # python, no torchrun
    spec = build_job_spec(job, {"parameters": {"model_name": "bert", "epochs": "5"}}, runtime)
    command = training_command(spec)
    assert command[0] == "python"  # the source travels packed in the command
    command[0] = sys.executable
    out = subprocess.run(["bash", "-c", shlex.join(command)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    printed, shown = out.stdout.splitlines()[-2:]
    assert printed == "bert 5 None 0.1"
    signature, doc = json.loads(shown)
    assert signature == "(model_name: str, epochs: int = 2, *, cfg: 'Config | None' = None, lr=0.1)"
    assert doc == "Train one model.\n\n    Args: as named.\n    "
