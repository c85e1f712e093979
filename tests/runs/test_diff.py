"""`kale-ext diff` of two real local runs: one with a changed parameter and an edited cell."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.local.backend import LocalBackend
from kale_ext.errors import ConfigError, NotFound
from kale_ext.runs.diff import compare
from tests.cli import cli
from tests.conftest import notebook


def tiny(step_cell: str) -> dict:
    return notebook(
        ("from kale_ext import report", ["imports"]),
        ("epochs = 2", ["parameters"]),
        step_cell,
    )


BEFORE = "for e in range(epochs):\n    report(step=e, loss=1 / (e + 1))"
AFTER = "for e in range(epochs):\n    report(step=e, loss=1 / (e + 2), accuracy=e / 10)"


def local(*args):
    out = cli(*args, "--backend", "local")
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture
def two_runs(tmp_path, monkeypatch):
    """The same notebook run as it was, then with --param epochs=3 after editing its cell."""
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(tiny(BEFORE)))
    local("run", path, "--name", "first", "--follow")
    path.write_text(json.dumps(tiny(AFTER)))
    local("run", path, "--name", "second", "--param", "epochs=3", "--follow")
    return LocalBackend(tmp_path / "jobs")


def test_diff_names_the_parameter_the_hashes_the_function_and_final_metrics(two_runs):
    found = json.loads(local("diff", "first", "second", "-o", "json"))
    differ = {d["field"]: d["values"] for d in found["differences"]}
    assert differ["parameters.epochs"] == ["2", "3"]  # the first ran with the notebook's 2
    assert {"notebook-sha256", "source-sha256"} <= set(differ)
    assert "runtime" not in differ and "nodes" not in differ
    metrics = {m["metric"]: m["values"] for m in found["metrics"]}
    assert metrics == {"loss": [0.5, 0.25], "accuracy": [None, 0.2]}  # each last value
    [source] = found["source_diffs"]
    assert (source["from"], source["to"]) == ("first", "second")
    changed = [line for line in source["diff"].splitlines() if line[:1] in "-+"]
    assert [(line[0], line[1:].strip()) for line in changed] == [
        ("-", "--- first/function.py"[1:]),
        ("+", "+++ second/function.py"[1:]),
        ("-", "report(step=e, loss=1 / (e + 1))"),
        ("+", "report(step=e, loss=1 / (e + 2), accuracy=e / 10)"),
    ]

    table = local("diff", "first", "second")
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines() if line.strip()}
    assert rows["parameters.epochs"] == ["2", "(default)", "3"]  # what each job ran with
    assert rows["loss"] == ["0.5", "0.25"]
    assert "--- first/function.py" in table and "+++ second/function.py" in table


def test_a_job_against_itself_reruns_nothing_and_bad_names_are_named(two_runs):
    with pytest.raises(ConfigError, match="name 2 to 10 different jobs"):
        compare(two_runs, ["first", "first"])
    with pytest.raises(NotFound, match="no local job named 'nope'"):
        compare(two_runs, ["first", "nope"])
    out = cli("diff", "first", "nope", "--backend", "local")
    assert out.returncode == 1 and "no local job named 'nope'" in out.stderr


def test_a_rerun_of_the_same_notebook_differs_in_nothing(two_runs, tmp_path):
    (tmp_path / "train.ipynb").write_text(json.dumps(tiny(BEFORE)))  # the edit undone
    local("run", tmp_path / "train.ipynb", "--name", "third", "--follow")
    found = compare(two_runs, ["first", "third"])
    assert (found.differences, found.source_diffs) == ([], [])
    assert "(the same definition, notebook and source)" in local("diff", "first", "third")


def test_a_job_recorded_before_a_definition_key_joined_reads_as_its_default(two_runs, tmp_path):
    """Jobs recorded before max_restarts, checkpoints, keep_checkpoints and queue joined the
    definition showed `-` against a new job's `0`: the same job asked alike differs in nothing."""
    from kale_ext.backends.local.records import update_record
    from kale_ext.job.trainjob import DEFINITION

    def before_the_keys(record: dict) -> None:
        old = json.loads(record["provenance"][DEFINITION])
        for key in ("max_restarts", "checkpoints", "keep_checkpoints", "queue"):
            del old[key]
        record["provenance"][DEFINITION] = json.dumps(old)

    update_record(tmp_path / "jobs" / "first", before_the_keys)
    (tmp_path / "train.ipynb").write_text(json.dumps(tiny(BEFORE)))
    local("run", tmp_path / "train.ipynb", "--name", "third", "--keep-checkpoints", "2", "--follow")
    found = compare(two_runs, ["first", "third"])
    assert (found.differences, found.source_diffs) == ([], [])
    local(
        "run", tmp_path / "train.ipynb", "--name", "fourth", "--keep-checkpoints", "5", "--follow"
    )
    rows = {
        line.split()[0]: line.split()[1:] for line in local("diff", "first", "fourth").splitlines()
    }
    assert rows["keep_checkpoints"] == ["2", "(default)", "5"]
    assert "max_restarts" not in rows


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (test extra)")
    from tests.harness.cluster import EmulatedCluster

    idle = ({"cpu": "64", "memory": "256Gi", "pods": "0"},)  # room, but no pod is placed
    with EmulatedCluster(tmp_path / "cluster", nodes=idle) as running:
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield running


def test_diff_sees_a_changed_initializer_and_runtime_patch(cluster, tmp_path):
    """Two Kubeflow SDK notebooks that differ only in train()'s initializer, or only in its
    RuntimePatch: `diff` names the field (they once compared as the same job)."""
    from kale_ext.backends.kubernetes import KubernetesBackend
    from kale_ext.backends.submit import submit
    from tests.compile import sdk_notebooks as nbs

    backend = KubernetesBackend(config_file=str(cluster.kubeconfig))

    def submitted(name: str, cells: list[str]) -> str:
        path = tmp_path / f"{name}.ipynb"
        path.write_text(json.dumps(notebook(*cells)))
        return submit(backend, path, {"name": name}, notebook_path=str(path)).name

    cache = [c.replace("table = 'sales'", "table = 'orders'") for c in nbs.DATA_CACHE]
    pool = [c.replace("pool = 'cpu-pool'", "pool = 'gpu-pool'") for c in nbs.RUNTIME_PATCH]
    pairs = [
        (submitted("sales", nbs.DATA_CACHE), submitted("orders", cache), "initializer"),
        (submitted("cpu", nbs.RUNTIME_PATCH), submitted("gpu", pool), "runtime_patches"),
    ]
    for first, second, changed in pairs:
        differ = {d["field"]: d["values"] for d in compare(backend, [first, second]).differences}
        assert [f for f in differ if f.split(".")[0] in ("initializer", "runtime_patches")] == [
            next(f for f in differ if f.startswith(changed))
        ], differ
        old, new = next(v for f, v in differ.items() if f.startswith(changed))
        assert ("sales" in old and "orders" in new) or ("cpu-pool" in old and "gpu-pool" in new)


def test_the_defaults_of_a_notebooks_own_function_are_read_as_a_tagged_ones():
    """A compiled function keeps the signature the notebook wrote (positional-or-keyword,
    annotated): its defaults are what a job that set none ran with, as keyword-only ones are."""
    from kale_ext.compile import compile_notebook
    from kale_ext.runs.diff import parameter_defaults

    own = "def train_fn(model: str, epochs: int = 2, *, lr=0.1):\n    print(model, epochs, lr)\n"
    job = compile_notebook(notebook((own, ["entrypoint"])))
    assert parameter_defaults(job.source, "train_fn") == {"epochs": "2", "lr": "0.1"}
    tagged = compile_notebook(tiny(BEFORE))
    assert parameter_defaults(tagged.source, tagged.function_name) == {"epochs": "2"}
