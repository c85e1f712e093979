"""A job's snapshot (kale_ext/backends/snapshots.py) is verified before a rerun trusts it: its
notebook against the sha256 recorded, each field's type, its options against the schema, its
folder inside the server's root. Each failure is a 409 naming what does not match."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from kale_ext.backends.snapshots import NOTEBOOK, RECORD, load, root, save
from kale_ext.errors import BackendError
from tests.conftest import notebook

NB = json.dumps(notebook("print(1)")).encode()
SHA = hashlib.sha256(NB).hexdigest()


@pytest.fixture
def kept(tmp_path):
    """(backend, the snapshot's folder) of job `first`, kept as a submit keeps it."""
    backend = SimpleNamespace(jobs_dir=tmp_path / "jobs")
    spec = SimpleNamespace(options={"nodes": 2}, folder=tmp_path / "project",
                           job=SimpleNamespace(notebook_sha256=SHA))  # fmt: skip
    save(backend, "first", NB, spec, str(tmp_path / "project" / "nb.ipynb"))
    return backend, root(backend) / "first"


def edit_record(kept_in: Path, changes: dict) -> None:
    record = json.loads((kept_in / RECORD).read_text())
    (kept_in / RECORD).write_text(json.dumps({**record, **changes}))


@dataclass
class Case:
    name: str
    notebook: bytes | None = None  # written over the kept notebook
    record: dict = field(default_factory=dict)  # changed in the kept record
    says: str = ""


CASES = [
    Case("an edited notebook", notebook=NB.replace(b"print(1)", b"print(2)"),
         says="its kept notebook (" ),
    Case("options that are no object", record={"options": [1]},
         says="its kept options is not a dict"),
    Case("an option the schema does not know", record={"options": {"speed": 1}},
         says="its kept options do not match the schema: options.speed: unknown option"),
    Case("an option of the wrong type", record={"options": {"nodes": "many"}},
         says="its kept options do not match the schema: nodes: must be a whole number"),
    Case("a folder that is no text", record={"folder": 3}, says="its kept folder is not a str"),
    Case("a folder outside the server root", record={"folder": "/etc"},
         says="its recorded folder /etc is outside the server's root"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_what_does_not_match_its_record_is_refused_naming_it(kept, tmp_path, case: Case):
    backend, folder = kept
    if case.notebook is not None:
        (folder / NOTEBOOK).write_bytes(case.notebook)
    edit_record(folder, case.record)
    with pytest.raises(BackendError) as refused:
        load(backend, "first", SHA, confine=tmp_path)
    assert refused.value.status == 409 and case.says in str(refused.value), refused.value
    assert "job first is not rerun" in str(refused.value)


def test_a_snapshot_that_matches_is_loaded(kept, tmp_path):
    backend, _ = kept
    snapshot = load(backend, "first", SHA, confine=tmp_path)
    assert (snapshot.notebook, snapshot.options) == (NB, {"nodes": 2})
    assert load(backend, "first", SHA).folder == str(tmp_path / "project")  # no root: the CLI's


def test_a_snapshot_kept_before_its_own_sha256_was_recorded_is_checked_against_the_jobs(kept):
    """The job's sha256 is of the bytes sent, or of a notebook sent as JSON, sorted."""
    backend, folder = kept
    record = json.loads((folder / RECORD).read_text())
    del record["snapshot_sha256"]
    (folder / RECORD).write_text(json.dumps(record))
    assert load(backend, "first", SHA).notebook == NB
    sent = json.loads(NB)  # as the REST API keeps a notebook sent as JSON: not sorted
    sorted_sha = hashlib.sha256(json.dumps(sent, sort_keys=True).encode()).hexdigest()
    (folder / RECORD).write_text(json.dumps({**record, "notebook_sha256": sorted_sha}))
    assert load(backend, "first", sorted_sha).notebook == NB
    (folder / NOTEBOOK).write_bytes(NB.replace(b"print(1)", b"print(2)"))
    with pytest.raises(BackendError, match="has changed since it was submitted"):
        load(backend, "first", sorted_sha)


@pytest.mark.parametrize("text", ["[1, 2]", "not json", "[" * 100_000])
def test_a_record_that_is_no_object_is_no_snapshot(kept, text):
    backend, folder = kept
    (folder / RECORD).write_text(text)
    with pytest.raises(BackendError, match="no snapshot of the notebook it ran was kept") as e:
        load(backend, "first", SHA)
    assert e.value.status == 409
