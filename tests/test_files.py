import os
import re
import stat
import subprocess
import sys

import pytest

from kale_ext.files import umask, write_atomic
from tests.conftest import notebook


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_get_the_users_umask(tmp_path, mask, expected):
    old = os.umask(mask)
    try:
        assert umask() == mask
        write_atomic(tmp_path / "a" / "out.txt", "x")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a" / "out.txt") == expected
    assert (tmp_path / "a" / "out.txt").read_text() == "x"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["out.txt"]  # no temporary left


def test_compiled_module_and_trainjob_get_the_users_umask(write_nb, tmp_path):
    """`kale-ext compile --trainjob` as a user with umask 022 runs it: both files 0644."""
    path = write_nb(notebook("print(1)"))
    out = subprocess.run(
        [sys.executable, "-m", "kale_ext.cli", "compile", str(path), "-o", str(tmp_path / "b")]
        + ["--trainjob"],
        capture_output=True,
        text=True,
        umask=0o022,
    )
    assert out.returncode == 0, out.stderr
    written = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert "trainjob.yaml" in written and any(n.endswith(".py") for n in written)
    assert {n: mode(tmp_path / "b" / n) for n in written} == {n: 0o644 for n in written}


# -- every reader of a file the user controls, against every special file ------------------------

ATTACKS = ("fifo", "dev_zero", "link_out", "oversize", "deep")
#: What each attack's refusal says, wherever it is read.
SAYS = {"fifo": "a FIFO|not a regular file", "dev_zero": "a device|outside|not a regular file",
        "link_out": "outside", "oversize": "limit", "deep": "nested"}  # fmt: skip


def plant(path, attack: str, limit: int, tmp_path) -> None:
    """Put the attack at ``path``: a FIFO, a link to /dev/zero, a link out of its folder, a
    (sparse) file one byte over the reader's bound, JSON nested 5,000 deep (10,000 bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if attack == "fifo":
        os.mkfifo(path)
    elif attack == "dev_zero":
        path.symlink_to("/dev/zero")
    elif attack == "link_out":
        outside = tmp_path / "elsewhere" / path.name
        outside.parent.mkdir(exist_ok=True)
        outside.write_text("{}")
        path.symlink_to(outside)
    elif attack == "oversize":
        with open(path, "wb") as f:
            f.truncate(limit + 1)  # no disk taken: its size alone is refused, before any read
    else:
        path.write_text("[" * 5_000 + "]" * 5_000)


def said(call) -> str:
    """What ``call`` answered: its error's message, else what it returned, as text."""
    try:
        return repr(call())
    except Exception as e:  # noqa: BLE001 (any refusal: its message is what is checked)
        return f"{type(e).__name__}: {e}"


def _ignore_file(tmp_path):
    from kale_ext.files import MAX_IGNORE_BYTES
    from kale_ext.job.workspace import collect

    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("1")
    return root / "data" / ".gitignore", MAX_IGNORE_BYTES, lambda: collect(root).skipped


def _kaleignore(tmp_path):
    path, limit, call = _ignore_file(tmp_path)
    return path.with_name(".kaleignore"), limit, call


def _notebook_cli(tmp_path):
    from kale_ext.compile.notebook import read_notebook
    from kale_ext.files import MAX_NOTEBOOK_BYTES

    path = tmp_path / "project" / "nb.ipynb"
    return path, MAX_NOTEBOOK_BYTES, lambda: read_notebook(path)


def _notebook_server(tmp_path):
    from kale_ext.server.paths import read_notebook_bytes

    root = tmp_path / "project"
    return root / "nb.ipynb", 1000, lambda: read_notebook_bytes(str(root), "nb.ipynb", True, 1000)


def _job_record(tmp_path):
    from kale_ext.backends.local.records import read_checked
    from kale_ext.files import MAX_RECORD_BYTES

    job = tmp_path / "jobs" / "j1"
    return job / "job.json", MAX_RECORD_BYTES, lambda: read_checked(job, "j1")


def _snapshot(name):
    def setup(tmp_path):
        from types import SimpleNamespace

        from kale_ext.backends.snapshots import NOTEBOOK, RECORD, load, root, save
        from kale_ext.files import MAX_NOTEBOOK_BYTES, MAX_RECORD_BYTES

        backend = SimpleNamespace(jobs_dir=tmp_path / "jobs")
        spec = SimpleNamespace(options={}, folder=tmp_path / "project",
                               job=SimpleNamespace(notebook_sha256="abc"))  # fmt: skip
        save(backend, "j1", b"{}", spec, None)
        which = RECORD if name == "record" else NOTEBOOK
        limit = MAX_RECORD_BYTES if name == "record" else MAX_NOTEBOOK_BYTES
        return root(backend) / "j1" / which, limit, lambda: load(backend, "j1", "abc")

    return setup


def _result(which):
    def setup(tmp_path):
        import json

        from kale_ext.backends import results
        from kale_ext.compile.resultsave import FOLDER, INFO, VALUE_JSON

        folder = tmp_path / "outputs" / "j1"
        (folder / FOLDER).mkdir(parents=True)
        info = {"saved": True, "format": "json", "size": 10_000, "reason": None, "type": "dict"}
        (folder / FOLDER / INFO).write_text(json.dumps(info))
        (folder / FOLDER / VALUE_JSON).write_text('{"a": 1}')
        results.outputs_folder = lambda backend, name: folder  # undone by the test's monkeypatch
        if which == "info":
            return folder / FOLDER / INFO, results.MAX_INFO, lambda: results.read_info(folder)
        return folder / FOLDER / VALUE_JSON, 10_000, lambda: results.saved_value(None, "j1")

    return setup


def _output_load(tmp_path):
    from kale_ext.backends.results import MAX_LOAD, load_file

    folder = tmp_path / "outputs" / "j1"
    path = folder / "metrics.json"
    return path, MAX_LOAD, lambda: load_file(path, inside=folder)


def _panel_state(tmp_path):
    from kale_ext.files import MAX_RECORD_BYTES
    from kale_ext.server import panel_state

    root = tmp_path / "project"
    (root / "nb.ipynb").parent.mkdir(parents=True, exist_ok=True)
    (root / "nb.ipynb").write_text("{}")
    path = panel_state._file_of((root / "nb.ipynb").resolve())
    return path, MAX_RECORD_BYTES, lambda: panel_state.read_state(str(root), "nb.ipynb", True)


def _panel_notebook(tmp_path):
    from kale_ext.server import panel_state

    root = tmp_path / "project"
    return root / "nb.ipynb", 1000, lambda: panel_state.read_state(str(root), "nb.ipynb", True)


def _sweep_record(tmp_path):
    from kale_ext.files import MAX_RECORD_BYTES
    from kale_ext.runs import record

    os.environ["KALE_EXT_JOBS_DIR"] = str(tmp_path / "jobs")  # undone by the test's monkeypatch
    return record.sweep_dir("s1") / record.RECORD, MAX_RECORD_BYTES, lambda: record.read("s1")


def _progress(tmp_path):
    from kale_ext.backends.local.progressfile import MAX_FILE, PROGRESS_FILE, read_progress

    job = tmp_path / "jobs" / "j1"
    return job / PROGRESS_FILE, MAX_FILE, lambda: read_progress(job)


#: One row per reader: (name, setup(tmp_path) -> (the file, its bound, the read), what each
#: attack it does not refuse with SAYS's words answers instead).
READERS = [
    ("workspace .gitignore", _ignore_file, {"deep": None}),
    ("workspace .kaleignore", _kaleignore, {"deep": None}),
    ("notebook (CLI, magics)", _notebook_cli, {"link_out": None}),
    ("notebook (server, by path)", _notebook_server, {"deep": None}),
    ("job record", _job_record, {}),
    ("snapshot record", _snapshot("record"), {"deep": "no snapshot"}),
    ("snapshot notebook", _snapshot("notebook"), {"deep": "has changed"}),
    ("result record", _result("info"), {}),
    ("result value", _result("value"), {}),
    ("outputs.load", _output_load, {}),
    ("panel state", _panel_state, {a: "'state': None" for a in ATTACKS}),
    ("panel state's notebook", _panel_notebook, {"link_out": None, "oversize": "'state': None",
                                                 "deep": "'state': None"}),
    ("sweep record", _sweep_record, {}),
    ("progress", _progress, {a: "None" for a in ATTACKS}),
]  # fmt: skip


WALK = [
    pytest.param(reader, setup, attack, instead.get(attack, SAYS[attack]), id=f"{reader}-{attack}")
    for reader, setup, instead in READERS
    for attack in ATTACKS
    if instead.get(attack, SAYS[attack]) is not None  # None: no attack there (a link followed)
]


@pytest.mark.parametrize("reader, setup, attack, expected", WALK)
def test_every_reader_refuses_special_files(tmp_path, monkeypatch, reader, setup, attack, expected):
    """A FIFO never blocks, /dev/zero is never read, a link out is refused where the file must
    stay in its folder, a file over its bound is refused before it is read, deep JSON is a
    clear error: each within seconds, naming what is wrong (or, for a reader whose file is only
    a convenience, read as none)."""
    import threading

    from kale_ext.backends import results

    monkeypatch.setattr(results, "outputs_folder", results.outputs_folder)
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", os.environ.get("KALE_EXT_JOBS_DIR", ""))
    path, limit, call = setup(tmp_path)
    plant(path, attack, limit, tmp_path)
    answer: list[str] = []
    reading = threading.Thread(target=lambda: answer.append(said(call)), daemon=True)
    reading.start()
    reading.join(20)
    if reading.is_alive() and attack == "fifo":  # let the stuck reader go before failing
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    assert answer, f"{reader} hangs on {attack}"
    assert re.search(expected, answer[0]), answer[0][:500]


def test_private_writes_are_0600_in_a_0700_folder(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    write_atomic(folder / "a.json", "{}", private=True)
    assert mode(folder / "a.json") == 0o600 and mode(folder) == 0o700
    write_atomic(tmp_path / "new" / "deeper" / "b.json", "{}", private=True)
    assert mode(tmp_path / "new" / "deeper") == 0o700


@pytest.mark.parametrize("code, says", [(28, "full (no space left"), (30, "read-only"),
                                        (122, "over its quota")])  # fmt: skip
@pytest.mark.parametrize("where", ["mkstemp", "fsync"])
def test_a_full_or_read_only_folder_is_a_507_naming_it(tmp_path, monkeypatch, code, says, where):
    from kale_ext.errors import StorageError

    def fails(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr("tempfile.mkstemp" if where == "mkstemp" else "os.fsync", fails)
    with pytest.raises(StorageError) as e:
        write_atomic(tmp_path / "jobs" / "job.json", "{}")
    assert e.value.status == 507 and says in str(e.value)
    assert str(tmp_path / "jobs") in str(e.value)
    assert list((tmp_path / "jobs").iterdir()) == []  # no temporary left


def test_a_read_holds_what_the_file_holds_not_its_bound(tmp_path):
    """A 2-byte record read under a 16 MiB bound takes bytes, not the bound (a log's tail read
    beside it stayed under 3 MiB only so); a file that grows past its size is read to the bound
    and refused beyond it."""
    import tracemalloc

    from kale_ext.errors import UnsafeFile
    from kale_ext.files import read_bytes

    small = tmp_path / "job.json"
    small.write_text("{}")
    tracemalloc.start()
    try:
        assert read_bytes(small, 16 * 2**20) == b"{}"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, peak
    with pytest.raises(UnsafeFile, match="limit is 1 bytes"):
        read_bytes(small, 1)
