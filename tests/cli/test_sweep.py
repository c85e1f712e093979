"""`kale-ext sweep`, `sweep-status`, `sweeps` and `jobs --sweep`, run as a user runs them."""

import json

import yaml

from kale_ext.runs import record as rec
from tests.cli import cli
from tests.conftest import notebook
from tests.runs.conftest import TRAINING, wait_for


def _nb(root):
    path = root / "nb.ipynb"
    cells = (("quality = 0.5\nlayers = 1\n", ["parameters"]), (TRAINING, ["training"]))
    path.write_text(json.dumps(notebook(*cells)))
    return path


def test_a_grid_sweep_followed_to_its_end_with_the_best_marked(jobs_env):
    path = _nb(jobs_env)
    out = cli("sweep", path, "--param", "quality=0.6,0.9", "--metric", "accuracy",
              "--parallel", "2", "--backend", "local", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "started (a grid of 2, 2 at a time)" in out.stderr
    name = out.stderr.split()[1]
    last = out.stdout.strip().split("\n\n")[-1].splitlines()
    assert last[0] == f"sweep {name}: Complete (2 of 2 complete; best {name}-1)"
    assert last[2].split() == ["*", "1", f"{name}-1", "Complete", "0.9", "0.9"]
    jobs = json.loads(cli("jobs", "--sweep", name, "--backend", "local", "-o", "json").stdout)
    assert sorted(j["name"] for j in jobs) == [f"{name}-0", f"{name}-1"]
    assert {j["sweep"] for j in jobs} == {name}
    status = json.loads(cli("sweep-status", name, "-o", "json").stdout)
    assert status["best"] == f"{name}-1" and [t["best"] for t in status["trials"]] == [True, False]
    listed = cli("sweeps").stdout
    assert name in listed and f"best {name}-1" in listed
    # followed, -o json|yaml stays machine-readable: a JSON line (a YAML document) a change
    as_json = cli("sweep-status", name, "-f", "-o", "json")
    lines = as_json.stdout.splitlines()
    assert as_json.returncode == 0 and json.loads(lines[-1])["best"] == f"{name}-1"
    assert all(json.loads(line)["name"] == name for line in lines)
    as_yaml = cli("sweep-status", name, "-f", "-o", "yaml").stdout
    assert [d["best"] for d in yaml.safe_load_all(as_yaml)] == [f"{name}-1"]


def test_a_sweep_with_a_failed_trial_says_so_and_runs_the_value_set_for_every_trial(jobs_env):
    path = jobs_env / "nb.ipynb"
    training = "assert quality < 0.8, 'too good'\nprint('trained', quality, layers)\n"
    cells = (("quality = 0.5\nlayers = 1\n", ["parameters"]), (training, ["training"]))
    path.write_text(json.dumps(notebook(*cells)))
    out = cli("sweep", path, "--param", "quality=0.6,0.9", "--param", "layers=3", "--name",
              "two-ways", "--parallel", "2", "--backend", "local", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().split("\n\n")[-1].splitlines()
    assert last[0] == "sweep two-ways: Complete (1 of 2 complete; 1 failed)"
    logs = cli("logs", "two-ways-0", "--backend", "local")
    assert "trained 0.6 3" in logs.stdout, logs.stdout
    status = json.loads(cli("sweep-status", "two-ways", "-o", "json").stdout)
    assert status["counts"]["failed"] == 1 and status["tally"] == "1 of 2 complete; 1 failed"


def test_bad_sweeps_say_what_is_wrong(jobs_env):
    path = _nb(jobs_env)
    cases = [
        (["--param", "layers=int(4,1)", "--random", "2", "--metric", "accuracy"],
         "error: param.layers: 'int(4,1)': the low end 4 must be below the high end 1"),
        (["--param", "depth=1,2"], "error: param.depth: the notebook has no such parameter"),
        (["--param", "layers=1,x"], "error: param.layers: expects an int (a whole number)"),
        (["--param", "quality=0.1", "--random", "2"],
         "error: metric: a random search needs the metric to go by (--metric NAME)"),
    ]  # fmt: skip
    for flags, message in cases:
        out = cli("sweep", path, *flags, "--backend", "local")
        assert out.returncode == 1 and out.stderr.startswith(message), out.stderr
    assert cli("sweeps", "-o", "json").stdout.strip() == "[]"
    missing = cli("sweep-status", "nope")
    assert missing.returncode == 1 and "no sweep named 'nope'" in missing.stderr


def test_sweep_cancel_stops_a_running_sweep(jobs_env):
    path = _nb(jobs_env)
    out = cli("sweep", path, "--param", "quality=0.1,0.2,0.3", "--metric", "accuracy",
              "--backend", "local")  # fmt: skip
    assert out.returncode == 0, out.stderr
    name = out.stdout.strip()
    wait_for(lambda: any(t["status"] == "Running" for t in rec.read(name)["trials"]))
    cancelled = cli("sweep-cancel", name)
    assert cancelled.returncode == 0, cancelled.stderr
    lines = cancelled.stdout.splitlines()
    assert lines[0] == f"sweep {name}: Cancelled (0 of 3 complete; 1 cancelled; 2 never started)"
    assert lines[2].split()[:3] == ["0", f"{name}-0", "Cancelled"]
    assert len(lines) == 3  # the second trial never started
    again = cli("sweep-cancel", name, "-o", "json")
    assert json.loads(again.stdout)["status"] == "Cancelled"
    missing = cli("sweep-cancel", "nope")
    assert missing.returncode == 1 and "no sweep named 'nope'" in missing.stderr


def test_a_sweep_whose_tracking_server_is_down_says_so_once_and_runs(jobs_env, monkeypatch):
    from tests.harness.mlflow_server import free_port

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")  # no one there
    out = cli("sweep", _nb(jobs_env), "--param", "quality=0.6,0.9", "--metric", "accuracy",
              "--backend", "local", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stderr
    warned = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "tracking is off for this sweep" in warned[0], out.stderr
    assert "Complete (2 of 2 complete" in out.stdout
