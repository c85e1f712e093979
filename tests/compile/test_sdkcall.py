"""A Kubeflow SDK notebook's own train() call is the job: the function it names, the settings it
gives (with their cell and line), one error for what cannot be read, the call chosen among
several. (Its TrainJob equals the SDK's own: test_sdk_parity.py.)"""

from __future__ import annotations

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import CompileError, ConfigError
from kale_ext.job.preview import provenance, render
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from tests.compile import sdk_notebooks as nbs
from tests.compile.test_compiler import run
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob


def test_the_train_call_names_the_job_and_its_settings(tmp_path):
    job = compile_notebook(notebook(*nbs.TORCH))
    assert job.function_name == "train_torch" and job.entrypoint
    assert job.parameters == {"model_name": None, "epochs": 2}
    assert job.required_parameters == ["model_name"]
    spec = build_job_spec(job)
    assert spec.runtime.name == "torch-distributed" and spec.nodes == 2
    assert spec.func_args == {"model_name": "resnet-2", "epochs": 3}
    assert spec.config.requests == {"cpu": "2", "memory": "8Gi"}
    assert [(e.name, e.value) for e in spec.config.env] == [("TP_SIZE", "2")]
    # the train() call's list, as listed: the function's imports (torch) add nothing
    assert spec.requirements == ["numpy<3"]
    [numpy] = spec.packages
    assert (numpy.source, numpy.cell, numpy.line, numpy.check) == ("sdk", 4, 9, "pip")
    assert spec.pip_index_urls == [
        "https://pypi.org/simple",
        "https://download.pytorch.org/whl/cpu",
    ]
    validate_trainjob(trainjob_dict(spec))
    # the client's cells are left out: the job runs only the function (no SDK in it)
    assert "TrainerClient" not in job.source and "list_runtimes" not in job.source
    assert run(compile_notebook(notebook(*nbs.XGBOOST)), tmp_path) == "xgboost worker None\n"


def test_each_setting_says_where_it_was_read():
    job = compile_notebook(notebook(*nbs.TORCH))
    where = {p["setting"]: (p["cell"] + 1, p["line"]) for p in job.provenance}
    assert where == {"function": (3, 1), "runtime": (5, 2), "func_args": (5, 5),
                     "nodes": (5, 6), "resources": (5, 7), "env": (5, 8), "packages": (5, 9),
                     "pip_index_urls": (5, 10)}  # fmt: skip
    spec = build_job_spec(job, {"nodes": 4, "parameters": {"epochs": 9}})
    shown = {p["setting"]: p["overridden_by"] for p in provenance(job, spec.options)}
    assert shown["nodes"] == ["nodes"] and shown["func_args"] == ["parameters"]
    assert shown["runtime"] == [] and spec.nodes == 4
    lines = render(spec).summary()
    assert "notebook   nodes 2 (cell 5, line 6); overridden by nodes" in lines


def test_runtime_objects_initializers_and_patches_become_the_jobs():
    cache = build_job_spec(compile_notebook(notebook(*nbs.DATA_CACHE)))
    assert cache.runtime.name == "torch-distributed-with-cache"
    tj = trainjob_dict(cache)
    assert tj["spec"]["initializer"]["dataset"]["storageUri"] == "cache://shop/sales"
    over = trainjob_dict(
        build_job_spec(
            compile_notebook(notebook(*nbs.DATA_CACHE)), {"dataset_uri": "cache://shop/returns"}
        )
    )
    dataset = over["spec"]["initializer"]["dataset"]
    assert dataset["storageUri"] == "cache://shop/returns" and dataset["env"]  # the rest stays
    patched = trainjob_dict(build_job_spec(compile_notebook(notebook(*nbs.RUNTIME_PATCH))))
    validate_trainjob(patched)
    managers = [p["manager"] for p in patched["spec"]["runtimePatches"]]
    assert managers == ["trainer.kubeflow.org/kubeflow-sdk", "kale-ext.io/jupyterlab"]
    assert patched["metadata"]["labels"]["team"] == "vision"
    assert patched["spec"]["trainer"]["image"] == "python:3.11-slim"
    assert patched["spec"]["activeDeadlineSeconds"] == 3600  # ActiveDeadlineSeconds(3600)
    ttl = {"config": {"run_policy": {"ttl_seconds_after_finished": 60}}}
    both = trainjob_dict(build_job_spec(compile_notebook(notebook(*nbs.RUNTIME_PATCH)), ttl))
    assert both["spec"]["activeDeadlineSeconds"] == 3600  # the user's TTL keeps the deadline
    assert both["metadata"]["annotations"]["kale-ext.io/ttl-seconds-after-finished"] == "60"


def test_several_train_calls_the_last_unless_chosen():
    last = compile_notebook(notebook(*nbs.TWO_CALLS))
    assert last.settings["nodes"] == 3
    [note] = [w for w in last.warnings if w.code == "train-calls"]
    assert "the job is call 2 (the last; choose another with --train-call N)" in note.message
    first = compile_notebook(notebook(*nbs.TWO_CALLS), train_call=1)
    assert first.settings["nodes"] == 1 and first.settings["func_args"] == {"lr": 1.0}
    with pytest.raises(CompileError, match=r"train_call 3: the notebook's train\(\) calls are 1"):
        compile_notebook(notebook(*nbs.TWO_CALLS), train_call=3)


@pytest.mark.parametrize(
    "cells, cell, line, said",
    [
        (nbs.MISSING_NAME, 2, 3, "CustomTrainer(env=...): BUCKET_NAME is never defined"),
        (
            nbs.BUILTIN,
            1,
            3,
            "BuiltinTrainer (the runtime's own TorchTune post-training) is not "
            "something kale_ext runs: kale_ext runs a training function you write",
        ),  # fmt: skip
        (
            nbs.BUILTIN_STAR,
            1,
            5,
            "BuiltinTrainer (the runtime's own TorchTune post-training) is not "
            "something kale_ext runs: kale_ext runs a training function you write",
        ),  # fmt: skip
        (
            [
                nbs.IMPORTS,
                nbs.PATCH_FN,
                "import json\nsettings = json.load(open('s.json'))\n",
                "TrainerClient().train(trainer=CustomTrainer(func=train_patched,\n"
                "    num_nodes=settings['nodes']))",
            ],
            3,
            2,
            "`settings` (cell 3, line 2): `json.load(open('s.json'))` is computed",
        ),  # fmt: skip
        (
            [
                nbs.IMPORTS,
                "def make_fn():\n    return print\n",
                "TrainerClient().train(trainer=CustomTrainer(func=make_fn()))",
            ],
            2,
            1,
            "`make_fn()` is computed when the notebook runs",
        ),  # fmt: skip
        (
            [
                nbs.IMPORTS,
                nbs.PATCH_FN,
                "from kubeflow.trainer.options import TrainerCommand\n"
                "TrainerClient().train(trainer=CustomTrainer(func=train_patched),\n"
                "    options=[TrainerCommand(['python'])])",
            ],
            2,
            3,
            "TrainerCommand replaces the command that runs your function",
        ),  # fmt: skip
    ],
)
def test_what_cannot_be_read_is_one_error_at_its_cell_and_line(cells, cell, line, said):
    with pytest.raises(CompileError) as info:
        compile_notebook(notebook(*cells))
    [error] = info.value.errors
    assert (error.cell, error.line) == (cell, line) and said in error.message, error


def test_the_sdk_names_of_a_star_import_are_the_sdks():
    cells = ["from kubeflow.trainer import *\n", nbs.PATCH_FN,
             "client = TrainerClient()\n"
             "client.train(trainer=CustomTrainer(func=train_patched, num_nodes=2))\n"]  # fmt: skip
    job = compile_notebook(notebook(*cells))
    assert job.function_name == "train_patched" and job.settings["nodes"] == 2


def test_a_token_from_the_environment_must_be_given_to_the_job():
    job = compile_notebook(notebook(*nbs.ENV_TOKEN))
    [warning] = [w for w in job.warnings if w.code == "needs"]
    assert "HF_TOKEN comes from the environment (cell 3, line 1)" in warning.message
    with pytest.raises(ConfigError, match="use --env-from-secret or --env HF_TOKEN=") as info:
        build_job_spec(job)
    assert info.value.field == "env.HF_TOKEN"
    spec = build_job_spec(job, {"env": {"HF_TOKEN": "hf_x"}})
    assert [(e.name, e.value) for e in spec.config.env] == [("HF_TOKEN", "hf_x")]
    assert build_job_spec(job, {"env_from_secrets": ["hf-token"]}).config.env_from


def test_a_token_given_under_another_name_is_asked_for_by_that_name():
    cells = [nbs.IMPORTS, nbs.PATCH_FN, "client = TrainerClient()\n"
             "client.train(trainer=CustomTrainer(func=train_patched,\n"
             "    env={'TOKEN': os.environ['HF_TOKEN']}))\n"]  # fmt: skip
    job = compile_notebook(notebook(*cells))
    with pytest.raises(ConfigError, match="use --env-from-secret or --env TOKEN=...") as info:
        build_job_spec(job)
    assert info.value.field == "env.TOKEN"
    assert build_job_spec(job, {"env": {"TOKEN": "hf_x"}})  # the suggestion, applied, works


def test_a_setting_read_from_the_environment_when_compiling_suggests_what_works():
    """A train() setting that the notebook computes from the environment (as the Trainer's
    examples do with KUBEFLOW_TRAINER_EXEC_MODE) is read when kale_ext compiles, where the
    job's --env does not reach: the error says to write the value, which works."""
    setting = ("mode = os.environ.get('KUBEFLOW_TRAINER_EXEC_MODE', 'cluster')\n"
               "nodes = 1 if mode == 'local' else 2\n")  # fmt: skip
    call = ("client = TrainerClient()\n"
            "client.train(trainer=CustomTrainer(func=train_patched, num_nodes=nodes))\n")  # fmt: skip
    with pytest.raises(CompileError) as info:
        compile_notebook(notebook(nbs.IMPORTS, nbs.PATCH_FN, setting, call))
    [error] = info.value.errors
    assert error.message.endswith(
        "KUBEFLOW_TRAINER_EXEC_MODE comes from the environment (cell 3, line 1), which kale_ext "
        "does not read when it compiles: write the value in the notebook"
    )
    assert "--env" not in error.message
    written = setting.replace("os.environ.get('KUBEFLOW_TRAINER_EXEC_MODE', 'cluster')", "'local'")
    job = compile_notebook(notebook(nbs.IMPORTS, nbs.PATCH_FN, written, call))
    assert job.settings["nodes"] == 1


def test_param_names_the_functions_real_arguments_and_settings_are_not_parameters():
    cells = [nbs.IMPORTS, ("num_nodes = 2\n", ["parameters"]), nbs.PATCH_FN,
             "TrainerClient().train(trainer=CustomTrainer(func=train_patched, num_nodes=num_nodes))"]  # fmt: skip
    job = compile_notebook(notebook(*cells))
    assert job.parameters == {"lr": 0.1}  # the function's own; `num_nodes` is a setting
    assert any(w.code == "unread-parameter" and "`num_nodes`" in w.message for w in job.warnings)
    with pytest.raises(ConfigError, match=r"train_patched\(\) has no argument `num_nodes` "
                       r"\(its arguments: lr\)"):  # fmt: skip
        build_job_spec(job, {"parameters": {"num_nodes": 4}})
    assert build_job_spec(job).nodes == 2


def test_a_call_under_an_if_on_literals_is_found_where_the_notebook_runs_it():
    cells = [nbs.IMPORTS, nbs.PATCH_FN, "on_cluster = True\nclient = TrainerClient()\n"
             "if on_cluster:\n    client.train(trainer=CustomTrainer(func=train_patched, num_nodes=4))\n"
             "else:\n    client.train(trainer=CustomTrainer(func=train_patched, num_nodes=1))\n"]  # fmt: skip
    job = compile_notebook(notebook(*cells))
    assert job.settings["nodes"] == 4 and not [w for w in job.warnings if w.code == "train-calls"]
    assert {p["setting"]: p["line"] for p in job.provenance}["nodes"] == 4


def test_the_entrypoint_tag_still_wins_over_the_call():
    cells = [nbs.IMPORTS, ("def other(x=1):\n    print(x)\n", ["entrypoint"]), nbs.PATCH_FN,
             "TrainerClient().train(trainer=CustomTrainer(func=train_patched, num_nodes=2))"]  # fmt: skip
    job = compile_notebook(notebook(*cells))
    assert job.function_name == "other" and job.settings["nodes"] == 2


def test_cli_dry_run_and_compile_show_where_each_setting_came_from(write_nb, tmp_path):
    from tests.cli import cli

    path = write_nb(notebook(*nbs.TWO_CALLS), "two_calls.ipynb")
    out = cli("compile", path, "-o", tmp_path / "out")
    assert out.returncode == 0, out.stderr
    assert "notebook   nodes 3 (cell 4, line 2)" in out.stdout
    out = cli("run", path, "--dry-run", "--train-call", "1", "--nodes", "2", "--backend", "local")
    assert out.returncode == 0, out.stderr
    assert "notebook   nodes 1 (cell 3, line 2); overridden by nodes" in out.stdout
    assert 'notebook   func_args {"lr": 1.0} (cell 3, line 2)' in out.stdout
    bad = cli("run", path, "--dry-run", "--param", "epochs=3", "--backend", "local")
    assert bad.returncode != 0 and "train_patched() has no argument `epochs`" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_example_sdk_notebook_trains_on_two_local_nodes_as_it_is(tmp_path):
    """examples/sdk_digits.ipynb, untouched: its train() call's 2 nodes, func_args and
    resources run as a real 2-node torch DDP job; each node logs its accuracy."""
    import shutil

    from kale_ext.backends.base import Status
    from kale_ext.backends.local.backend import LocalBackend
    from kale_ext.backends.submit import submit
    from tests.conftest import EXAMPLES

    example = tmp_path / "sdk_digits.ipynb"  # its outputs go beside it, not into the repository
    shutil.copy(EXAMPLES / "sdk_digits.ipynb", example)
    backend = LocalBackend(tmp_path / "jobs", capacity=2)
    done = submit(backend, example, {"parameters": {"epochs": 1}})
    assert done.spec.nodes == 2 and done.spec.func_args == {"epochs": 1}
    info = backend.wait(done.name, timeout=300, interval=0.1)
    logs = list(backend.logs(done.name))
    tail = "\n".join(f"[node {x.node} rank {x.rank}] {x.text}" for x in logs[-60:])
    assert info.status is Status.COMPLETE, f"{info.reason}\n{tail}"
    said = {(line.rank, line.text) for line in logs}
    for rank in (0, 1):
        assert any(r == rank and f"rank {rank} of 2: test accuracy" in t for r, t in said), said


def test_without_the_sdk_an_initializer_says_how_to_install_it(monkeypatch):
    """initializer= and options= are converted by the SDK's own functions: without the SDK,
    one error names the extra to install (everything else compiles without it)."""
    import sys

    for module in ("kubeflow.trainer.backends.kubernetes",
                   "kubeflow.trainer.backends.kubernetes.backend"):  # fmt: skip
        monkeypatch.setitem(sys.modules, module, None)  # what a missing package looks like
    with pytest.raises(CompileError) as info:
        compile_notebook(notebook(*nbs.DATA_CACHE))
    [error] = info.value.errors
    assert "needs the Kubeflow SDK: pip install 'kale-ext[sdk]'" in error.message
    assert (error.cell, error.line) == (3, 2)
    assert compile_notebook(notebook(*nbs.XGBOOST)).settings["runtime"] == "xgboost-distributed"
