"""The one submit and preview every front end calls: the job and all its warnings together."""

import threading

import pytest

from kale_ext.backends.base import Backend, Submitted
from kale_ext.backends.local import LocalBackend
from kale_ext.backends.submit import preview, resolve_spec, submit
from kale_ext.compile import compile_notebook
from kale_ext.errors import BackendError, ConfigError, NotFound
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
        resolve_spec(LocalBackend(), compile_notebook(NB), {"runtime": "torchtune-llama3.2-1b"})
    assert info.value.field == "runtime"
    assert "runtime 'torchtune-llama3.2-1b' runs only on a cluster" in str(info.value)


def test_an_mpi_runtimes_job_without_mpirun_is_previewed_here_and_refused_at_submit(
    tmp_path, monkeypatch
):
    """The Trainer's published MPI runtime when this machine has no mpirun: its job for a
    cluster is shown, saying so; running it here is refused naming the runtime and what to
    install (backends/local/test_mpirun.py: every front end, and the run with mpirun)."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-mpirun-here"))
    backend = LocalBackend(tmp_path)
    options = {"runtime": "deepspeed-distributed"}
    shown = preview(backend, NB, options)
    assert shown.command[0] == "mpirun" and shown.spec.runtime.published
    assert any("published runtime" in w for w in shown.spec.warnings)
    with pytest.raises(ConfigError) as info:
        submit(backend, NB, options)
    assert info.value.field == "runtime"
    assert str(info.value).startswith(
        "runtime: runtime 'deepspeed-distributed' starts its processes with Open MPI's mpirun, "
        "and there is no mpirun on this machine's PATH: install Open MPI (Debian: apt-get "
        "install openmpi-bin)"
    )


class Unreachable(Recording):
    """A cluster that does not answer."""

    def get_runtime(self, name):
        raise BackendError("cannot get it: cannot reach the Kubernetes API server", 503, "Down")


@pytest.mark.parametrize("backend", [None, LocalBackend(), Unreachable()],
                         ids=["no-cluster", "local", "unreachable"])  # fmt: skip
def test_a_preview_with_no_cluster_to_ask_takes_the_published_runtime(backend):
    shown = preview(backend, NB, {"runtime": "torch-distributed-with-cache"})
    assert shown.spec.runtime.replicated_jobs == ("dataset-initializer", "node")
    assert shown.trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed-with-cache"
    said = [w for w in shown.spec.warnings if "its facts are" in w]
    assert said and "Kubeflow Trainer v2.3.0's published runtimes, not the cluster's" in said[0]


def test_a_submit_asks_the_cluster_and_a_cluster_that_lacks_the_runtime_is_believed():
    with pytest.raises(BackendError, match="cannot reach"):
        resolve_spec(Unreachable(), compile_notebook(NB), {"runtime": "torch-distributed"})

    class Lacking(Recording):
        def get_runtime(self, name):
            raise NotFound(f"runtime {name!r} not found in the cluster")

    with pytest.raises(ConfigError, match="not found in the cluster"):
        preview(Lacking(), NB, {"runtime": "torch-distributed-with-cache"})


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
