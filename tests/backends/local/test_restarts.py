"""A local job's automatic restarts (max_restarts), with real jobs: a node that fails starts the
whole job again, each attempt's KALE_EXT_RESTART its number; a stop is never restarted; the
attempts' logs stay readable, parted by a line naming the restart."""

from __future__ import annotations

import pytest

from kale_ext.backends.base import Failure, LogQuery, Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.failures import error_file, log_end, torchrun_dir
from kale_ext.backends.local.records import read_record
from kale_ext.backends.local.restarts import completed_after, next_attempt, restart_note
from kale_ext.backends.submit import submit
from kale_ext.job.restarts import NO_CHECKPOINT
from tests.backends.local.waiting import until
from tests.conftest import notebook, without_exit_barrier

#: Node 1 fails on the job's first attempt only; every node says which attempt it runs.
FAILS_FIRST_TIME = (
    ("import os", ["imports"]),
    "attempt, rank = os.environ['KALE_EXT_RESTART'], os.environ['RANK']\n"
    "print(f'attempt {attempt} rank {rank}', flush=True)\n"
    "if attempt == '0' and rank == '1':\n"
    "    raise RuntimeError('the first attempt fails')\n"
    "print('done', flush=True)",
)
#: Node 1 fails on every attempt.
ALWAYS_FAILS = (
    ("import os", ["imports"]),
    "attempt, rank = os.environ['KALE_EXT_RESTART'], os.environ['RANK']\n"
    "print(f'attempt {attempt} rank {rank}', flush=True)\n"
    "if rank == '1':\n"
    "    raise RuntimeError(f'attempt {attempt} fails')\n",
)
#: The first attempt leaves files where a pod's filesystem would lose them (its working
#: directory, a workspace file changed, its temporary folder) and an output; node 1 then fails.
#: The second attempt fails unless it starts as a restarted pod does, its output kept.
LEAVES_FILES = (
    ("import os, tempfile", ["imports"]),
    "attempt, rank = os.environ['KALE_EXT_RESTART'], os.environ['RANK']\n"
    "out = os.environ['KALE_EXT_OUTPUT_DIR']\n"
    "tmp = os.path.join(tempfile.gettempdir(), 'left.txt')\n"
    "if attempt == '0':\n"
    "    for path in ('left.txt', 'data.txt', tmp, os.path.join(out, f'first-{rank}.txt')):\n"
    "        open(path, 'w').write('the first attempt')\n"
    "    if rank == '1':\n"
    "        raise RuntimeError('the first attempt fails')\n"
    "else:\n"
    "    assert not os.path.exists('left.txt'), 'the last attempt left left.txt'\n"
    "    assert not os.path.exists(tmp), 'the last attempt left ' + tmp\n"
    "    assert open('data.txt').read() == 'as submitted', open('data.txt').read()\n"
    "    assert os.path.exists(os.path.join(out, f'first-{rank}.txt')), 'its output is gone'\n"
    "    print('fresh', flush=True)",
)
#: Every node waits until it is stopped.
WAITS = (("import time", ["imports"]), "print('up', flush=True)\ntime.sleep(300)")


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs", capacity=2)


def texts(backend, name, node):
    """A node's log lines, but torchrun's exit-barrier line (tests.conftest), which may come
    last after a finished rank."""
    return without_exit_barrier(line.text for line in backend.read_logs(name, LogQuery(node=node)))


def test_a_node_that_fails_once_is_restarted_and_the_job_completes(backend):
    submitted = submit(backend, notebook(*FAILS_FIRST_TIME), {"nodes": 2, "max_restarts": 2})
    assert NO_CHECKPOINT in submitted.warnings  # it saves no checkpoint: it starts from scratch
    info = backend.wait(submitted.name, timeout=180, interval=0.1)
    assert info.status == Status.COMPLETE, info.reason
    record = read_record(backend.jobs_dir / submitted.name)
    [restart] = record["restarts"]
    note = "restart 1 of 2 after node 1, rank 1 failed: "
    assert restart["attempt"] == 1 and restart["reason"].startswith(note), restart
    assert "RuntimeError: the first attempt fails" in restart["reason"]
    assert info.reason == f"restarted once; the last: {restart['reason']}"
    assert [n.state for n in info.nodes] == ["Succeeded", "Succeeded"]
    for node in (0, 1):  # both attempts of every node, parted by the restart's line
        lines = texts(backend, submitted.name, node)
        first, again = lines.index(f"attempt 0 rank {node}"), lines.index(f"attempt 1 rank {node}")
        assert first < lines.index(f"kale_ext: {restart['reason']}") < again
        assert lines[-1] == "done"
    assert any(e.reason == "Restarted" for e in backend.events(submitted.name))


def test_each_attempt_starts_from_a_fresh_working_directory_its_outputs_kept(backend, tmp_path):
    """A restarted pod starts with a fresh container filesystem: so does each local attempt (the
    workspace as submitted, nothing the last attempt wrote there or in its temporary folder),
    while the outputs the first attempt wrote and both attempts' logs stay."""
    import json

    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "data.txt").write_text("as submitted")
    path = folder / "train.ipynb"
    path.write_text(json.dumps(notebook(*LEAVES_FILES)))
    name = submit(backend, path, {"nodes": 2, "max_restarts": 1}).name
    info = backend.wait(name, timeout=180, interval=0.1)
    assert info.status == Status.COMPLETE, (info.reason, texts(backend, name, 0))
    [restart] = read_record(backend.jobs_dir / name)["restarts"]
    assert "the first attempt fails" in restart["reason"]
    for node in (0, 1):  # each node's second attempt found what a restarted pod finds
        assert texts(backend, name, node)[-1] == "fresh"
    outputs = sorted(p.name for p in (folder / "outputs" / name).rglob("first-*.txt"))
    assert outputs == ["first-0.txt", "first-1.txt"]
    assert (folder / "data.txt").read_text() == "as submitted"  # the notebook's folder untouched


def test_a_job_that_fails_past_its_restarts_ends_failed_with_the_last_failure(backend):
    submitted = submit(backend, notebook(*ALWAYS_FAILS), {"nodes": 2, "max_restarts": 1})
    info = backend.wait(submitted.name, timeout=180, interval=0.1)
    assert info.status == Status.FAILED
    assert info.reason.startswith("node 1, rank 1: ") and "attempt 1 fails" in info.reason
    assert info.failure is not None and "attempt 1 fails" in info.failure.exception
    record = read_record(backend.jobs_dir / submitted.name)
    assert [r["attempt"] for r in record["restarts"]] == [1]
    assert "attempt 0 fails" in record["restarts"][0]["reason"]


def test_a_stopped_job_is_not_restarted(backend):
    name = submit(backend, notebook(*WAITS), {"nodes": 2, "max_restarts": 3}).name
    until(lambda: texts(backend, name, 1)[-1:] == ["up"], "node 1 to be up")
    backend.stop(name, "stopped by a test")
    info = backend.wait(name, timeout=60, interval=0.1)
    assert info.status == Status.FAILED and info.reason == "stopped by a test"
    assert "restarts" not in read_record(backend.jobs_dir / name)


def test_without_max_restarts_a_failed_node_fails_the_job_at_once(backend):
    submitted = submit(backend, notebook(*FAILS_FIRST_TIME), {"nodes": 2})
    assert NO_CHECKPOINT not in submitted.warnings
    info = backend.wait(submitted.name, timeout=180, interval=0.1)
    assert info.status == Status.FAILED and "the first attempt fails" in info.reason


# ----- the parts, without a job -----------------------------------------------------------------


def test_the_restart_note_names_the_attempt_and_the_failure():
    failure = Failure(summary="node 1, rank 1: cell 2, line 4: ValueError: boom", node=1)
    assert restart_note(1, 2, failure) == (
        "restart 1 of 2 after node 1, rank 1 failed: cell 2, line 4: ValueError: boom"
    )
    assert completed_after([]) is None
    assert completed_after([{"reason": "a"}, {"reason": "b"}]) == "restarted 2 times; the last: b"


def test_the_next_attempt_parts_the_logs_and_its_failure_is_read_from_its_own_lines(tmp_path):
    import os

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "kept").write_text("a volume's file")
    for k in (0, 1):
        (tmp_path / f"node-{k}.log").write_text(f"node {k} first attempt\nTraceback\n")
        error_file(tmp_path, k).write_text("{}")
        (torchrun_dir(tmp_path, k) / "run" / "attempt_0" / "0").mkdir(parents=True)
        (tmp_path / f"node-{k}" / "data").mkdir(parents=True)  # its working directory
        (tmp_path / f"node-{k}" / "data" / "shared").symlink_to(shared)  # a mount's link
        (tmp_path / "volumes" / f"0-node-{k}").mkdir(parents=True)  # its emptyDir
    next_attempt(tmp_path, 2, "restart 1 of 1 after node 1 failed: boom")
    assert (shared / "kept").exists()  # what a link in a working directory points to stays
    assert sorted(os.listdir(tmp_path / "volumes")) == []
    for k in (0, 1):
        assert not error_file(tmp_path, k).exists() and not torchrun_dir(tmp_path, k).exists()
        assert not (tmp_path / f"node-{k}").exists()
        assert (
            (tmp_path / f"node-{k}.log")
            .read_text()
            .endswith("Traceback\n\nkale_ext: restart 1 of 1 after node 1 failed: boom\n")
        )
    assert log_end(tmp_path, 0, 1) == []  # nothing of the last attempt is this one's
    with open(tmp_path / "node-0.log", "a") as log:
        log.write("second attempt\n")
    assert [line.text for line in log_end(tmp_path, 0, 1)] == ["second attempt"]


def test_the_digits_example_killed_mid_run_restarts_from_its_checkpoint_to_the_same_end(
    backend, tmp_path
):
    """Issue 43's promise, on the example as shipped: node 1 killed (SIGKILL to its process
    group) after the job saved a checkpoint; with one restart the whole job starts again, its
    function resumes from `checkpoint.latest()` and ends Complete with the test accuracy and last
    losses of the same job run without a kill (same seed)."""
    import json
    import os
    import shutil
    import signal

    from kale_ext.backends.local.checkpoints import checkpoint_dir
    from kale_ext.checkpoint import MANIFEST
    from tests.backends.local.waiting import until
    from tests.conftest import EXAMPLES

    example = tmp_path / "digits_ddp.ipynb"  # its outputs go beside it, not into the repository
    shutil.copy(EXAMPLES / "digits_ddp.ipynb", example)
    options = {"nodes": 2}  # its 6 epochs: time enough to kill a node after its first save

    def ending(name):  # the lines both ranks print last: losses per epoch, the accuracy
        lines = texts(backend, name, 0)
        start = max(i for i, t in enumerate(lines) if "training and" in t)  # the last attempt's
        return [t for t in lines[start:] if t.startswith(("epoch ", "test accuracy"))], lines

    whole = submit(backend, example, options).name
    info = backend.wait(whole, timeout=300, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    expected, _ = ending(whole)
    assert len(expected) == 7 and expected[-1].startswith("test accuracy")

    killed = submit(backend, example, {**options, "max_restarts": 1}).name
    manifest = checkpoint_dir(backend.jobs_dir, killed) / MANIFEST
    until(manifest.exists, "the first checkpoint", timeout=240)
    step = json.loads(manifest.read_text())["step"]
    pid = read_record(backend.jobs_dir / killed)["nodes"][1]["pid"]
    os.killpg(pid, signal.SIGKILL)  # node 1 dies: torchrun and its rank
    info = backend.wait(killed, timeout=300, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    [restart] = read_record(backend.jobs_dir / killed)["restarts"]
    assert restart["reason"].startswith("restart 1 of 1 after node 1"), restart
    resumed, lines = ending(killed)
    [after] = [t for t in lines if t.startswith("resumed after epoch ")]
    assert int(after.rsplit(" ", 1)[1]) >= step  # from the last checkpoint, not from scratch
    assert resumed[-1] == expected[-1]  # the same test accuracy
    assert resumed[:-1] == expected[len(expected) - len(resumed) : -1]  # the same last losses
