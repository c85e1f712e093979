"""Issue 28, case 4: a job record that cannot be read is listed as such (name, reason, how to
remove it) in every view, is deleted through the API and the CLI, and never makes another job's
request fail; records are written so that a crash mid-write leaves a whole one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from kale_ext.files import JOBS_MARK

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

#: Broken records, each as a job's job.json would be found.
BROKEN = {
    "garbage": b"\x00\xff not json at all",
    "cut-short": b'{"name": "cut-short", "status": "Complete", "runtime": "torch-distrib',
    "a-list": b"[1, 2, 3]",
    "odd-status": json.dumps(
        {
            "name": "odd-status",
            "status": "Exploded",
            "runtime": "t",
            "num_nodes": 1,
            "procs_per_node": 1,
            "nodes": [],
        }  # fmt: skip
    ).encode(),
    "bad-date": json.dumps(
        {
            "name": "bad-date",
            "status": "Complete",
            "runtime": "t",
            "num_nodes": 1,
            "procs_per_node": 1,
            "nodes": [],
            "finished": "yesterday",
            "created": 3,
            "provenance": {"kale-ext.io/ttl-seconds-after-finished": "1"},
        }  # fmt: skip
    ).encode(),
}


def break_records(jobs_dir) -> None:
    for name, text in BROKEN.items():
        (jobs_dir / name).mkdir(parents=True)
        (jobs_dir / name / "job.json").write_bytes(text)


def assert_listed_as_unreadable(row: dict) -> None:
    assert row["status"] == "Unreadable", row
    assert "cannot be read" in row["reason"] and f"kale-ext delete {row['name']}" in row["reason"]


async def test_4_unreadable_records_are_listed_and_the_list_still_answers(api, jobs_dir):
    good = await api.submit(path="plain_python.ipynb", options={"parameters": {"steps": 1}})
    break_records(jobs_dir)
    listed = await api.get("jobs")
    assert listed.status == 200, listed.text
    rows = {row["name"]: row for row in listed.json["jobs"]}
    assert set(rows) == {good, *BROKEN}
    for name in BROKEN:
        assert_listed_as_unreadable(rows[name])
    assert rows[good]["status"] != "Unreadable"
    one = await api.get("jobs/cut-short")
    assert one.status == 200 and "not valid JSON" in one.json["reason"]
    logs = await api.get("jobs/garbage/logs")
    assert logs.status == 409 and logs.json["reason"] == "UnreadableRecord", logs.text
    assert "kale-ext delete garbage" in logs.json["message"]
    diff = await api.get("diff", params={"jobs": f"{good},a-list"})
    assert diff.status == 200, diff.text
    assert [j["status"] for j in diff.json["jobs"]] == [rows[good]["status_text"], "Unreadable"]


async def test_4_an_unreadable_record_is_deleted_and_its_name_freed(api, jobs_dir):
    break_records(jobs_dir)
    for name in BROKEN:
        deleted = await api.delete(f"jobs/{name}")
        assert deleted.status == 200, deleted.text
        assert (await api.get(f"jobs/{name}")).status == 404
    assert [p.name for p in jobs_dir.iterdir()] == [JOBS_MARK]  # the folder's mark only
    assert (await api.get("jobs")).json["jobs"] == []


def cli(*args, env):
    return subprocess.run([sys.executable, "-m", "kale_ext.cli", *args], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip


def test_4_the_cli_lists_and_deletes_an_unreadable_record(tmp_path):
    jobs = tmp_path / "jobs"
    break_records(jobs)
    env = {**os.environ, "KALE_EXT_JOBS_DIR": str(jobs)}
    listed = cli("jobs", "--backend", "local", env=env)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    for name in BROKEN:
        assert name in listed.stdout
    assert "Unreadable" in listed.stdout
    deleted = cli("delete", "garbage", "--backend", "local", env=env)
    assert deleted.returncode == 0, deleted.stderr
    assert not (jobs / "garbage").exists()


WRITER = """
import json, sys
from pathlib import Path
from kale_ext.files import write_atomic
path, i = Path(sys.argv[1]), 0
while True:
    i += 1
    write_atomic(path, json.dumps({"n": i, "pad": "x" * 2_000_000}))
    print(i, flush=True)
"""


@pytest.mark.parametrize("writes", [1, 3, 7])
def test_4_a_record_killed_mid_write_is_the_old_one_or_the_new_one(tmp_path, writes):
    path = tmp_path / "job.json"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        for _ in range(writes):  # each line: one more whole record written
            assert child.stdout.readline()
    finally:
        child.send_signal(signal.SIGKILL)  # mid-way through the next one, most likely
        child.wait()
    record = json.loads(path.read_text())
    assert record["n"] >= writes and len(record["pad"]) == 2_000_000
