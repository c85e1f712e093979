"""`kale-ext stop` and `kale-ext rerun`, run as a user runs them: real processes, real torchrun."""

from __future__ import annotations

import getpass
import json

from tests.backends.local.test_backend import RANKS
from tests.cli import cli
from tests.conftest import notebook
from tests.harness.emulated import TRAINJOBS
from tests.runs.conftest import wait_for

pytest_plugins = ["tests.harness.emulated"]  # the emulated cluster


def _logs(name: str) -> list[str]:
    return cli("logs", name, "--backend", "local").stdout.splitlines()


def test_stop_ends_a_torchrun_job_and_keeps_it_reading_stopped(jobs_env):
    path = jobs_env / "ranks.ipynb"
    path.write_text(json.dumps(notebook(*RANKS)))
    out = cli("run", path, "--backend", "local", "--nodes", "2", "--param", "steps=2000",
              "--param", "pause=0.05", "--name", "long-one")  # fmt: skip
    assert out.returncode == 0, out.stderr
    wait_for(lambda: any(line.endswith("step 2") for line in _logs("long-one")), 120, "steps")
    stopped = cli("stop", "long-one", "--backend", "local")
    assert stopped.returncode == 0, stopped.stderr
    lines = stopped.stdout.splitlines()
    assert lines[0].startswith("long-one: Stopped (local")
    assert lines[2].startswith(f"stopped by {getpass.getuser()} at 20")
    assert lines[3:] == ["node 0 Stopped", "node 1 Stopped"]
    info = json.loads(cli("status", "long-one", "--backend", "local", "-o", "json").stdout)
    assert (info["status"], info["status_text"], info["failure"]) == ("Failed", "Stopped", None)
    listed = cli("jobs", "--backend", "local").stdout
    assert "Stopped" in listed and "stopped by" in listed
    only = json.loads(cli("jobs", "--status", "stopped", "--backend", "local", "-o", "json").stdout)
    assert [j["name"] for j in only] == ["long-one"]
    failed = cli("jobs", "--status", "failed", "--backend", "local", "-o", "json").stdout
    assert json.loads(failed) == []  # a stopped job is not among the failed
    logs = _logs("long-one")  # kept: the steps, and each node's stop as one line
    assert "[rank 0] step 2" in logs
    for node in (0, 1):
        assert (f"[node {node}] torchrun: node {node} was stopped (signal 15 (SIGTERM)); its "
                "workers were stopped with it") in logs  # fmt: skip
    assert not any("SignalException" in line or "Traceback" in line for line in logs)
    again = cli("stop", "long-one", "--backend", "local")
    assert again.returncode == 1
    assert (
        again.stderr
        == "error: job long-one has ended already (Stopped): there is nothing to stop\n"
    )
    missing = cli("stop", "nope", "--backend", "local")
    assert missing.returncode == 1 and "no local job named 'nope'" in missing.stderr


PRINTS = (("epochs = 6\nlr = 0.1\n", ["parameters"]), 'print(f"epochs {epochs} lr {lr}")')


def test_rerun_runs_the_recorded_notebook_and_options_with_only_the_overrides(jobs_env):
    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(notebook(*PRINTS)))
    first = cli("run", path, "--backend", "local", "--param", "epochs=4", "--name", "first",
                "--follow")  # fmt: skip
    assert first.returncode == 0, first.stderr
    path.write_text(json.dumps(notebook(("epochs = 9\nlr = 0.5\n", ["parameters"]), "1/0")))
    again = cli("rerun", "first", "--backend", "local", "--name", "second", "--param", "lr=0.2")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "second\n" and "as first ran" in again.stderr
    same = cli("rerun", "first", "--backend", "local")  # a new name of its own
    assert same.returncode == 0, same.stderr
    third = same.stdout.strip()
    assert third not in ("first", "second") and third.startswith("nb-")
    for name, shown in (("second", "epochs 4 lr 0.2"), (third, "epochs 4 lr 0.1")):
        wait_for(lambda n=name, s=shown: any(s in line for line in _logs(n)), 120, f"{name} line")
        info = json.loads(cli("status", name, "--backend", "local", "-o", "json").stdout)
        recorded = json.loads(info["provenance"]["kale-ext.io/options"])
        assert recorded["parameters"]["epochs"] == "4"  # the first job's override stayed


def test_a_job_named_in_the_panel_reruns_under_a_new_name(jobs_env):
    """The panel keeps the job's name in the notebook's metadata with the rest of its form:
    the job it names reruns under a new name all the same."""
    nb = notebook(*PRINTS)
    nb["metadata"]["kale_ext"] = {"options": {"name": "long-run", "parameters": {"epochs": "4"}}}
    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(nb))
    first = cli("run", path, "--backend", "local")
    assert (first.returncode, first.stdout) == (0, "long-run\n"), first.stderr
    again = cli("rerun", "long-run", "--backend", "local", "--follow")  # as `run` follows
    assert again.returncode == 0, again.stderr
    assert again.stdout == "[rank 0] epochs 4 lr 0.1\n"  # its settings, its logs
    [name] = [line.split()[1] for line in again.stderr.splitlines() if line.startswith("sub")]
    assert name != "long-run" and name.startswith("nb-") and f"[{name}] Complete" in again.stderr


def test_a_bad_rerun_says_what_is_wrong(jobs_env):
    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(notebook(*PRINTS)))
    assert cli("run", path, "--backend", "local", "--name", "first").returncode == 0
    cases = [
        (["first", "--param", "depth=3"], "error: parameters.depth: the notebook has no such "
         "parameter (it has: epochs, lr)"),
        (["first", "--param", "epochs"], "error: param: 'epochs': expects NAME=VALUE"),
        (["first", "--name", "first"], "error: a job named first exists already"),
        (["first", "--name", "Bad_Name"], "error: name: 'Bad_Name' is not a valid job name"),
        (["nope"], "error: no local job named 'nope'"),
    ]  # fmt: skip
    for flags, says in cases:
        out = cli("rerun", *flags, "--backend", "local")
        assert out.returncode == 1 and out.stderr.startswith(says), out.stderr
    listed = json.loads(cli("jobs", "--backend", "local", "-o", "json").stdout)
    assert [j["name"] for j in listed] == ["first"]  # nothing half-made


def test_a_job_whose_snapshot_was_not_kept_here_cannot_be_rerun(jobs_env):
    import shutil

    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(notebook(*PRINTS)))
    assert cli("run", path, "--backend", "local", "--name", "first").returncode == 0
    shutil.rmtree(jobs_env / "jobs" / ".submitted" / "first")  # as for a job from elsewhere
    out = cli("rerun", "first", "--backend", "local")
    assert out.returncode == 1
    assert out.stderr.startswith("error: job first cannot be rerun from here: no snapshot")
    assert cli("run", path, "--backend", "local", "--name", "second").returncode == 0
    assert (jobs_env / "jobs" / ".submitted" / "second").is_dir()
    assert cli("delete", "second", "--backend", "local").returncode == 0
    assert not (jobs_env / "jobs" / ".submitted" / "second").exists()  # gone with its job


SLOW = notebook(
    ("steps = 2000\n", ["parameters"]),
    "import time\nfor step in range(steps):\n    print(f'step {step}', flush=True)\n"
    "    time.sleep(0.05)",
)


def test_stop_on_the_cluster_suspends_the_trainjob_and_keeps_it(emulated_cluster, tmp_path):
    path = tmp_path / "slow.ipynb"
    path.write_text(json.dumps(SLOW))
    k8s = ("--backend", "kubernetes")
    out = cli("run", path, *k8s, "--name", "slow-k8s")
    assert out.returncode == 0, out.stderr
    wait_for(lambda: "step 3" in cli("logs", "slow-k8s", *k8s).stdout, 120, "step 3")
    stopped = cli("stop", "slow-k8s", *k8s)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith("slow-k8s: Stopped (kubernetes")
    assert f"stopped by {getpass.getuser()} at 20" in stopped.stdout
    tj = emulated_cluster.get(TRAINJOBS, "slow-k8s")  # the record stays, suspended
    assert tj["spec"]["suspend"] is True
    assert tj["metadata"]["annotations"]["kale-ext.io/stopped"].startswith("stopped by ")
    emulated_cluster.wait_for(lambda: emulated_cluster.pods("slow-k8s") == [], 60, "pods gone")
    info = json.loads(cli("status", "slow-k8s", *k8s, "-o", "json").stdout)
    assert (info["status_text"], info["failure"]) == ("Stopped", None) and info["finished"]
    assert "Stopped" in cli("jobs", *k8s).stdout
    again = cli("stop", "slow-k8s", *k8s)
    assert again.returncode == 1 and "has ended already (Stopped)" in again.stderr


#: Reports a checkpoint's step as checkpoint.save does, says how many nodes ran it, and fails
#: unless told not to.
RESUMABLE = (
    ("import os\nfrom kale_ext import report", ["imports"]),
    ("fail = 1\n", ["parameters"]),
    "report(checkpoint_step=12)\nprint(f\"world {os.environ['WORLD_SIZE']}\", flush=True)\n"
    "if fail:\n    raise SystemExit(3)",
)


def test_resume_runs_a_failed_job_again_in_its_lineage_on_the_nodes_asked(jobs_env):
    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(notebook(*RESUMABLE)))
    local = ("--backend", "local")
    first = cli("run", path, *local, "--nodes", "2", "--name", "first", "--follow")
    assert first.returncode == 1, first.stderr  # it failed, after its checkpoint
    status = cli("status", "first", *local).stdout.splitlines()
    assert any(line.startswith("checkpoint    step 12, ") for line in status), status
    assert not any(line.startswith("lineage") for line in status)  # a lineage of its own
    out = cli("resume", "first", *local, "--nodes", "1", "--param", "fail=0", "--name", "second",
              "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "resumed from first: 1 node × 1 process" in out.stderr
    assert "[rank 0] world 1" in out.stdout.splitlines()
    info = json.loads(cli("status", "second", *local, "-o", "json").stdout)
    assert (info["parent"], info["lineage"], info["resume_step"]) == ("first", "first", 12)
    assert info["num_nodes"] == 1 and info["provenance"]["kale-ext.io/lineage"] == "first"
    shown = cli("status", "second", *local).stdout.splitlines()
    assert "lineage       resumed from first (lineage first), from step 12" in shown
    third = cli("resume", "second", *local, "--name", "third")  # the lineage goes on
    assert third.returncode == 0, third.stderr
    wait_for(lambda: "Complete" in cli("status", "third", *local).stdout, 120, "third ends")
    info = json.loads(cli("status", "third", *local, "-o", "json").stdout)
    assert (info["parent"], info["lineage"], info["num_nodes"]) == ("second", "first", 1)
    table = cli("jobs", *local).stdout.splitlines()
    parent = table[0].index("PARENT")
    rows = {line.split()[0]: line[parent:].split("  ")[0] for line in table[1:]}
    assert rows == {"first": "-", "second": "first (step 12)", "third": "second (step 12)"}
    diff = cli("diff", "first", "second", *local).stdout.splitlines()
    assert diff[2].split() == ["lineage", "first", "first", "(resumed", "from", "first,", "step",
                               "12)"]  # fmt: skip
    rerun = cli("rerun", "second", *local, "--name", "fourth", "--follow")  # its own lineage
    assert rerun.returncode == 0, rerun.stderr
    info = json.loads(cli("status", "fourth", *local, "-o", "json").stdout)
    assert (info["parent"], info["lineage"], info["resume_step"]) == (None, "fourth", None)


def test_a_bad_resume_says_what_is_wrong(jobs_env):
    path = jobs_env / "nb.ipynb"
    path.write_text(json.dumps(notebook(*PRINTS)))
    assert cli("run", path, "--backend", "local", "--name", "first", "--follow").returncode == 0
    cases = [
        (["first", "--nodes", "0"], "error: nodes: must be at least 1, got 0"),
        (["first", "--nodes", "1001"], "error: nodes: must be at most 1000, got 1001"),
        (["first", "--param", "depth=3"], "error: parameters.depth: the notebook has no such"),
        (["nope"], "error: no local job named 'nope'"),
    ]
    for flags, says in cases:
        out = cli("resume", *flags, "--backend", "local")
        assert out.returncode == 1 and out.stderr.startswith(says), out.stderr
    slow = jobs_env / "slow.ipynb"
    slow.write_text(json.dumps(SLOW))
    assert cli("run", slow, "--backend", "local", "--name", "slow").returncode == 0
    out = cli("resume", "slow", "--backend", "local")  # not ended: its checkpoints are in use
    assert out.returncode == 1 and out.stderr.startswith("error: job slow is "), out.stderr
    assert "a job is resumed once it has ended (Stopped, Failed or Complete); stop it first " \
        "(kale-ext stop slow)" in out.stderr  # fmt: skip
    assert cli("delete", "slow", "--backend", "local").returncode == 0


def test_the_digits_example_stopped_mid_run_resumes_on_one_node_after_its_last_epoch(jobs_env):
    """Issue 43's promise on the example as shipped: stopped once it saved epoch 3, `resume
    --nodes 1` starts the next epoch on one node, and every view names its parent."""
    import re
    import shutil

    from kale_ext.backends.local.checkpoints import checkpoint_dir
    from kale_ext.checkpoint import MANIFEST
    from tests.conftest import EXAMPLES

    example = jobs_env / "digits_ddp.ipynb"
    shutil.copy(EXAMPLES / "digits_ddp.ipynb", example)
    local = ("--backend", "local")
    slow = ("--param", "epochs=30", "--param", "batch_size=8")  # seconds of epochs after the 3rd
    assert cli("run", example, *local, "--nodes", "2", "--name", "digits-a", *slow).returncode == 0

    def saved() -> int:
        shown = cli("status", "digits-a", *local).stdout
        found = re.search(r"^checkpoint    step (\d+),", shown, re.MULTILINE)
        return int(found.group(1)) if found else 0

    wait_for(lambda: saved() >= 3, 240, "digits-a to save epoch 3")
    assert cli("stop", "digits-a", *local).returncode == 0
    reported = saved()  # the step its rank 0 reported last: the one the views name
    folder = checkpoint_dir(jobs_env / "jobs", "digits-a")
    step = json.loads((folder / MANIFEST).read_text())["step"]  # the one it saved last
    assert step >= reported >= 3  # (a stop may land between a save and its report)
    out = cli("resume", "digits-a", *local, "--nodes", "1", "--name", "digits-b", "--follow")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert f"[rank 0] resumed after epoch {step}" in lines, lines[:5]
    assert f"[rank 0] epoch {step + 1}/30 loss" in " ".join(lines)
    assert "1 process(es)" in " ".join(lines)
    shown = cli("status", "digits-b", *local).stdout.splitlines()
    assert f"lineage       resumed from digits-a (lineage digits-a), from step {reported}" in shown
