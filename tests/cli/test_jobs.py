import json

from tests.cli import cli, project
from tests.conftest import notebook


def test_events_of_a_job(jobs_env, write_nb):
    out = cli("run", write_nb(notebook("print(1)")), "--backend", "local", "--follow")
    [name] = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("submitted")]
    events = json.loads(cli("events", name, "--backend", "local", "-o", "json").stdout)
    assert [e["reason"] for e in events] == ["Created", "Started", "Complete"]


def test_outputs_are_listed_copied_and_survive_delete(jobs_env):
    path = project(jobs_env / "project")
    nb = notebook(
        ("import os", ["imports"]),
        "open(os.path.join(os.environ['KALE_EXT_OUTPUT_DIR'], 'result.txt'), 'w').write('42')",
    )
    path.write_text(json.dumps(nb))
    run = cli("run", path, "--backend", "local", "--follow")
    assert run.returncode == 0, run.stderr
    name = run.stderr.split()[1]  # "submitted <name> to the local backend ..."
    final = path.parent / "outputs" / name
    listed = cli("outputs", name, "--backend", "local")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [str(final), "  result.txt        2 B"]
    as_json = json.loads(cli("outputs", name, "--backend", "local", "-o", "json").stdout)
    assert as_json["files"] == [{"path": "result.txt", "size": 2}]
    copied = cli("outputs", name, "--backend", "local", "--copy", jobs_env / "copy")
    assert copied.returncode == 0 and (jobs_env / "copy" / "result.txt").read_text() == "42"
    deleted = cli("delete", name, "--backend", "local")
    assert deleted.stdout.strip() == (
        f"deleted {name}; kept its outputs in {final} (delete them too with --outputs)"
    )
    assert (final / "result.txt").read_text() == "42"
    # delete said they were kept: `outputs` still lists and copies them
    after = cli("outputs", name, "--backend", "local")
    assert (after.returncode, after.stdout.splitlines()) == (0, listed.stdout.splitlines())
    again = cli("outputs", name, "--backend", "local", "--copy", jobs_env / "again")
    assert again.returncode == 0 and (jobs_env / "again" / "result.txt").read_text() == "42"
    assert name not in cli("jobs", "--backend", "local").stdout  # the job itself is gone
    gone = cli("delete", name, "--backend", "local")
    assert gone.returncode == 1 and f"no local job named '{name}'" in gone.stderr


def test_outputs_of_an_unknown_job(jobs_env):
    out = cli("outputs", "nope", "--backend", "local")
    assert out.returncode == 1 and "no local job named 'nope'" in out.stderr


def test_a_quiet_job_is_listed_as_stalled_and_keeps_running(jobs_env, write_nb):
    """stall_seconds comes from the defaults (here the user's JupyterLab settings)."""
    from kale_ext.job.defaults import lab_settings_file
    from tests.backends.local.waiting import until

    settings = lab_settings_file()
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"stall_seconds": 1}')
    path = write_nb(notebook("import time\nprint('thinking', flush=True)\ntime.sleep(600)"))
    name = cli("run", path, "--backend", "local").stdout.strip()
    try:
        until(lambda: "thinking" in cli("logs", name, "--backend", "local").stdout, "its line")
        stalled = until(
            lambda: json.loads(
                cli("jobs", "--backend", "local", "--status", "stalled", "-o", "json").stdout
            ),
            "the job to show as stalled",
        )
        assert [(j["name"], j["status"], j["status_text"]) for j in stalled] == [
            (name, "Running", "Stalled (no output for 1 s)")
        ]
        status = cli("status", name, "--backend", "local").stdout
        assert status.startswith(f"{name}: Stalled (no output for 1 s) (local")
        assert "last output " in status
    finally:
        cli("delete", name, "--backend", "local")


def test_a_closed_pipe_ends_quietly(jobs_env, write_nb):
    """`kale-ext logs NAME | head -2` and `kale-ext jobs | head`: the reader has gone before
    the command writes; it stops with 141 (a shell's SIGPIPE code) and says nothing."""
    import subprocess
    import sys

    path = write_nb(notebook("for i in range(3000):\n    print('line', i)"))
    run = cli("run", path, "--backend", "local", "--follow")
    assert run.returncode == 0, run.stderr
    name = run.stderr.split()[1]
    for command in (["logs", name], ["jobs"], ["status", name, "-o", "json"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "kale_ext.cli", *command, "--backend", "local"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        proc.stdout.close()  # `| head` that has read what it wanted
        err = proc.stderr.read().decode()
        assert (proc.wait(), err) == (141, ""), command


def test_a_jobs_control_sequences_are_shown_escaped_in_every_view(jobs_env, write_nb):
    """A job whose exception text would retitle the window, clear the screen and overwrite
    the line: every view shows it escaped; `logs --raw` prints the lines as written."""
    hostile = "\\x1b]0;title\\x07\\x1b[2J\\rgotcha"  # as the notebook's source writes it
    path = write_nb(notebook(f"print('{hostile}')\nraise ValueError('{hostile}')"))
    run = cli("run", path, "--backend", "local", "--follow")
    name = run.stderr.split()[1]
    escaped = "\\x1b]0;title\\x07\\x1b[2J"  # what a view shows (a CR ends a line, as recorded)
    views = {
        "run --follow": run,
        "jobs": cli("jobs", "--backend", "local"),
        "status": cli("status", name, "--backend", "local"),
        "stop": cli("stop", name, "--backend", "local"),
        "events": cli("events", name, "--backend", "local"),
        "logs": cli("logs", name, "--backend", "local"),
    }
    assert run.returncode == 1
    for view, out in views.items():
        printed = out.stdout + out.stderr
        assert not any(c in printed for c in "\x1b\x07\r"), (view, printed)
    assert f"ValueError: {escaped}" in views["status"].stdout
    assert f"ValueError: {escaped}" in views["jobs"].stdout
    assert f"[rank 0] {escaped}" in views["logs"].stdout.splitlines()
    raw = cli("logs", name, "--backend", "local", "--raw").stdout
    assert "[rank 0] \x1b]0;title\x07\x1b[2J" in raw.split("\n")
