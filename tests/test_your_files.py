"""Issue 21's "done when", as a user meets it: a notebook that imports a module beside it and
reads a CSV beside it compiles without a missing-package warning, runs on 2 local nodes (real
torchrun) and leaves its output in outputs/<job>/, which `kale-ext delete` keeps; and the
TrainJob and ConfigMaps made for it on a cluster pass the Trainer's schema and rules, and the
container's own command unpacks them into files identical to the user's."""

from __future__ import annotations

import json
import random
from pathlib import Path

from kale_ext.backends.submit import submit
from kale_ext.job.shipping import PARTS_ENV, WORKDIR_ENV
from tests.cli import cli
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob
from tests.job.test_shipping import mounted, run_command

pytest_plugins = ["tests.harness.kube_fixtures"]  # the fake cluster: kube, backend

NOTEBOOK = notebook(
    ("import csv\nimport os\nimport torch.distributed as dist\nfrom helpers import double",
     ["imports"]),
    "dist.init_process_group('gloo')\n"
    "rank = dist.get_rank()\n"
    "rows = list(csv.DictReader(open('data.csv')))\n"
    "total = double(sum(int(r['a']) for r in rows))\n"
    "print(f'rank {rank}: total {total}', flush=True)\n"
    "if rank == 0:\n"
    "    with open(os.path.join(os.environ['KALE_EXT_OUTPUT_DIR'], 'total.txt'), 'w') as f:\n"
    "        f.write(str(total))\n"
    "dist.barrier()\n"
    "dist.destroy_process_group()",
)  # fmt: skip
FILES = {
    "helpers.py": b"def double(x):\n    return 2 * x\n",
    "data.csv": b"a,b\n1,2\n3,4\n",
    "lib/weights.bin": random.Random(21).randbytes(20_000),
}


def project(root: Path) -> Path:
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    path = root / "train.ipynb"
    path.write_text(json.dumps(NOTEBOOK))
    return path


def test_a_notebook_with_its_files_runs_on_two_local_nodes_and_its_output_lasts(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = project(tmp_path / "project")
    compiled = cli("compile", path)
    assert compiled.returncode == 0, compiled.stderr
    assert "warning" not in compiled.stdout + compiled.stderr  # helpers: a local module

    run = cli("run", path, "--backend", "local", "--nodes", "2", "--follow")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[rank 0] rank 0: total 8" in run.stdout and "[rank 1] rank 1: total 8" in run.stdout
    name = run.stderr.split()[1]
    final = path.parent / "outputs" / name
    assert (final / "total.txt").read_text() == "8"

    deleted = cli("delete", name, "--backend", "local")
    assert deleted.returncode == 0 and f"kept its outputs in {final}" in deleted.stdout
    assert (final / "total.txt").read_text() == "8"  # outlives the job
    assert "no jobs" in cli("jobs", "--backend", "local").stdout


def test_its_trainjob_and_configmaps_validate_and_unpack_to_the_users_files(
    backend,
    kube,
    tmp_path,
):
    path = project(tmp_path / "project")
    options = {"volumes": ["pvc:data:/data"], "shm_size": "1Gi", "service_account": "trainer",
               "nodes": 2}  # fmt: skip
    submitted = submit(backend, path, options)
    assert not [w for w in submitted.warnings if "helpers" in w]
    trainjob = kube.get("trainjobs", submitted.name)
    validate_trainjob(trainjob)  # the fake did on the way in; here for the reader
    maps = list(kube._store("configmaps", "team").values())
    assert maps and all(kube.configmap_problems(m, "team") == [] for m in maps)
    assert all(m["metadata"]["ownerReferences"][0]["name"] == submitted.name for m in maps)
    pod = trainjob["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    pod = pod["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "trainer"
    assert {v["name"] for v in pod["volumes"]} == {"kale-ext-workspace", "kale-ext-shm", "pvc-data"}

    parts = mounted(maps, tmp_path / "mount")  # as the kubelet lays the projected volume out
    work = tmp_path / "node-0"
    command = trainjob["spec"]["trainer"]["command"]
    env = {
        PARTS_ENV: str(parts),
        WORKDIR_ENV: str(work),
        "KALE_EXT_OUTPUT_DIR": str(tmp_path / "out"),
    }
    out = run_command(command, env, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 0: total 8" in out.stdout
    shipped = {str(p.relative_to(work)): p.read_bytes() for p in work.rglob("*") if p.is_file()}
    source = {str(p.relative_to(path.parent)): p.read_bytes()
              for p in path.parent.rglob("*") if p.is_file()}  # fmt: skip
    assert shipped == source  # byte for byte, the notebook included
    assert (tmp_path / "out" / "total.txt").read_text() == "8"


def test_without_its_workspace_the_preview_says_the_module_will_be_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    path = project(tmp_path / "project")
    out = cli("run", path, "--backend", "local", "--dry-run", "--no-workspace")
    assert out.returncode == 0, out.stderr
    assert "`helpers` is a module beside the notebook, but the job ships no workspace" in out.stdout
    assert "workspace  (none: the job gets no files)" in out.stdout
