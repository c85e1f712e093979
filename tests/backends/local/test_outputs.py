"""A local job's outputs, with real processes: gathered into outputs/<job>/ beside the notebook,
per node only when names clash, listed while the job runs, kept by delete unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.outputs import KEPT, gather, staging
from kale_ext.backends.submit import submit
from kale_ext.errors import BackendError
from kale_ext.files import JOBS_MARK
from tests.backends.local.waiting import until
from tests.conftest import notebook


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


def write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


@pytest.mark.parametrize(
    "nodes, gathered",
    [
        ({0: {"model.pt": "w"}, 1: {}}, {"model.pt": "w"}),
        ({0: {"a.txt": "0"}, 1: {"sub/b.txt": "1"}}, {"a.txt": "0", "sub/b.txt": "1"}),
        ({0: {"log.txt": "0", "a": "x"}, 1: {"log.txt": "1"}},
         {"node-0/log.txt": "0", "node-0/a": "x", "node-1/log.txt": "1"}),
        ({0: {}, 1: {}}, {}),
        # issue 42: rank 0 returned nothing; what node 1 wrote as a result is no result
        ({0: {"a.txt": "0"}, 1: {".kale-ext/info.json": "{}", ".kale-ext/value.json": "1"}},
         {"a.txt": "0"}),
        ({0: {".kale-ext/value.json": "0"}, 1: {".kale-ext/value.json": "1"}},
         {".kale-ext/value.json": "0"}),
    ],
)  # fmt: skip
def test_gathering_is_flat_unless_two_nodes_wrote_the_same_name(tmp_path, nodes, gathered):
    job_dir = tmp_path / "job"
    for k, files in nodes.items():
        write(staging(job_dir, k), files)
    final = tmp_path / "outputs" / "job"
    assert gather(job_dir, final) == len(gathered)
    found = {str(p.relative_to(final)): p.read_text() for p in final.rglob("*") if p.is_file()}
    assert found == gathered
    assert not (job_dir / "outputs").exists()
    assert final.exists() == bool(gathered)


#: Each rank (torchrun's RANK: no torch needed in the node) writes a file, rank 0 the model too;
#: with a gate, every node waits for it before ending.
WRITES = notebook(
    ("import os, time", ["imports"]),
    ("gate = ''", ["parameters"]),
    "rank = int(os.environ['RANK'])\n"
    "out = os.environ['KALE_EXT_OUTPUT_DIR']\n"
    "open(os.path.join(out, f'part-{rank}.txt'), 'w').write('x' * (rank + 1) * 10)\n"
    "if rank == 0:\n"
    "    open(os.path.join(out, 'model.pt'), 'w').write('weights')\n"
    "while gate and not os.path.exists(gate):\n"
    "    time.sleep(0.02)",
)


def project(tmp_path: Path) -> Path:
    path = tmp_path / "project" / "train.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(WRITES))
    return path


def test_outputs_are_listed_while_running_gathered_at_the_end_and_kept_by_delete(backend, tmp_path):
    path, gate = project(tmp_path), tmp_path / "go"
    name = submit(backend, path, {"nodes": 2, "parameters": {"gate": str(gate)}}).name
    running = until(lambda: len(backend.outputs(name).files) == 3 and backend.outputs(name),
                    "the nodes' files")  # fmt: skip
    final = path.parent / "outputs" / name
    assert running.location == str(final) and "gathered into" in running.note
    assert [f.path for f in running.files] == ["node-0/model.pt", "node-0/part-0.txt",
                                               "node-1/part-1.txt"]  # fmt: skip
    gate.touch()
    assert backend.wait(name, timeout=120, interval=0.1).status is Status.COMPLETE
    done = backend.outputs(name)
    assert done.note is None
    assert [(f.path, f.size) for f in done.files] == [
        ("model.pt", 7), ("part-0.txt", 10), ("part-1.txt", 20)]  # fmt: skip

    copied = backend.copy_outputs(name, tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["model.pt", "part-0.txt",
                                                                    "part-1.txt"]  # fmt: skip
    assert copied.note == f"copied from {final}"

    assert backend.delete(name) == f"kept its outputs in {final} (delete them too with --outputs)"
    assert backend.list_jobs() == [] and (final / "model.pt").read_text() == "weights"
    assert backend.outputs(name) == done  # still listed once the job is gone


def test_delete_with_outputs_deletes_them_and_a_rerun_of_the_name_is_refused(backend, tmp_path):
    path = project(tmp_path)
    name = submit(backend, path, {"nodes": 1, "name": "again"}).name
    assert backend.wait(name, timeout=120, interval=0.1).status is Status.COMPLETE
    final = path.parent / "outputs" / "again"
    with pytest.raises(BackendError, match="a job named again exists already"):
        submit(backend, path, {"name": "again"})
    backend.delete(name)
    with pytest.raises(BackendError, match=f"{final} holds the outputs of an earlier job"):
        submit(backend, path, {"name": "again"})
    # refused before anything started (the deleted job's note of its kept outputs aside)
    assert sorted(p.name for p in backend.jobs_dir.iterdir()) == sorted([KEPT, JOBS_MARK])
    (final / "model.pt").unlink()
    (final / "part-0.txt").unlink()
    name = submit(backend, path, {"name": "again"}).name  # an empty folder is no clash
    backend.wait(name, timeout=120, interval=0.1)
    assert backend.delete(name, outputs=True) == f"deleted its outputs in {final}"
    assert not final.exists()


def test_a_cancelled_job_keeps_what_it_wrote(backend, tmp_path):
    path, gate = project(tmp_path), tmp_path / "never"
    name = submit(backend, path, {"nodes": 2, "parameters": {"gate": str(gate)}}).name
    until(lambda: len(backend.outputs(name).files) == 3, "the nodes' files")
    note = backend.delete(name)  # stops the nodes: what they wrote is gathered first
    final = path.parent / "outputs" / name
    assert note.startswith(f"kept its outputs in {final}")
    assert sorted(p.name for p in final.iterdir()) == ["model.pt", "part-0.txt", "part-1.txt"]


def test_a_notebook_without_a_file_keeps_its_outputs_beside_the_jobs(backend):
    name = submit(backend, WRITES, {"nodes": 1}).name
    assert backend.wait(name, timeout=120, interval=0.1).status is Status.COMPLETE
    assert backend.outputs(name).location == str(backend.jobs_dir.parent / "outputs" / name)
