"""A local job's workspace, with real processes and real torch.distributed: each node works in
its own copy of the notebook's folder; the user's folder is never written to."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from kale_ext.files import JOBS_MARK
from kale_ext.job.workspace import collect
from tests.conftest import notebook
from tests.job.test_workspace import tree

FILES = {"helpers.py": "def double(x):\n    return 2 * x\n", "data.csv": "a\n1\n3\n"}
NODES = notebook(
    ("import os\nimport torch.distributed as dist\nfrom helpers import double", ["imports"]),
    "dist.init_process_group('gloo')\n"
    "rank = dist.get_rank()\n"
    "total = double(sum(int(x) for x in open('data.csv').read().split()[1:]))\n"
    "open(f'mine-{rank}.txt', 'w').write(str(total))\n"
    "open('data.csv', 'a').write(f'{rank}\\n')  # changes this node's copy only\n"
    "dist.barrier()\n"
    "print('cwd', os.getcwd(), 'total', total, 'sees', sorted(f for f in os.listdir() if f.startswith('mine-')))\n"
    "dist.destroy_process_group()",
)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


def test_each_node_works_in_its_own_copy_and_the_users_folder_is_untouched(backend, tmp_path):
    folder = tree(tmp_path / "project", FILES)
    path = folder / "train.ipynb"
    path.write_text(json.dumps(NODES))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    submitted = submit(backend, path, {"nodes": 2})
    assert not [w for w in submitted.warnings if "helpers" in w]  # a local module, not a package
    info = backend.wait(submitted.name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    lines = [line for line in backend.logs(submitted.name) if line.text.startswith("cwd")]
    seen = {line.rank: line.text.split() for line in lines}
    assert set(seen) == {0, 1}
    for rank, words in seen.items():
        assert words[1] == str(backend.jobs_dir / submitted.name / f"node-{rank}")
        assert words[3] == "8"  # helpers imported, data.csv read
        assert words[5:] == [f"['mine-{rank}.txt']"]  # the other node's file is not here
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_no_workspace_runs_in_an_empty_folder_and_says_the_local_module_is_missing(
    backend, tmp_path
):
    folder = tree(tmp_path / "project", FILES)
    path = folder / "train.ipynb"
    path.write_text(
        json.dumps(notebook(("from helpers import double", ["imports"]), "print(double(2))"))
    )
    submitted = submit(backend, path, {"no_workspace": True})
    assert any("`helpers` is a module beside the notebook, but the job ships no workspace" in w
               for w in submitted.warnings)  # fmt: skip
    info = backend.wait(submitted.name, timeout=120, interval=0.1)
    assert info.status is Status.FAILED


def test_a_jobs_folder_inside_the_workspace_is_not_shipped(tmp_path):
    """KALE_EXT_JOBS_DIR in the notebook's folder: the second job did ship the first one's
    record, logs and snapshot (and was refused by the size cap once they grew)."""
    folder = tree(tmp_path / "project", FILES)
    path = folder / "train.ipynb"
    path.write_text(json.dumps(notebook("print(open('data.csv').read().split())")))
    backend = LocalBackend(folder / "jobs")
    first = submit(backend, path, {})
    assert backend.wait(first.name, timeout=120, interval=0.1).status is Status.COMPLETE
    second = submit(backend, path, {})
    assert backend.wait(second.name, timeout=120, interval=0.1).status is Status.COMPLETE
    node = backend.jobs_dir / second.name / "node-0"
    assert (node / "helpers.py").is_file() and not (node / "jobs").exists()

    # a jobs folder made before it was marked: marked when a backend opens it
    (folder / "jobs" / JOBS_MARK).unlink()
    LocalBackend(folder / "jobs")
    assert "jobs/" not in {f.path for f in collect(folder).files}
