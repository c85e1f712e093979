"""A local job's checkpoints (backends/local/checkpoints.py): the lineage's folder, a second
job of the lineage resuming from the first's, and a Stop that lets on_stop save."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import NotFound, Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.checkpoints import LINEAGES, checkpoint_dir, local_checkpoints
from kale_ext.backends.submit import resolve, submit
from kale_ext.checkpoint import DIR_ENV, KEEP_ENV, MANIFEST, RUN_ENV
from kale_ext.errors import ConfigError
from tests.backends.local.waiting import until
from tests.conftest import notebook

#: Two ranks (torchrun's RANK, no torch in the workers) resume from the lineage's latest
#: checkpoint and save three more steps.
RESUMES = (
    ("from kale_ext import checkpoint\nimport os", ["imports"]),
    "state = checkpoint.latest()\nstart = state['step'] + 1 if state else 0\n"
    "print(f\"rank {os.environ['RANK']} starts at {start}\", flush=True)\n"
    "for step in range(start, start + 3):\n    checkpoint.save({'step': step}, step=step)\n",
)

#: Runs until stopped; its on_stop handler saves the step it reached.
UNTIL_STOPPED = (
    ("from kale_ext import checkpoint\nimport time", ["imports"]),
    "step = 0\ncheckpoint.on_stop(lambda: checkpoint.save({'step': step}, step=step))\n"
    "print('ready', flush=True)\nwhile True:\n    step += 1\n    time.sleep(0.02)\n",
)

PLAIN = ("print('no checkpoints')",)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs", capacity=4)


def spec_of(backend, nb, options=None):
    return resolve(backend, nb, options).spec


def texts(backend, name, rank=None):
    return [line.text for line in backend.logs(name) if rank is None or line.rank == rank]


def test_the_default_folder_is_the_lineages_in_the_jobs_folder(tmp_path):
    assert checkpoint_dir(tmp_path, "digits-ab12c") == (
        tmp_path / LINEAGES / "digits-ab12c" / "checkpoints"
    )


def test_a_job_that_uses_checkpoints_gets_its_lineages_folder(backend, tmp_path):
    spec = spec_of(backend, notebook(*RESUMES), {"name": "first", "keep_checkpoints": 3})
    env = local_checkpoints(spec, backend.jobs_dir)
    folder = checkpoint_dir(backend.jobs_dir, "first")
    assert env == {DIR_ENV: str(folder.resolve()), RUN_ENV: "first", KEEP_ENV: "3"}
    assert folder.is_dir()
    spec.options["lineage"] = "parent"  # as resume sets it
    assert local_checkpoints(spec, backend.jobs_dir)[DIR_ENV].endswith("/parent/checkpoints")


def test_a_job_that_uses_none_gets_none(backend):
    assert local_checkpoints(spec_of(backend, notebook(*PLAIN)), backend.jobs_dir) == {}


def test_checkpoints_dir_is_a_root_of_lineages_relative_to_the_notebook(backend, tmp_path):
    spec = spec_of(backend, notebook(*PLAIN), {"name": "one", "checkpoints": "ckpt"})
    spec.folder = tmp_path / "nb"
    assert local_checkpoints(spec, backend.jobs_dir)[DIR_ENV] == str(tmp_path / "nb/ckpt/one")


def test_a_claim_is_refused_locally_and_the_lineages_name_as_a_job(backend):
    spec = spec_of(backend, notebook(*PLAIN), {"checkpoints": "pvc:ckpt"})
    with pytest.raises(ConfigError, match="cluster's volume: locally give a folder"):
        local_checkpoints(spec, backend.jobs_dir)
    with pytest.raises(ConfigError, match="'lineages' is reserved: .* the local jobs folder"):
        submit(backend, notebook(*PLAIN), {"name": LINEAGES})
    with pytest.raises(NotFound):
        backend.delete(LINEAGES)  # never the lineages' folder


def test_a_second_job_of_the_lineage_resumes_where_the_first_saved(backend):
    first = submit(backend, notebook(*RESUMES), {"nodes": 2}).name
    info = backend.wait(first, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    assert {"rank 0 starts at 0", "rank 1 starts at 0"} <= set(texts(backend, first))
    steps = [json.loads(t.split(" ", 1)[1]) for t in texts(backend, first, 0) if "KALE_" in t]
    assert [r["checkpoint_step"] for r in steps] == [0, 1, 2]
    folder = checkpoint_dir(backend.jobs_dir, first)
    assert sorted(p.name for p in folder.glob("step-*")) == [
        "step-000000001.json",
        "step-000000002.json",
    ]
    backend.delete(first)  # the lineage's checkpoints outlive the job
    spec = spec_of(backend, notebook(*RESUMES), {"nodes": 2})
    spec.options["lineage"] = first  # as resume sets it
    second = backend.submit(spec).name
    info = backend.wait(second, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    assert {"rank 0 starts at 3", "rank 1 starts at 3"} <= set(texts(backend, second))
    assert json.loads((folder / MANIFEST).read_text())["step"] == 5


def test_a_stop_lets_on_stop_save_before_the_nodes_end(backend):
    name = submit(backend, notebook(*UNTIL_STOPPED), {"nodes": 2}).name
    until(lambda: texts(backend, name).count("ready") == 2, "both ranks to be ready")
    backend.stop(name, "stopped by the test")
    info = backend.get_job(name)
    assert info.status is Status.FAILED and info.reason == "stopped by the test"
    assert [n.state for n in info.nodes] == ["Stopped", "Stopped"]
    entry = json.loads((checkpoint_dir(backend.jobs_dir, name) / MANIFEST).read_text())
    assert entry["step"] >= 1  # the step it reached, saved as it stopped
    assert any("1 on_stop handler" in t for t in texts(backend, name, 0))
