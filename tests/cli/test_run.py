import json
import subprocess
import sys

import pytest

from tests.cli import cli, cli_process, project
from tests.conftest import EXAMPLES, notebook


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.ipynb")), ids=lambda p: p.name)
def test_compile_every_example(example, tmp_path):
    before = example.read_bytes()
    out = cli("compile", example, "-o", tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"compiled {example}" in out.stdout and "function" in out.stdout
    assert len(list(tmp_path.glob("*.py"))) == 1
    assert example.read_bytes() == before


def test_json_summary(tmp_path):
    out = cli("compile", EXAMPLES / "digits_ddp.ipynb", "-o", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["function_name"] == "digits_ddp"
    assert data["parameters"]["epochs"] == 6
    assert "torch" in data["packages"]  # by name: compile pins nothing
    [torch] = [p for p in data["package_sources"] if p["requirement"] == "torch"]
    assert (torch["source"], torch["module"], torch["check"]) == ("import", "torch", "import")
    assert (tmp_path / "digits_ddp.py").read_text() == data["source"]


def test_default_output_dir_is_beside_the_notebook(write_nb):
    path = write_nb(notebook("print(1)"), "hello.ipynb")
    out = cli("compile", path)
    assert out.returncode == 0, out.stderr
    assert (path.parent / ".kale_ext" / "hello.py").exists()


def test_compile_error_exits_non_zero_with_cell_and_line(write_nb, tmp_path):
    path = write_nb(notebook("x = 1", "print(y)"))
    out = cli("compile", path, "-o", tmp_path / "out")
    assert out.returncode == 1
    assert "error: cell 2, line 1: name `y` used in cell 2, line 1 is never defined" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content", [b"\x00\x01binary", b"{", b'{"nbformat": 5, "cells": []}'])
def test_unreadable_notebook(write_nb, content):
    out = cli("compile", write_nb(content))
    assert (
        out.returncode == 1 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr
    )


def test_missing_notebook(tmp_path):
    """Through the entry point, a process of its own (the other tests call main in-process)."""
    out = cli_process("compile", tmp_path / "nope.ipynb")
    assert out.returncode == 1 and "notebook not found" in out.stderr
    assert out.stdout == "" and "Traceback" not in out.stderr


def test_cli_does_not_import_jupyter_server_or_kubeflow(write_nb, tmp_path):
    path = write_nb(notebook("print(1)"))
    code = (
        "import sys; from kale_ext.cli import main; "
        f"assert main(['compile', {str(path)!r}, '-o', {str(tmp_path)!r}]) == 0; "
        "heavy = [m for m in ('jupyter_server', 'kubeflow', 'torch') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_help_has_examples():
    out = cli("compile", "--help")
    assert out.returncode == 0 and "examples:" in out.stdout


def test_compile_trainjob_applies_submit_settings(tmp_path):
    import yaml

    from tests.harness.crd import validate_trainjob

    out = cli("compile", EXAMPLES / "digits_ddp.ipynb", "-o", tmp_path, "--trainjob",
              "--nodes", "2", "--gpu", "1", "--cpu", "4", "--memory", "16Gi",
              "--runtime", "torch-distributed", "--param", "epochs=3", "--param", "lr=1e-3",
              "--name", "digits-run")  # fmt: skip
    assert out.returncode == 0, out.stderr
    # --param values are typed by the parameters cell: epochs = 6 is an int, lr = 0.05 a float
    assert "2 nodes × 1 process" in out.stdout
    assert '{"epochs": 3, "lr": 0.001}' in out.stdout
    labels = [line.split()[0] for line in out.stdout.splitlines() if line.startswith("  ")]
    assert labels.count("packages") == 1 and labels.count("function") == 1  # each line once
    obj = yaml.safe_load((tmp_path / "trainjob.yaml").read_text())
    validate_trainjob(obj)
    trainer = obj["spec"]["trainer"]
    assert obj["metadata"]["name"] == "digits-run" and trainer["numNodes"] == 2
    assert trainer["resourcesPerNode"]["limits"] == {
        "cpu": "4",
        "memory": "16Gi",
        "nvidia.com/gpu": "1",
    }


@pytest.mark.parametrize(
    "flags, pinned, why",
    [
        ([], True, "the default for local runs"),
        (["--no-pin-packages"], False, "--no-pin-packages asked"),
    ],
)
def test_compile_trainjob_says_where_each_package_comes_from(tmp_path, flags, pinned, why):
    from importlib.metadata import version

    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps(notebook(("import yaml", ["imports"]), "print(yaml)")))
    out = cli("compile", nb, "-o", tmp_path, "--trainjob", "--backend", "local", "--json", *flags)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    [package] = data["package_sources"]
    wanted = f"PyYAML=={version('PyYAML')}" if pinned else "PyYAML"
    assert (package["requirement"], package["pinned_here"]) == (wanted, pinned)
    assert package["origin"].startswith("imported (cell 1, line 1)")
    assert data["pinning"]["on"] is pinned and why in data["pinning"]["why"]
    plan = json.loads(data["trainjob"]["spec"]["trainer"]["command"][3])
    assert [p["requirement"] for p in plan["packages"]] == [wanted]


@pytest.mark.parametrize(
    "flags, code, message",
    [  # a flag's own value is refused as the command line is read (a usage error: 2)
        (["--cpu", "1 0"], 2, "argument --cpu: '1 0' is not a Kubernetes quantity"),
        (["--nodes", "0"], 2, "argument --nodes: must be at least 1"),
        (["--cpu", "0"], 2, "argument --cpu: must be more than 0, got 0"),
        (["--nodes", "5000"], 2, "argument --nodes: must be at most 1000, got 5000"),
        (["--name", "Bad_Name"], 1, "name: 'Bad_Name' is not a valid job name"),
        (["--param", "nope=1"], 1, "parameters.nope: the notebook has no such parameter"),
        (
            ["--param", "epochs=abc"],
            1,
            "parameters.epochs: expects an int (a whole number) like its default 6, not 'abc'",
        ),
    ],
)
def test_compile_trainjob_bad_settings(tmp_path, flags, code, message):
    out = cli("compile", EXAMPLES / "digits_ddp.ipynb", "-o", tmp_path, "--trainjob", *flags)
    assert out.returncode == code and message in out.stderr and "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir())  # nothing half-written


@pytest.mark.parametrize(
    "args, said",
    [
        (["run", "nb.ipynb", "--memory", "lots"], "kale-ext run: error: argument --memory: "
         "'lots' is not a Kubernetes quantity such as '500m' or '16Gi'"),
        (["run", "nb.ipynb", "--nodes", "0"],
         "kale-ext run: error: argument --nodes: must be at least 1, got 0"),
        ([], "kale-ext: error: the following arguments are required: COMMAND"),
    ],
)  # fmt: skip
def test_a_usage_error_is_its_one_line_and_where_the_help_is(args, said):
    out = cli(*args)
    prog = said.split(": error")[0]
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [said, f"see `{prog} --help`"]


def test_run_follow_streams_ranks_and_exits_with_the_status(jobs_env):
    out = cli("run", EXAMPLES / "plain_python.ipynb", "--backend", "local", "--nodes", "2",
              "--param", "steps=100", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "[rank 0] fitted a=" in out.stdout and "[rank 1] fitted a=" in out.stdout
    assert "submitted " in out.stderr and "] Complete" in out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]

    listing = cli("jobs", "--backend", "local")
    assert name in listing.stdout and "Complete" in listing.stdout
    logs = cli("logs", name, "--backend", "local", "--node", "1")
    lines = logs.stdout.splitlines()  # (torchrun's agent may log its exit barrier at the end)
    assert logs.returncode == 0 and "[rank 1] loss evaluated 2 times" in lines
    fitted = next(i for i, line in enumerate(lines) if line.startswith("[rank 1] fitted a="))
    assert fitted < lines.index("[rank 1] loss evaluated 2 times")  # in the order printed
    tail = cli("logs", name, "--backend", "local", "--node", "1", "--tail", "1")
    assert tail.stdout == logs.stdout.splitlines(keepends=True)[-1]
    assert cli("delete", name, "--backend", "local").stdout == f"deleted {name}\n"
    again = cli("delete", name, "--backend", "local")
    assert again.returncode == 1 and f"no local job named '{name}'" in again.stderr


def test_run_of_a_failing_job_exits_non_zero_with_the_reason(jobs_env, write_nb):
    path = write_nb(notebook("print('before')\nraise SystemExit(3)"))
    out = cli("run", path, "--backend", "local", "--follow")
    assert out.returncode == 1
    assert "[rank 0] before" in out.stdout
    said = """node 0, rank 0: cell 1 ("training"), line 2: SystemExit: 3"""
    assert f"Failed: {said}" in out.stderr
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]

    status = cli("status", name, "--backend", "local")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].startswith(f"{name}: Failed (local, torch-distributed, 1 node")
    assert said in lines and "failed first  node 0, rank 0" in lines
    assert 'where         cell 1 ("training"), line 2 (cell id c0)' in lines
    assert "last " in status.stdout and "  [rank 0] before" in lines
    data = json.loads(cli("status", name, "--backend", "local", "-o", "json").stdout)
    assert (data["failure"]["cell_index"], data["failure"]["line"]) == (0, 2)

    listed = cli("jobs", "--backend", "local", "--status", "failed", "-o", "json").stdout
    assert [j["name"] for j in json.loads(listed)] == [name]
    assert cli("jobs", "--backend", "local", "--status", "Complete").stdout == "no jobs\n"
    bad = cli("jobs", "--backend", "local", "--status", "lost")
    assert bad.returncode == 1 and "error: status: must be one of created, queued" in bad.stderr


def test_run_dry_run_submits_nothing(jobs_env):
    out = cli(
        "run", EXAMPLES / "digits_ddp.ipynb", "--backend", "local", "--nodes", "2", "--dry-run"
    )
    assert out.returncode == 0, out.stderr
    assert "kind: TrainJob" in out.stdout and "numNodes: 2" in out.stdout
    assert "no jobs" in cli("jobs", "--backend", "local").stdout


@pytest.mark.parametrize(
    "flags, shape, written",
    [(["--cpu", "2.5"], "2 nodes × 3 processes (the runtime's choice: 3 CPUs per node)",
      False),
     (["--cpu", "2.5", "--procs-per-node", "1"], "2 nodes × 1 process (asked)", True)],
)  # fmt: skip
def test_run_dry_run_says_what_the_runtime_will_choose(jobs_env, flags, shape, written):
    out = cli("run", EXAMPLES / "plain_python.ipynb", "--backend", "local", "--nodes", "2",
              "--dry-run", *flags)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"runtime    torch-distributed: {shape}" in out.stdout
    assert ("numProcPerNode: 1" in out.stdout) is written


def test_reported_metrics_are_printed_readably(jobs_env, write_nb):
    nb = notebook(
        ("from kale_ext import report", ["imports"]), "report(step=1, loss=0.5, accuracy=0.75)"
    )
    out = cli("run", write_nb(nb), "--backend", "local", "--follow")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[rank 0] step 1: loss 0.5, accuracy 0.75\n"


def test_compile_knows_the_modules_beside_the_notebook_and_shows_its_workspace(tmp_path):
    import yaml

    from tests.harness.crd import validate_trainjob

    path = project(tmp_path / "project")
    plain = cli("compile", path)
    assert plain.returncode == 0, plain.stderr
    assert "warning" not in plain.stdout  # helpers is a local module, not a missing package
    out = cli("compile", path, "--trainjob", "--backend", "local")
    assert out.returncode == 0, out.stderr
    assert f"workspace  {path.parent}: 3 file(s)" in out.stdout
    assert (
        "creates    ConfigMap kale-ext-workspace-" in out.stdout and "TrainJob train-" in out.stdout
    )
    build = path.parent / ".kale_ext"
    maps = list(yaml.safe_load_all((build / "workspace.yaml").read_text()))
    assert [m["kind"] for m in maps] == ["ConfigMap"] and "binaryData" in maps[0]
    trainjob = yaml.safe_load((build / "trainjob.yaml").read_text())
    validate_trainjob(trainjob)
    assert maps[0]["metadata"]["name"] in json.dumps(trainjob["spec"]["runtimePatches"])


@pytest.mark.parametrize(
    "flags, shown",
    [
        (["--no-workspace"], "workspace  (none: the job gets no files)"),
        (["--workspace", "."], "3 file(s)"),  # relative to the current folder
        (["--workspace-max-size", "10"], "error: workspace: "),
    ],
)
def test_workspace_flags(jobs_env, flags, shown):
    path = project(jobs_env / "project")
    out = cli("run", path.name, "--backend", "local", "--dry-run", *flags, cwd=path.parent)
    assert shown in out.stdout + out.stderr and "Traceback" not in out.stderr


def test_the_end_of_a_run_says_where_its_outputs_are_in_whole_lines(jobs_env):
    """Redirected (not a terminal), the reason stays one line however long; the last line
    names the outputs folder, relative to here, and that folder holds the files named."""
    root = jobs_env / "project"
    root.mkdir()
    key = "a_label_column_whose_name_is_long_enough_to_pass_eighty_columns"
    nb = notebook(
        ("import os", ["imports"]),
        "out = os.environ['KALE_EXT_OUTPUT_DIR']\n"
        "open(os.path.join(out, 'model.pt'), 'w').write('w')\n"
        f"{{}}['{key}']",
    )
    (root / "train.ipynb").write_text(json.dumps(nb))
    out = cli("run", "train.ipynb", "--backend", "local", "--follow", cwd=root)
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    name = lines[0].split()[1]
    said = f"""[{name}] Failed: node 0, rank 0: cell 2 ("training"), line 3: KeyError: '{key}'"""
    assert said in lines
    assert lines[-1] == f"outputs: outputs/{name}/: model.pt"
    assert (root / "outputs" / name / "model.pt").read_text() == "w"


def test_a_run_that_wrote_nothing_names_no_outputs(jobs_env, write_nb):
    out = cli("run", write_nb(notebook("print(1)")), "--backend", "local", "--follow")
    assert out.returncode == 0, out.stderr
    assert "] Complete" in out.stderr and "outputs" not in out.stderr


def test_piped_progress_comes_right_after_the_line_that_made_it(jobs_env, write_nb):
    """Piped (`make demo` into a file, CI), a progress line follows the log line that passed
    another tenth: never a poll's older answer printed after the lines that went past it."""
    import contextlib
    import io
    import re

    from kale_ext.cli import main

    source = "import time\nfor e in range(1, 7):\n    print(f'Epoch {e}/6', flush=True)\n"
    path = write_nb(notebook(source + "    time.sleep(0.3)"))
    both = io.StringIO()  # stdout (the logs) and stderr (status, progress) as one pipe
    with contextlib.redirect_stdout(both), contextlib.redirect_stderr(both):
        code = main(["run", str(path), "--backend", "local", "--follow"])
    lines = both.getvalue().splitlines()
    assert code == 0, lines
    progress = [(i, line) for i, line in enumerate(lines) if "] progress " in line]
    assert [re.search(r"progress (\d+)%", line)[1] for _, line in progress] == [
        "17", "33", "50", "67", "83", "100",
    ]  # fmt: skip
    for (i, line), epoch in zip(progress, range(1, 7), strict=True):
        assert lines[i - 1] == f"[rank 0] Epoch {epoch}/6", lines
        assert f"({epoch}/6 epochs)" in line


def _no_cluster(monkeypatch, tmp_path) -> None:
    """No kubeconfig anywhere: KUBECONFIG unset, a HOME without .kube, not inside a cluster."""
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KALE_EXT_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _runtime_notebook(runtime: str) -> tuple[dict, list[str]]:
    """A small notebook of the runtime's kind, and the flags that name the runtime: the SDK's
    train() call names it for the data-cache, jax and xgboost runtimes; a tagged notebook
    takes --runtime for the others."""
    from tests.compile import sdk_notebooks

    by_sdk = {
        "torch-distributed-with-cache": sdk_notebooks.DATA_CACHE,
        "jax-distributed": sdk_notebooks.JAX,
        "xgboost-distributed": sdk_notebooks.XGBOOST,
    }
    if runtime in by_sdk:
        return notebook(*by_sdk[runtime]), []
    return notebook(("lr = 0.1", ["parameters"]), "print(lr)"), ["--runtime", runtime]


def _every_published_runtime():
    from kale_ext.job.published_runtimes import RUNTIMES

    return sorted(RUNTIMES)


@pytest.mark.parametrize("backend", ["auto", "kubernetes"])
@pytest.mark.parametrize("runtime", list(_every_published_runtime()))
def test_compile_trainjob_needs_no_cluster_for_any_published_runtime(
    runtime, backend, tmp_path, monkeypatch, write_nb
):
    import yaml

    from tests.harness.crd import validate_trainjob

    _no_cluster(monkeypatch, tmp_path)
    nb, flags = _runtime_notebook(runtime)
    out = cli("compile", write_nb(nb), "-o", tmp_path / "out", "--trainjob", "--backend", backend,
              *flags)  # fmt: skip
    assert out.returncode == 0, out.stderr
    obj = yaml.safe_load((tmp_path / "out" / "trainjob.yaml").read_text())
    validate_trainjob(obj)
    assert obj["spec"]["runtimeRef"]["name"] == runtime
    # where the runtime's facts came from, unless the local backend runs it itself (an MPI
    # runtime: when this machine has Open MPI's mpirun)
    from kale_ext.backends.local.frameworks import LOCAL_RUNTIMES, unavailable

    runs_here = runtime in {r.name for r in LOCAL_RUNTIMES} and unavailable(runtime) is None
    local = backend == "auto" and runs_here
    said = f"runtime {runtime}: its facts are Kubeflow Trainer v2.3.0's published runtimes"
    assert (said in out.stdout) is not local


def test_a_dry_run_needs_no_cluster_and_says_where_the_runtime_came_from(
    tmp_path, monkeypatch, write_nb
):
    _no_cluster(monkeypatch, tmp_path)
    nb, _ = _runtime_notebook("torch-distributed-with-cache")
    out = cli("run", write_nb(nb), "--dry-run", "--backend", "kubernetes")
    assert out.returncode == 0, out.stderr
    assert "runtimeRef:" in out.stdout and "name: torch-distributed-with-cache" in out.stdout
    assert (
        "warning: runtime torch-distributed-with-cache: its facts are Kubeflow Trainer v2.3.0's "
        "published runtimes, not the cluster's (no cluster is configured)"
    ) in out.stdout


def test_running_still_needs_the_cluster(tmp_path, monkeypatch, write_nb):
    _no_cluster(monkeypatch, tmp_path)
    nb, _ = _runtime_notebook("torch-distributed-with-cache")
    out = cli("run", write_nb(nb), "--backend", "kubernetes")
    assert out.returncode != 0 and "no usable Kubernetes configuration" in out.stderr
    out = cli("run", write_nb(nb), "--backend", "local")
    assert out.returncode != 0
    assert "runtime 'torch-distributed-with-cache' runs only on a cluster" in out.stderr


def test_a_tpu_notebook_is_refused_locally_as_a_gpu_one_is(jobs_env, write_nb, monkeypatch):
    """The jax TPU notebook (google.com/tpu: 4) does not run on the CPU with no word."""
    from tests.compile import sdk_notebooks

    _no_cluster(monkeypatch, jobs_env)
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(jobs_env / "jobs"))

    call = ("client = TrainerClient()\n"
            "client.train(runtime='jax-distributed', trainer=CustomTrainer(func=train_jax,\n"
            "    num_nodes=1, resources_per_node={'google.com/tpu': 4}))\n")  # fmt: skip
    path = write_nb(notebook(sdk_notebooks.IMPORTS, sdk_notebooks.JAX_FN, call))
    out = cli("run", path, "--backend", "local")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert (
        "error: limits.google.com/tpu: the job asks for 4 google.com/tpu per node, and this "
        "machine has no google.com/tpu: ask for no google.com/tpu, allow CPU for local runs, or "
        "run on Kubernetes"
    ) in out.stderr
    assert not (jobs_env / "jobs").exists() or not any((jobs_env / "jobs").iterdir())
    # the refusal's ways out, applied: the cluster takes it (a preview needs none) ...
    shown = cli("run", path, "--backend", "kubernetes", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "google.com/tpu: '4'" in shown.stdout or "google.com/tpu: 4" in shown.stdout
    # ... and a local run that allows the CPU runs it there
    ran = cli("run", path, "--backend", "local", "--allow-cpu-for-gpu", "--follow")
    assert ran.returncode == 0, ran.stderr
    assert "jax process 0 10" in ran.stdout
