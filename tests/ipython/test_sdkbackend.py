"""The notebook's own TrainerClient through kale_ext (%kale_sdk): a Kubeflow SDK notebook run
cell by cell, unedited, in a real kernel, its train() a real 2-node local job; and what a
train() call kale_ext cannot carry is refused, saying why."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from tests.conftest import notebook
from tests.harness.kube_fixtures import kube, kubeconfig  # noqa: F401 (fixtures)

TRAIN_FN = """\
def train_fn(greeting="hello"):
    import os

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([rank + 1.0])
    dist.all_reduce(total)
    print(f"{greeting} from rank {rank} of {world}: sum {total.item():.0f}, "
          f"TOKEN={os.environ.get('TOKEN')}", flush=True)
    dist.destroy_process_group()
"""
SDK_CELLS = (
    TRAIN_FN,
    "from kubeflow.trainer import CustomTrainer, TrainerClient\n\nclient = TrainerClient()",
    "job_id = client.train(\n"
    "    trainer=CustomTrainer(func=train_fn, func_args={'greeting': 'hi'}, num_nodes=2,\n"
    "                          env={'TOKEN': 't1'}),\n"
    "    runtime='torch-distributed',\n"
    ")",
    "job = client.wait_for_job_status(job_id, timeout=180, polling_interval=1)\n"
    "print('status', job.status, job.num_nodes, [s.name for s in job.steps], "
    "[s.status for s in job.steps])",
    "for step in ('node-0', 'node-1'):\n"
    "    for line in client.get_job_logs(job_id, step=step):\n"
    "        print(step, line)",
    "print('listed', job_id in [j.name for j in client.list_jobs()], type(job).__module__)\n"
    "client.delete_job(job_id)\n"
    "print('after delete', job_id in [j.name for j in client.list_jobs()])",
)


def run_in_kernel(path, prelude: str, cells, cwd) -> list[str]:
    """Run ``prelude`` then the notebook's cells in a real kernel started for ``path`` (as
    jupyter_server starts one: JPY_SESSION_NAME); each cell's stdout, or its error's lines."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(prelude)] + [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
    ).execute()  # fmt: skip
    outputs = []
    for cell in nb.cells:
        text = []
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                text.append(out.text)
            elif out.output_type == "error":
                text.append("ERROR " + "\n".join(out.traceback))
        outputs.append("".join(text))
    return outputs


def test_an_sdk_notebook_runs_unedited_as_a_two_node_local_job(tmp_path, monkeypatch):
    path = tmp_path / "sdk_train.ipynb"
    path.write_text(json.dumps(notebook(*SDK_CELLS)))
    before = path.read_bytes()
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    out = run_in_kernel(path, "%load_ext kale_ext\n%kale_sdk --backend local", SDK_CELLS, tmp_path)
    assert "go through kale_ext's local backend" in out[0], out
    assert not any(o.startswith("ERROR") for o in out), out
    status = out[4]
    assert "status Complete 2 ['node-0', 'node-1'] ['Succeeded', 'Succeeded']" in status, out
    logs = out[5].splitlines()
    assert "node-0 hi from rank 0 of 2: sum 3, TOKEN=t1" in logs, logs
    assert "node-1 hi from rank 1 of 2: sum 3, TOKEN=t1" in logs, logs
    assert "listed True kubeflow.trainer.types.types" in out[6]
    assert "after delete False" in out[6]
    assert path.read_bytes() == before  # the notebook is not edited


@dataclass
class Refused:
    id: str
    train: str  # the cell calling train(), as the notebook file has it
    says: str  # in the one-line refusal
    kernel_fn: str = TRAIN_FN  # train_fn as the kernel ran it (another: an unsaved notebook)
    setup: list[str] = field(default_factory=list)  # cells run before it
    kernel_train: str | None = None  # the train() cell as the kernel ran it (None: as saved)


REFUSED = [
    Refused("resources", "client.train(trainer=CustomTrainer(func=train_fn, "
            "resources_per_node={'example.com/fpga': 1}))",
            "CustomTrainer(resources_per_node={'example.com/fpga': ...}): kale_ext sets cpu, "
            "memory, gpu, nvidia.com/gpu per node"),
    Refused("unsaved", "client.train(trainer=CustomTrainer(func=train_fn))",
            "`train_fn` in sdk_train.ipynb is not the one this kernel ran: save the notebook",
            kernel_fn=TRAIN_FN.replace("hello", "bonjour")),
    Refused("builtin trainer", "client.train(trainer=BuiltinTrainer(config=TorchTuneConfig()))",
            "train(trainer=BuiltinTrainer): kale_ext runs a training function you write",
            setup=["from kubeflow.trainer import BuiltinTrainer, TorchTuneConfig"]),
    Refused("cluster runtime", "client.train(trainer=CustomTrainer(func=train_fn), "
            "runtime='torch-distributed-with-cache')",
            "runtime 'torch-distributed-with-cache' runs only on a cluster: it streams its "
            "dataset from the data cache"),
    Refused("initializer", "client.train(trainer=CustomTrainer(func=train_fn), initializer="
            "Initializer(dataset=HuggingFaceDatasetInitializer(storage_uri='hf://org/data')))",
            "initializer: the job's initializer (train(initializer=...)) fills its volumes in "
            "initializer jobs, which only a cluster runs",
            setup=["from kubeflow.trainer import HuggingFaceDatasetInitializer, Initializer"]),
    Refused("train cell edited, not saved", "client.train(trainer=CustomTrainer(func=train_fn))",
            "the cell calling train() is not in sdk_train.ipynb as the kernel runs it: save the "
            "notebook",
            kernel_train="client.train(trainer=CustomTrainer(func=train_fn, num_nodes=2))"),
    Refused("not saved at all", "client.train(trainer=CustomTrainer(func=other_fn))",
            "sdk_train.ipynb has no cell defining `other_fn`: save the notebook",
            kernel_fn=TRAIN_FN + "\n\ndef other_fn():\n    print(1)\n"),
]  # fmt: skip


@pytest.fixture
def sdk_shell(shell, tmp_path, monkeypatch):
    """The real IPython shell with %kale_sdk on the local backend (undone afterwards)."""
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    shell.run_cell("%load_ext kale_ext", store_history=True)
    assert shell.run_cell("%kale_sdk --backend local", store_history=True).success
    yield shell
    shell.run_cell("%kale_sdk --off", store_history=True)


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.id)
def test_what_kale_ext_cannot_carry_is_refused_in_one_line(sdk_shell, case, tmp_path, monkeypatch):
    from kale_ext.ipython.sdkbackend import KaleExtSdkError

    client = SDK_CELLS[1]
    path = tmp_path / "sdk_train.ipynb"
    path.write_text(json.dumps(notebook(TRAIN_FN, *case.setup, client, case.train)))
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    for cell in (case.kernel_fn, *case.setup, client):
        assert sdk_shell.run_cell(cell, store_history=True).success, cell
    result = sdk_shell.run_cell(case.kernel_train or case.train, store_history=True)
    error = result.error_in_exec
    assert isinstance(error, KaleExtSdkError), error
    assert case.says in str(error)
    assert error._render_traceback_() == [f"KaleExtSdkError: {error}"]  # no traceback shown
    assert not (tmp_path / "jobs").exists() or not any((tmp_path / "jobs").iterdir())


def train_fn():
    print("trained")


@dataclass
class Setting:
    id: str
    trainer: dict  # CustomTrainer's arguments (func=train_fn)
    train: dict  # train()'s other arguments
    options: dict | None = None  # kale_ext's options it becomes (None: refused)
    says: str = ""


SETTINGS = [
    Setting("nothing", {}, {}, {}),
    Setting("nodes", {"num_nodes": 3}, {}, {"nodes": 3}),
    Setting("resources", {"resources_per_node": {"cpu": 2, "memory": "4Gi", "gpu": 1}}, {},
            {"cpu": "2", "memory": "4Gi", "gpu": 1}),
    Setting("nvidia gpu", {"resources_per_node": {"nvidia.com/gpu": "mig-1g.5gb"}}, {},
            {"gpu": "mig-1g.5gb"}),
    Setting("env", {"env": {"TOKEN": "t"}}, {}, {"env": {"TOKEN": "t"}}),
    Setting("packages and index", {"packages_to_install": ["tqdm==4.67.1"],
                                   "pip_index_urls": ["https://example.org/simple"]}, {},
            {"packages": ["tqdm==4.67.1"], "pip_index_urls": ["https://example.org/simple"]}),
    Setting("func_args", {"func_args": {"lr": 0.1}}, {}, {"parameters": {"lr": 0.1}}),
    Setting("image", {"image": "repo/img:1"}, {}, {"image": "repo/img:1"}),
    Setting("runtime name", {}, {"runtime": "xgboost-distributed"},
            {"runtime": "xgboost-distributed"}),
    Setting("other resource", {"resources_per_node": {"example.com/fpga": 1}}, {},
            says="kale_ext sets cpu, memory, gpu, nvidia.com/gpu per node"),
    Setting("a lambda", {"func": lambda: None}, {},
            says="must be a function defined at the top level of a cell"),
]  # fmt: skip


@pytest.mark.parametrize("case", SETTINGS, ids=lambda c: c.id)
def test_every_setting_of_the_live_call_becomes_an_option_or_is_refused(case):
    """The live call's values: what the job is given on top of the notebook's own reading."""
    from kubeflow.trainer import CustomTrainer
    from kubeflow.trainer.options import Name

    from kale_ext.ipython.sdkbackend import KaleExtSdkError, live_settings

    trainer = CustomTrainer(**{"func": train_fn, **case.trainer})
    if case.options is None:
        with pytest.raises(KaleExtSdkError, match=case.says):
            live_settings(trainer, case.train.get("runtime"), None)
        return
    func, options = live_settings(trainer, case.train.get("runtime"), [Name("my-job")])
    assert func is train_fn
    assert options == {**case.options, "name": "my-job"}


def test_a_failed_job_waited_for_says_where_it_failed(sdk_shell, tmp_path, monkeypatch):
    """wait_for_job_status raises a RuntimeError, as the SDK's does, naming the cell and line."""
    failing = 'def train_fn():\n    settings = {"lr": 0.1}\n    print(settings["label"])\n'
    train = "job_id = client.train(trainer=CustomTrainer(func=train_fn))"
    wait = "client.wait_for_job_status(job_id, timeout=120, polling_interval=1)"
    path = tmp_path / "sdk_train.ipynb"
    path.write_text(json.dumps(notebook(failing, SDK_CELLS[1], train, wait)))
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    for cell in (failing, SDK_CELLS[1], train):
        assert sdk_shell.run_cell(cell, store_history=True).success, cell
    error = sdk_shell.run_cell(wait, store_history=True).error_in_exec
    assert isinstance(error, RuntimeError), error
    assert str(error).startswith("TrainJob train-fn-")
    assert " is Failed: node 0, rank 0: cell 1 (" in str(error)
    assert "line 3: KeyError: 'label'" in str(error)


def test_use_kale_ext_gives_one_client_a_kale_ext_backend_and_off_gives_clients_back(
    sdk_shell, tmp_path
):
    from kubeflow.trainer import LocalProcessBackendConfig, TrainerClient
    from kubeflow.trainer.backends.localprocess.backend import LocalProcessBackend

    import kale_ext.sdk
    from kale_ext.backends.local.backend import LocalBackend
    from kale_ext.ipython.sdkbackend import KaleExtSdkBackend

    made = TrainerClient(LocalProcessBackendConfig())  # under %kale_sdk: kale_ext's already
    assert isinstance(made.backend, KaleExtSdkBackend)
    sdk_shell.run_cell("%kale_sdk --off", store_history=True)
    own = TrainerClient(LocalProcessBackendConfig())
    assert isinstance(own.backend, LocalProcessBackend)  # the SDK's own again
    kale_ext.sdk.use_kale_ext(own, LocalBackend(tmp_path / "jobs"))  # the one-liner
    assert isinstance(own.backend, KaleExtSdkBackend)
    assert [(r.name, r.trainer.framework) for r in own.list_runtimes()] == [
        ("torch-distributed", "torch"),
        ("xgboost-distributed", "xgboost"),
        ("jax-distributed", "jax"),
        ("deepspeed-distributed", "deepspeed"),
        ("mlx-distributed", "mlx"),
    ]
    assert own.list_jobs() == []
    assert isinstance(TrainerClient(LocalProcessBackendConfig()).backend, LocalProcessBackend)


def test_on_a_cluster_the_live_call_is_a_valid_trainjob_the_job_calls_see(
    shell,
    kube,  # noqa: F811 (the fake cluster's fixture: it validates what it is given)
    tmp_path,
    monkeypatch,
):
    """use_kale_ext with kale_ext's Kubernetes backend: the TrainJob carries every setting of
    the live call, and get_job / list_jobs / delete_job see it as the SDK's types."""
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.ipython.sdkmagic import stop_using_kale_ext, use_kale_ext
    from tests.harness.crd import validate_trainjob

    train = (
        "job_id = client.train(trainer=CustomTrainer(func=train_fn, num_nodes=2, "
        "resources_per_node={'cpu': 2, 'memory': '4Gi'}, env={'TOKEN': 't1'}, "
        "func_args={'greeting': 'hi'}), runtime='torch-distributed')"
    )
    path = tmp_path / "sdk_train.ipynb"
    path.write_text(json.dumps(notebook(TRAIN_FN, SDK_CELLS[1], train)))
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    use_kale_ext(backend=KubernetesBackend(poll_interval=0.002), shell=shell)
    try:
        for cell in (TRAIN_FN, SDK_CELLS[1], train):
            assert shell.run_cell(cell, store_history=True).success, cell
        name = shell.user_ns["job_id"]
        stored = kube.get("trainjobs", name)
        validate_trainjob(stored)
        trainer = stored["spec"]["trainer"]
        assert stored["spec"]["runtimeRef"]["name"] == "torch-distributed"
        assert trainer["numNodes"] == 2
        assert trainer["resourcesPerNode"]["limits"] == {"cpu": "2", "memory": "4Gi"}
        assert {"name": "TOKEN", "value": "t1"} in trainer["env"]
        parts = [*trainer["command"], *trainer.get("args", [])]
        assert any('"greeting": "hi"' in part for part in parts), parts  # the job's arguments
        client = shell.user_ns["client"]
        job = client.get_job(name)
        assert (type(job).__name__, job.name, job.num_nodes) == ("TrainJob", name, 2)
        assert job.runtime.name == "torch-distributed"
        assert [j.name for j in client.list_jobs()] == [name]
        client.delete_job(name)
        assert kube.get("trainjobs", name) is None
    finally:
        stop_using_kale_ext()
