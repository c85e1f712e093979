"""`kale-ext prune` on real local jobs: a dry run lists exactly the finished ones, the real run
removes them and their folders, keeps their outputs, and leaves running and queued jobs (and one
another action holds) alone."""

import json

import pytest

from kale_ext.backends.local.joblock import acting_on
from kale_ext.job.defaults import lab_settings_file
from tests.backends.local.waiting import until
from tests.cli import cli
from tests.conftest import notebook

LOCAL = ("--backend", "local")


def _status(name: str) -> str:
    return json.loads(cli("status", name, *LOCAL, "-o", "json").stdout)["status"]


def _run(write_nb, source: str, file: str, follow: bool = True) -> str:
    out = cli("run", write_nb(notebook(source), file), *LOCAL, *(["--follow"] if follow else []))
    if follow:
        return next(line.split()[1] for line in out.stderr.splitlines()
                    if line.startswith("submitted"))  # fmt: skip
    return out.stdout.strip()


def test_prune_removes_finished_jobs_only(jobs_env, write_nb):
    settings = lab_settings_file()  # one process at a time: the second job waits in line
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"local_capacity": 1}')
    jobs = jobs_env / "jobs"
    done = _run(
        write_nb,
        "import os\nopen(os.path.join(os.environ['KALE_EXT_OUTPUT_DIR'], 'r.txt'), 'w').write('7')",
        "done.ipynb",
    )
    failed = _run(write_nb, "raise SystemExit(3)", "failed.ipynb")
    assert (_status(done), _status(failed)) == ("Complete", "Failed")
    running = _run(write_nb, "import time\nprint('up', flush=True)\ntime.sleep(600)", "run.ipynb",
                   follow=False)  # fmt: skip
    try:
        until(lambda: "up" in cli("logs", running, *LOCAL).stdout, "the running job's line")
        queued = _run(write_nb, "print(2)", "queued.ipynb", follow=False)
        until(lambda: _status(queued) == "Queued", "the second job to wait in line")

        dry = cli("prune", "--older-than", "0s", "--status", "complete", "--dry-run", *LOCAL,
                  "-o", "json")  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        listed = json.loads(dry.stdout)
        assert [(p["name"], p["status"], p["deleted"]) for p in listed] == [
            (done, "Complete", False)
        ]
        assert listed[0]["disk_bytes"] > 0 and listed[0]["age_seconds"] >= 0
        table = cli("prune", "--older-than", "0s", "--status", "complete", "--dry-run", *LOCAL)
        assert table.stdout.splitlines()[0].split() == ["NAME", "STATUS", "AGE", "DISK"]
        assert table.stdout.splitlines()[1].startswith(f"{done}  Complete")
        assert "nothing removed" in table.stdout
        assert (jobs / done).is_dir()  # a dry run frees nothing
        none = cli("prune", "--older-than", "1h", "--dry-run", *LOCAL)
        assert none.stdout.strip() == "no finished job to prune"

        real = cli("prune", "--older-than", "0s", "--status", "complete", *LOCAL)
        assert real.returncode == 0, real.stderr
        assert f"{done}  Complete" in real.stdout and "removed 1 of 1 job(s)" in real.stdout
        assert not (jobs / done).exists()
        assert (jobs_env / "outputs" / done / "r.txt").read_text() == "7"  # beside its notebook
        assert "kept its outputs" in real.stdout
        left = {
            j["name"]: j["status"] for j in json.loads(cli("jobs", *LOCAL, "-o", "json").stdout)
        }
        assert left == {failed: "Failed", running: "Running", queued: "Queued"}

        from kale_ext.backends.local import LocalBackend
        from kale_ext.errors import BackendError

        for name in (running, queued):  # chosen from a listing, it is looked at again: refused
            with pytest.raises(BackendError) as e:
                LocalBackend(jobs).prune_job(name)
            assert e.value.status == 409 and "only a finished job is pruned" in str(e.value)

        with acting_on(jobs / failed, failed):  # a stop or a delete holds it: it stays
            busy = cli("prune", "--older-than", "0s", *LOCAL, "-o", "json")
        assert busy.returncode == 1
        [item] = json.loads(busy.stdout)
        assert (item["name"], item["deleted"]) == (failed, False)
        assert "another action" in item["note"]

        everything = cli("prune", "--older-than", "0s", *LOCAL)  # every finished kind
        assert everything.returncode == 0, everything.stderr
        assert not (jobs / failed).exists()
        assert (jobs / running).is_dir() and (jobs / queued).is_dir()
        assert (_status(running), _status(queued)) == ("Running", "Queued")
    finally:
        cli("delete", running, *LOCAL)
        cli("delete", queued, *LOCAL)


def test_the_jobs_list_shows_each_jobs_disk_use(jobs_env, write_nb):
    name = _run(write_nb, "print('x' * 100_000)", "big.ipynb")
    [job] = json.loads(cli("jobs", *LOCAL, "-o", "json").stdout)
    assert job["name"] == name and job["disk_bytes"] >= 100_000 and not job["disk_partial"]
    lines = cli("jobs", *LOCAL).stdout.splitlines()
    assert lines[0].split()[7] == "DISK"  # after PARENT
    assert "KiB" in lines[1][lines[0].index("DISK") :]


def test_bad_ages_and_statuses_are_refused_naming_the_flag(jobs_env):
    for flag, value, said in (
        ("--older-than", "7y", "'7y' is not an age"),
        ("--older-than", "-1d", "is not an age"),
        ("--older-than", "3651d", "more than the most, 3650d"),
        ("--status", "running", "'running' is not one of complete, failed, stopped"),
        ("--status", "", "must name one or more"),
    ):
        out = cli("prune", f"{flag}={value}", *LOCAL)
        assert out.returncode == 1 and out.stderr.startswith(f"error: {flag}: "), out.stderr
        assert said in out.stderr


def test_keep_finished_days_prunes_at_a_submit(jobs_env, write_nb):
    """A job recorded as finished two days ago goes at the next submit (keep_finished_days 1);
    the submit says so, and the new job and the old one's outputs stay."""
    old = _run(write_nb, "print(1)", "old.ipynb")
    record = jobs_env / "jobs" / old / "job.json"
    data = json.loads(record.read_text())
    data["finished"] = "2000-01-01T00:00:00Z"  # as a record of a job long finished reads
    record.write_text(json.dumps(data))
    settings = lab_settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"keep_finished_days": 1}')
    new = cli("run", write_nb(notebook("print(2)"), "new.ipynb"), *LOCAL, "--follow")
    assert new.returncode == 0, new.stderr
    assert (
        f"warning: pruned 1 job finished more than 1 day ago (keep_finished_days; their "
        f"outputs stay): {old}" in new.stderr
    )
    assert not (jobs_env / "jobs" / old).exists()
    assert [j["status"] for j in json.loads(cli("jobs", *LOCAL, "-o", "json").stdout)] == [
        "Complete"
    ]
