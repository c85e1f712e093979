"""The workspace on a cluster: ConfigMaps the API server accepts, one volume that mounts them,
and the container's own command unpacking them into files identical to the user's."""

from __future__ import annotations

import base64
import os
import random
import shlex
import subprocess
from pathlib import Path

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.job.packing import PART_SIZE
from kale_ext.job.shipping import (
    MOUNT,
    PARTS_ENV,
    WORKDIR_ENV,
    configmap_names,
    configmaps,
    mount,
    volume,
)
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import BOOTSTRAP, training_command
from kale_ext.job.workspace import collect
from tests.conftest import notebook
from tests.harness.fake_kube import FakeKube
from tests.job.test_command import free_port
from tests.job.test_workspace import tree

FILES = {
    "helpers.py": "def double(x):\n    return 2 * x\n",
    "data.csv": "a,b\n1,2\n3,4\n",
    "mylib/__init__.py": "NAME = 'mylib'\n",
    "assets/blob.bin": random.Random(3).randbytes(50_000),
    "notes/ünïcode name.txt": "✓\n",
}
JOB = notebook(
    ("import csv\nfrom helpers import double\nimport mylib", ["imports"]),
    "rows = list(csv.DictReader(open('data.csv')))\n"
    "print('total', double(sum(int(r['a']) for r in rows)), mylib.NAME)",
)


@pytest.fixture
def workspace(tmp_path):
    root = tree(tmp_path / "ws", FILES)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "alias.py").symlink_to("helpers.py")
    return collect(root)


def test_configmaps_are_what_the_api_server_accepts(workspace, tmp_path):
    big = collect(tree(tmp_path / "big", {"w.bin": random.Random(1).randbytes(3 * PART_SIZE)}),
                  max_size=2**23)  # fmt: skip
    for ws in (workspace, big):
        packed = ws.packed()
        maps = configmaps(packed)
        assert [m["metadata"]["name"] for m in maps] == configmap_names(packed)
        assert len(maps) == packed.parts
        for m in maps:
            assert FakeKube().configmap_problems(m, "team") == []
            assert m["immutable"] is True
            assert m["metadata"]["labels"]["kale-ext.io/workspace"] == packed.sha256[:32]
    assert len(configmaps(big.packed())) == 4  # 3 MB of random bytes do not compress


def test_one_volume_holds_every_part_read_only(workspace):
    packed = workspace.packed()
    assert volume(packed) == {
        "name": "kale-ext-workspace",
        "projected": {
            "sources": [{"configMap": {"name": n}} for n in configmap_names(packed)],
            "defaultMode": 0o444,
        },
    }
    assert mount() == {"name": "kale-ext-workspace", "mountPath": MOUNT, "readOnly": True}


def test_the_bootstrap_reads_the_variables_the_local_backend_sets():
    assert PARTS_ENV in BOOTSTRAP and WORKDIR_ENV in BOOTSTRAP


def mounted(maps: list[dict], at: Path) -> Path:
    """The ConfigMaps' keys as the kubelet lays out a projected volume: the files in a
    timestamped folder, `..data` pointing at it, and each key a link through `..data`."""
    stamp = at / "..2026_01_01_00_00_00.000000001"
    stamp.mkdir(parents=True)
    for m in maps:
        for key, data in m["binaryData"].items():
            (stamp / key).write_bytes(base64.b64decode(data))
            (at / key).symlink_to(Path("..data") / key)
    (at / "..data").symlink_to(stamp.name)
    return at


def run_command(command: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    pet = {"PET_NNODES": "1", "PET_NPROC_PER_NODE": "1", "PET_NODE_RANK": "0",
           "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": str(free_port())}  # fmt: skip
    return subprocess.run(["bash", "-c", shlex.join(command)], env={**os.environ, **pet, **env},
                          capture_output=True, text=True, cwd=cwd, timeout=120)  # fmt: skip


def test_the_container_command_unpacks_the_configmaps_into_the_users_files(workspace, tmp_path):
    job = compile_notebook(JOB, local_modules=workspace.modules)
    assert job.warnings == [] and job.packages == []  # helpers and mylib are not packages
    spec = build_job_spec(job, workspace=workspace)
    parts = mounted(configmaps(workspace.packed()), tmp_path / "mount")
    work = tmp_path / "node-0"
    out = run_command(training_command(spec), {PARTS_ENV: str(parts), WORKDIR_ENV: str(work)},
                      tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "total 8 mylib" in out.stdout  # imported the local modules, read data.csv

    root = workspace.root
    unpacked = sorted(str(p.relative_to(work)) for p in work.rglob("*") if not p.is_dir())
    assert unpacked == sorted([*FILES, "run.sh", "alias.py"])
    for rel in FILES:
        assert (work / rel).read_bytes() == (root / rel).read_bytes(), rel
    assert os.readlink(work / "alias.py") == "helpers.py"
    assert os.access(work / "run.sh", os.X_OK)


def test_a_workspace_that_is_not_the_submitted_one_stops_the_job(workspace, tmp_path):
    spec = build_job_spec(compile_notebook(JOB, local_modules=workspace.modules),
                          workspace=workspace)  # fmt: skip
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "part-000").write_bytes(b"not the archive")
    out = run_command(training_command(spec), {PARTS_ENV: str(parts)}, tmp_path)
    assert out.returncode == 1
    assert f"kale_ext: the workspace in {parts} is not the one submitted" in out.stderr
