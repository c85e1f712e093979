"""A job from Python, as a notebook's cell uses it: kale_ext.run() submits a real 2-node local job
and returns at once; job(NAME).result() (the cell the panel inserts, run from the notebook's
folder) returns the dict and the tensor rank 0 returned; .outputs lists and loads its files; a
failed job raises its failure with the cell and line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas
import pytest
import torch

import kale_ext
from kale_ext.errors import ConfigError, JobFailed, KaleExtError, NoResult, NotFound
from kale_ext.runs.handle import JobHandle, backend_for
from tests.conftest import ROOT, notebook
from tests.harness.emulated import emulated_cluster  # noqa: F401 (fixture)
from tests.harness.kube_fixtures import backend, kube, kubeconfig, make_spec  # noqa: F401

FIT = """def fit(epochs=2):
    import json, os
    import numpy as np
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    w = torch.full((2,), float(rank + 1))
    dist.all_reduce(w)
    out = os.environ["KALE_EXT_OUTPUT_DIR"]
    if rank == 0:  # Python files: the emulated cluster's mounts are seen by open() alone
        with open(os.path.join(out, "model.pt"), "wb") as f:
            torch.save({"w": w}, f)
        with open(os.path.join(out, "metrics.json"), "w") as f:
            json.dump({"epochs": epochs}, f)
        with open(os.path.join(out, "history.csv"), "w") as f:
            f.write("epoch,loss\\n1,0.5\\n2,0.25\\n")
        np.save(os.path.join(out, "w.npy"), w.numpy())
    dist.destroy_process_group()
    return {"world": world, "epochs": epochs, "w": w}
"""
BROKEN = """def broken():
    data = {"x": 1}
    return data["label"]
"""
TIMEOUT = 240


def _isolated(mp: pytest.MonkeyPatch, base: Path) -> None:
    """This module's own Jupyter folders and jobs folder (tests/conftest.py does it per test)."""
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTERLAB_SETTINGS_DIR", "lab"), ("KALE_EXT_CACHE_DIR", "cache"),
                     ("KALE_EXT_JOBS_DIR", "jobs")):  # fmt: skip
        mp.setenv(var, str(base / sub))
    mp.delenv("KALE_EXT_BACKEND", raising=False)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """One real 2-node job, submitted from its notebook's folder, and its handle once ended."""
    base = tmp_path_factory.mktemp("handle")
    folder = base / "project"
    folder.mkdir()
    (folder / "fit.ipynb").write_text(json.dumps(notebook((FIT, ["entrypoint"]))))
    with pytest.MonkeyPatch.context() as mp:
        _isolated(mp, base)
        mp.chdir(folder)
        job = kale_ext.run("fit.ipynb", backend="local", nodes=2, parameters={"epochs": 3})
        assert isinstance(job, JobHandle) and job.status in ("Created", "Queued", "Running")
        value = job.result(timeout=TIMEOUT)
        yield {"job": job, "value": value, "folder": folder, "base": base}


def test_result_returns_the_dict_and_the_tensor_rank_0_returned(fitted):
    value = fitted["value"]
    assert value["world"] == 2 and value["epochs"] == 3
    assert type(value["w"]) is torch.Tensor and value["w"].tolist() == [3.0, 3.0]  # all_reduce
    assert fitted["job"].info().status.value == "Complete"


def test_the_panels_cell_finds_the_job_from_the_notebooks_folder(fitted):
    """What "Load into the notebook" inserts, in a new Python whose working folder is the
    notebook's, as a kernel's is."""
    cell = (
        f'from kale_ext import get_job\nresult = get_job("{fitted["job"].name}").result()\n'
        "print(result['world'], result['w'].tolist())"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTERLAB_SETTINGS_DIR", "lab"), ("KALE_EXT_JOBS_DIR", "jobs")):  # fmt: skip
        env[var] = str(fitted["base"] / sub)
    env.pop("KALE_EXT_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", cell], cwd=fitted["folder"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 [3.0, 3.0]\n"


@dataclass
class Output:
    path: str
    check: object


OUTPUTS = [
    Output("model.pt", lambda v: v["w"].tolist() == [3.0, 3.0]),
    Output("metrics.json", lambda v: v == {"epochs": 3}),
    Output("history.csv", lambda v: isinstance(v, pandas.DataFrame) and len(v) == 2),
    Output("w.npy", lambda v: v.tolist() == [3.0, 3.0]),
]


@pytest.mark.parametrize("case", OUTPUTS, ids=[o.path for o in OUTPUTS])
def test_outputs_load_what_the_job_wrote(case, fitted):
    assert case.check(fitted["job"].outputs.load(case.path))


def test_outputs_list_the_jobs_files_not_its_saved_result(fitted):
    outputs = fitted["job"].outputs
    assert [f.path for f in outputs] == ["history.csv", "metrics.json", "model.pt", "w.npy"]
    assert outputs.folder == fitted["folder"] / "outputs" / fitted["job"].name
    assert (outputs.folder / ".kale-ext" / "value.pt").is_file()  # it is there, kept apart
    listing = fitted["job"].backend.outputs(fitted["job"].name)  # as the CLI and panel list it
    assert [f.path for f in listing.files] == [f.path for f in outputs]
    assert "model.pt (1.5 KiB)" in repr(outputs)
    for bad, says in (("../fit.ipynb", "is not among the outputs"), ("nope.pt", "has no output")):
        with pytest.raises(KaleExtError, match=says):
            outputs.load(bad)


def test_a_deleted_jobs_kept_outputs_still_give_its_result(fitted, tmp_path, monkeypatch):
    """Copy the job's record and outputs elsewhere, delete that copy: the result stays."""
    import shutil

    job = fitted["job"]
    jobs = tmp_path / "jobs"
    shutil.copytree(job.backend.jobs_dir / job.name, jobs / job.name)
    local = type(job.backend)(jobs)
    assert local.delete(job.name).startswith("kept its outputs")
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(jobs))
    again = kale_ext.get_job(job.name, backend="local")
    assert again.result()["w"].tolist() == [3.0, 3.0]


def test_a_failed_job_raises_its_failure_with_cell_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    (tmp_path / "broken.ipynb").write_text(
        json.dumps(notebook("import os", (BROKEN, ["entrypoint"])))
    )
    job = kale_ext.run("broken.ipynb", backend="local")
    with pytest.raises(JobFailed) as e:
        job.result(timeout=TIMEOUT)
    assert re.fullmatch(
        rf'job {job.name} failed: node 0, rank 0: cell 2 \("entrypoint"\), line 3: '
        r"KeyError: 'label'",
        str(e.value),
    ), str(e.value)
    assert e.value.failure.line == 3 and e.value.failure.cell_index == 1
    assert isinstance(e.value, kale_ext.JobFailed)  # as the package names it


def test_run_refuses_a_bad_option_naming_it_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    with pytest.raises(ConfigError, match="^nodes: must be at least 1, got 0$"):
        kale_ext.run(tmp_path / "missing.ipynb", backend="local", nodes=0)
    assert not (tmp_path / "jobs").exists()


def test_an_unknown_job_is_not_found(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    with pytest.raises(NotFound, match="no local job named 'nope'"):
        kale_ext.get_job("nope", backend="local")


def test_the_jobs_folder_is_the_servers(tmp_path, monkeypatch):
    """c.KaleExtApp.jobs_dir in the server's configuration: the kernel reads it too."""
    from jupyter_core.paths import jupyter_config_dir

    monkeypatch.delenv("KALE_EXT_JOBS_DIR", raising=False)
    config = Path(jupyter_config_dir()) / "jupyter_server_config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"KaleExtApp": {"jobs_dir": str(tmp_path / "server-jobs")}}))
    assert backend_for("local").jobs_dir == tmp_path / "server-jobs"


def test_get_job_is_the_function_beside_the_job_package():
    code = (
        "import kale_ext.job.options, kale_ext\n"
        "from kale_ext import get_job\n"
        "assert kale_ext.job.options.OPTIONS  # the job stage's package keeps its name\n"
        "try:\n"
        "    get_job('')\n"
        "except kale_ext.errors.KaleExtError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "a job's name is a non-empty string, not ''\n"


# -- on a cluster: through the outputs volume ----------------------------------------------------


def test_result_of_an_emulated_cluster_job_through_its_outputs_volume(
    emulated_cluster,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """A 2-node TrainJob on the emulated cluster writes rank 0's value to its claim; this
    machine reads it where the claim is mounted (here: the folder the emulated kubelet keeps
    it in), and says plainly where it is not."""
    from kale_ext.backends.results import CLAIMS_ENV

    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "results"},
             "spec": {"accessModes": ["ReadWriteMany"],
                      "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
    emulated_cluster.create("v1/persistentvolumeclaims", claim, emulated_cluster.namespace)
    (tmp_path / "fit.ipynb").write_text(json.dumps(notebook((FIT, ["entrypoint"]))))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CLAIMS_ENV, raising=False)
    job = kale_ext.run("fit.ipynb", backend="kubernetes", nodes=2, outputs="pvc:results",
                       name="fit-on-cluster")  # fmt: skip
    with pytest.raises(NoResult, match="PersistentVolumeClaim results .* is not mounted at"):
        job.result(timeout=TIMEOUT)  # said at once: no waiting for what cannot be read here
    held = emulated_cluster.folder / "claims" / emulated_cluster.namespace / "results"
    monkeypatch.setenv(CLAIMS_ENV, f"results={held}")
    value = job.result(timeout=TIMEOUT)
    assert job.info().status.value == "Complete"
    assert value["world"] == 2 and value["w"].tolist() == [3.0, 3.0]
    assert type(value["w"]) is torch.Tensor
    assert [f.path for f in job.outputs] == ["history.csv", "metrics.json", "model.pt", "w.npy"]
    assert job.outputs.load("metrics.json") == {"epochs": 2}


def test_a_cluster_job_without_an_outputs_volume_says_so_at_once(backend, kube):  # noqa: F811
    backend.submit(make_spec())  # on the fake API: it never ends
    with pytest.raises(NoResult, match="kept no outputs to read back: no outputs volume"):
        JobHandle(backend, "fit").result(timeout=60)
