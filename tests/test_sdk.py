"""kale_ext.sdk: a compiled notebook as the Kubeflow SDK's CustomTrainer, byte-exact through the
SDK's own command building (its Kubernetes backend's unquoted heredoc, its LocalProcessBackend
for real, and its Kubernetes backend against the emulated cluster); what it cannot carry is an
error naming the option; the SDK is imported only when used."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

from kale_ext.errors import ConfigError
from kale_ext.sdk import UNSAFE, custom_trainer, train
from tests.conftest import notebook

pytest_plugins = ["tests.harness.emulated"]  # the emulated_cluster fixture

HOSTILE_CELL = textwrap.dedent(r'''
    values = ['cost: $5 and $HOME', 'C:\\temp\\new', '`echo injected`', '$(echo also-injected)',
              "it's \"quoted\" \t tab", 'naïve ✓ €', 'trailing \\']
    text = """first
    EOM
    last $PATH \\n"""
    print(json.dumps(values + [text, greeting]))
    print("done")  # a log that is one JSON document, the kubernetes client would parse
''').strip()
HOSTILE = notebook(("import json", ["imports"]), ("greeting = 'hi $USER'", ["parameters"]),
                   HOSTILE_CELL)  # fmt: skip


def truth(greeting: str = "hi $USER") -> str:
    """What Python itself prints for the cell: the line every run must print, byte for byte."""
    scope = {
        "json": json,
        "greeting": greeting,
        "print": lambda line: scope.setdefault("out", line),
    }
    exec(HOSTILE_CELL, scope)  # noqa: S102
    return scope["out"]


@pytest.fixture
def hostile(write_nb):
    return write_nb(HOSTILE, "hostile.ipynb")


def test_the_function_handed_to_the_sdk_survives_a_shell(hostile):
    trainer = custom_trainer(hostile, parameters={"greeting": "hey `whoami` $$"})
    source = inspect.getsource(trainer.func)
    assert not UNSAFE & set(source) and "EOM" not in [line.strip() for line in source.splitlines()]
    assert os.path.basename(inspect.getfile(trainer.func)) == "hostile.py"
    assert trainer.func_args is None and trainer.num_nodes == 1
    assert (trainer.packages_to_install, trainer.env, trainer.resources_per_node) == (None,) * 3


def test_the_sdks_kubernetes_command_runs_the_notebook_byte_exact(hostile, tmp_path):
    from kubeflow.trainer.backends.kubernetes.utils import get_command_using_train_func
    from kubeflow.trainer.constants import constants
    from kubeflow.trainer.types import types

    trainer = custom_trainer(hostile, parameters={"greeting": "hey `whoami` $$"})
    kind = types.RuntimeKind.CLUSTER_TRAINING_RUNTIME
    runtime = types.Runtime(name="torch-distributed", kind=kind, trainer=types.RuntimeTrainer(
        trainer_type=types.TrainerType.CUSTOM_TRAINER, framework="torch", image="local"))  # fmt: skip
    runtime.trainer.set_command(constants.DEFAULT_COMMAND)  # bash -c '<heredoc>; python file'
    command = get_command_using_train_func(runtime, trainer.func, None, [], None)
    assert command[:2] == ["bash", "-c"] and "read -r -d '' SCRIPT << EOM" in command[2]
    env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    out = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [truth("hey `whoami` $$"), "done"]


@pytest.mark.parametrize(
    "options, field, said",
    [
        ({"env": {"A": "1"}, "config": {"env": [{"name": "T", "valueFrom": {"secretKeyRef": {
            "name": "s", "key": "k"}}}]}}, "env", "T comes from valueFrom"),
        ({"config": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}, "resources",
         "cpu has request 1 and limit 2"),
        ({"config": {"labels": {"team": "ml"}}}, "labels", "the SDK's options"),
        ({"procs_per_node": 2}, "procs_per_node", "a process per CPU"),
        ({"nodes": "two"}, "nodes", ""),
        # once dropped without a word: what runs is what was asked, or a refusal
        ({"checkpoints": "pvc:ckpt"}, "checkpoints", "gets no checkpoint folder"),
        ({"keep_checkpoints": 3}, "keep_checkpoints", "gets no checkpoint folder"),
        ({"max_restarts": 2}, "max_restarts", "failure policy is the runtime's"),
        ({"outputs": "pvc:out"}, "outputs", "RuntimePatch"),
        ({"dataset_uri": "hf://org/data"}, "dataset_uri", "Initializer(dataset=...)"),
        ({"workspace": "."}, "workspace", "ships the function only"),
    ],
)  # fmt: skip
def test_what_a_custom_trainer_cannot_carry_is_an_error_naming_it(hostile, options, field, said):
    with pytest.raises(ConfigError) as refused:
        custom_trainer(hostile, **options)
    assert refused.value.field == field and said in str(refused.value)


def test_a_custom_trainer_carries_the_jobs_settings(write_nb):
    path = write_nb(notebook(("import torch", ["imports"]), "print(torch.__version__)"))
    trainer = custom_trainer(path, nodes=2, cpu=2, memory="4Gi", env={"MODE": "fast"},
                             image="repo/train:1", pip_index_urls=["https://example.com/simple"],
                             max_restarts=0)  # the default asks for nothing: not refused  # fmt: skip
    assert trainer.num_nodes == 2 and trainer.image == "repo/train:1"
    assert trainer.resources_per_node == {"cpu": "2", "memory": "4Gi"}
    assert trainer.env == {"MODE": "fast"}
    assert [p.split("==")[0] for p in trainer.packages_to_install] == ["torch"]
    assert trainer.pip_index_urls == ["https://example.com/simple"]


def test_modules_beside_the_notebook_cannot_travel_with_the_sdk(tmp_path):
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook(("from helpers import X", ["imports"]),
                                                           "print(X)")))  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        custom_trainer(tmp_path / "nb.ipynb")
    assert refused.value.field == "workspace" and "helpers" in str(refused.value)


def test_without_the_sdk_the_message_says_how_to_install_it(hostile, monkeypatch):
    monkeypatch.setitem(sys.modules, "kubeflow.trainer", None)
    with pytest.raises(ImportError, match=r"pip install 'kale-ext\[sdk\]'"):
        custom_trainer(hostile)


def test_importing_kale_ext_sdk_does_not_import_the_sdk():
    code = "import sys, kale_ext.sdk; assert 'kubeflow.trainer' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_train_through_the_sdks_local_process_backend(hostile, monkeypatch, tmp_path):
    """The SDK's own LocalProcessBackend: a venv, pip (torch pinned to this environment's: the
    local wheel), torchrun on the file it writes; the line comes out byte for byte."""
    from kubeflow.trainer import LocalProcessBackendConfig, TrainerClient

    monkeypatch.chdir(tmp_path)  # the SDK's LocalJob changes the working directory meanwhile
    client = TrainerClient(LocalProcessBackendConfig())
    name = train(hostile, client=client, name="hostile-local")
    assert name == "hostile-local"
    client.wait_for_job_status(name, status={"Complete", "Failed"}, timeout=600)
    logs = list(client.get_job_logs(name))
    job = client.get_job(name)
    assert job.status == "Complete", "\n".join(logs[-30:])
    assert truth() in [line.rstrip("\n") for line in logs]


def test_train_through_the_sdks_kubernetes_backend_on_the_emulated_cluster(
    hostile, emulated_cluster
):
    """The SDK's KubernetesBackend builds its bash heredoc command and posts the TrainJob; the
    emulated cluster runs it on 2 nodes (torchrun on the file the heredoc wrote)."""
    from kubeflow.common.types import KubernetesBackendConfig
    from kubeflow.trainer import TrainerClient

    config = KubernetesBackendConfig(config_file=str(emulated_cluster.kubeconfig), namespace="team")
    client = TrainerClient(config)
    name = train(hostile, client=client, nodes=2, name="hostile-k8s")
    tj = emulated_cluster.get("trainer.kubeflow.org/v1alpha1/trainjobs", name)
    assert tj["spec"]["trainer"]["command"][:2] == ["bash", "-c"]
    from tests.harness.emulated import finished

    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, name), 300) == "Complete"
    for index in (0, 1):
        logs = "\n".join(client.get_job_logs(name, step=f"node-{index}"))
        assert truth() in logs.splitlines(), logs[-2000:]
