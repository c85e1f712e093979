"""The one submit and preview every front end calls: the job and all its warnings together."""

import threading

import pytest

from kale_ext.backends.base import Backend, Submitted
from kale_ext.backends.local import LocalBackend
from kale_ext.backends.submit import preview, resolve_spec, submit
from kale_ext.compile import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.runtimes import TORCH_DISTRIBUTED
from tests.conftest import notebook

NB = notebook(
    ("epochs = 2\ndebug = False", ["parameters"]),
    ("import json", ["imports"]),
    ("print(json.dumps([epochs, debug]))", ["training"]),
    ("print('left out')", ["prev:load"]),  # a Kale tag kale_ext does not use: a compile warning
)


class Recording(Backend):
    """Submits nothing; answers each submit with a warning of its own, after a pause in which
    another thread's submit runs (the race that per-instance warnings lost)."""

    name = "recording"

    def __init__(self):
        self.barrier = threading.Barrier(2, timeout=10)

    def list_runtimes(self):
        return [TORCH_DISTRIBUTED]

    def submit(self, spec, notebook_path=None):
        self.barrier.wait()
        return Submitted(spec.name, (f"no room checked for {spec.name}",))

    list_jobs = get_job = logs = events = delete = None


def test_submit_returns_the_job_with_every_warning():
    job = submit(_single(), NB, {"name": "one"})
    assert job.name == "one" and job.backend == "recording"
    assert any("prev:load" in w for w in job.warnings)  # the compile's
    assert job.warnings[-1] == "no room checked for one"  # the backend's


def _single() -> Backend:
    backend = Recording()
    backend.barrier = threading.Barrier(1)
    return backend


def test_concurrent_submits_keep_their_own_warnings():
    backend = Recording()
    results = {}

    def run(name):
        results[name] = submit(backend, NB, {"name": name}).warnings[-1]

    threads = [threading.Thread(target=run, args=(n,)) for n in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results == {
        "first": "no room checked for first",
        "second": "no room checked for second",
    }


def test_a_missing_runtime_is_a_config_error_on_runtime():
    with pytest.raises(ConfigError) as info:
        resolve_spec(LocalBackend(), compile_notebook(NB), {"runtime": "no-such-runtime"})
    assert info.value.field == "runtime" and "available: torch-distributed" in str(info.value)


def test_a_runtime_only_a_cluster_runs_is_refused_here_naming_it():
    with pytest.raises(ConfigError) as info:
        resolve_spec(LocalBackend(), compile_notebook(NB), {"runtime": "deepspeed-distributed"})
    assert info.value.field == "runtime"
    assert "runtime 'deepspeed-distributed' runs only on a cluster" in str(info.value)


def test_preview_shows_the_job_and_the_command_its_nodes_run(tmp_path):
    shown = preview(LocalBackend(tmp_path), NB, {"nodes": 2, "parameters": {"debug": "True"}})
    assert shown.spec.func_args == {"debug": True}  # typed as the parameters cell has it
    assert shown.trainjob["spec"]["trainer"]["numNodes"] == 2
    assert shown.command == shown.trainjob["spec"]["trainer"]["command"]
    assert shown.summary()[1] == (
        "runtime    torch-distributed: 2 nodes × 1 process "
        "(the runtime's choice: 1, no CPUs or GPUs stated per node)"
    )
    assert 'arguments  {"debug": true}' in shown.summary()
    assert not list(tmp_path.iterdir())  # a preview starts nothing


@pytest.mark.parametrize("workspace", ["auto", None], ids=["its-folder", "no-workspace"])
def test_the_train_call_chosen_is_the_job_with_or_without_a_workspace(tmp_path, workspace):
    """--train-call reaches the compile whether the job ships the notebook's folder or none."""
    from kale_ext.backends.submit import AUTO
    from tests.compile import sdk_notebooks as nbs

    ws = AUTO if workspace == "auto" else None
    backend = LocalBackend(tmp_path / "jobs")
    first = preview(backend, notebook(*nbs.TWO_CALLS), {"train_call": 1}, workspace=ws)
    last = preview(backend, notebook(*nbs.TWO_CALLS), {}, workspace=ws)
    assert (first.spec.func_args, last.spec.func_args) == ({"lr": 1.0}, {"lr": 0.01})
    nodes = [p.trainjob["spec"]["trainer"]["numNodes"] for p in (first, last)]
    assert nodes == [1, 3]
