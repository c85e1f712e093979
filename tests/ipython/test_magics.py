"""The magics under a real IPython shell, submitting real local jobs; the kernel-context
recovery; every bad input shown as one clear message (a UsageError, never a traceback)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass

import pytest
from IPython.core.error import UsageError

from kale_ext import load_ipython_extension
from kale_ext.compile.compiler import compile_notebook
from kale_ext.ipython.results import DryRun, JobStatus, JobTable
from kale_ext.ipython.widgets import JobMonitor
from tests.conftest import EXAMPLES, notebook

TIMEOUT = 120


@pytest.fixture
def ip(shell, tmp_path, monkeypatch):
    """The shell with a fresh namespace and history, jobs in a temporary directory and the text
    monitor (no front end here)."""
    monkeypatch.setenv("KALE_EXT_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.setenv("KALE_EXT_MONITOR", "text")
    for var in ("KALE_EXT_BACKEND", "JPY_SESSION_NAME", "KUBECONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config: the local backend
    shell.reset(new_session=True)
    load_ipython_extension(shell)
    return shell


def run(shell, source: str):
    """Run a cell as a notebook would (history, linecache); raise what it raised."""
    result = shell.run_cell(source, store_history=True)
    if result.error_before_exec is not None:
        raise result.error_before_exec
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def usage_error(shell, capsys, source: str) -> str:
    """The message a cell shows: one UsageError, no traceback."""
    result = shell.run_cell(source, store_history=True)
    err = capsys.readouterr().err
    assert isinstance(result.error_in_exec, UsageError), (result.error_in_exec, err)
    assert "Traceback" not in err
    assert err.startswith("UsageError: ")
    return str(result.error_in_exec)


def finished(monitor: JobMonitor) -> str:
    status = monitor.wait(TIMEOUT)
    assert status in ("Complete", "Failed", "Cancelled"), f"still {status}"
    return status


SETUP = """\
import math
import random as rnd
from statistics import mean
import os.path
slope = 2.5
n_points = 20
names = {"a": [1, 2.5, None], "b": ("x", True)}


class Line:
    def __init__(self, a=0.0):
        self.a = a

    def step(self, lr):
        self.a -= lr * math.sqrt(4)


def loss(points):
    return mean(points) * slope
"""

BODY = """\
rng = rnd.Random(7)
pts = [rng.random() for _ in range(n_points)]
line = Line()
line.step(0.1)
print(f"loss={loss(pts):.3f} a={line.a} path={os.path.join('a', 'b')} names={sorted(names)}")
"""


# ---------------------------------------------------------------------------------------------
# Loading


def test_load_ext_registers_the_magics(ip, capsys):
    ip.extension_manager.loaded.discard("kale_ext")
    run(ip, "%load_ext kale_ext")
    assert "kale_ext" in ip.extension_manager.loaded and capsys.readouterr().out == ""
    magics = ip.magics_manager.magics
    assert "trainjob" in magics["cell"]
    for name in ("kale_submit", "kale_jobs", "kale_logs", "kale_delete"):
        assert name in magics["line"]
    assert "--nodes" in magics["cell"]["trainjob"].__doc__  # `%%trainjob?` shows the options


# ---------------------------------------------------------------------------------------------
# %%trainjob: the kernel's context


def test_dry_run_recovers_imports_definitions_and_literals(ip):
    run(ip, SETUP)
    dry = run(ip, "%%trainjob --backend local --dry-run\n" + BODY)
    assert isinstance(dry, DryRun)
    src = dry.source
    for expected in (
        "import math",
        "import random as rnd",
        "from statistics import mean",
        "import os.path",
        "class Line:",
        "def loss(points):",
        "def trainjob(*, slope=2.5, n_points=20, names={'a': [1, 2.5, None], 'b': ('x', True)}):",
    ):
        assert expected in src, expected
    assert src.index("import math") < src.index("class Line") < src.index("rng = rnd.Random(7)")
    assert dry.parameters == {"slope": 2.5, "n_points": 20, "names": ip.user_ns["names"]}
    assert "kind: TrainJob" in dry.yaml and "numNodes: 1" in dry.yaml
    assert dry.name.startswith("trainjob-") and dry.runtime == "torch-distributed"
    md = dry._repr_markdown_()
    assert "````python\n" in md and "````yaml\n" in md
    assert str(dry).startswith("dry run: trainjob-")  # the plain-text fallback
    # the module is real Python that runs on its own
    scope: dict = {}
    exec(compile(src, "trainjob.py", "exec"), scope)
    assert callable(scope["trainjob"])


def test_dry_run_options_reach_the_trainjob(ip):
    run(ip, "epochs = 3")
    dry = run(
        ip,
        "%%trainjob --backend local --dry-run --nodes 3 --procs-per-node 2 --cpu 2 "
        "--memory 4Gi --name my-job --param epochs=5 --package 'requests>=2'\n"
        "for e in range(epochs):\n    print(e)\n",
    )
    assert dry.name == "my-job" and dry.shape == "3 nodes × 2 processes (asked)"
    assert dry.parameters == {"epochs": 5}
    assert "requests>=2" in dry.packages
    assert "numNodes: 3" in dry.yaml and "numProcPerNode: 2" in dry.yaml
    assert "memory: 4Gi" in dry.yaml and "cpu: '2'" in dry.yaml


def test_param_values_are_typed_by_the_kernels_literals(ip):
    run(ip, "debug = False\nlr = 0.1\nname = 'run'")
    dry = run(
        ip,
        "%%trainjob --backend local --dry-run --param debug=True --param lr=1e-3 --param name=7\n"
        "print(debug, lr, name)\n",
    )
    assert dry.parameters == {"debug": True, "lr": 0.001, "name": "7"}
    with pytest.raises(UsageError, match="parameters.lr: expects a float like its default 0.1"):
        run(ip, "%%trainjob --backend local --dry-run --param lr=fast\nprint(lr)\n")


def test_the_magics_start_from_the_panels_defaults(ip):
    from kale_ext.job.defaults import lab_settings_file

    path = lab_settings_file()
    path.parent.mkdir(parents=True)
    path.write_text('{"nodes": 2, "memory": "3Gi"}  // JupyterLab settings')
    dry = run(ip, "%%trainjob --backend local --dry-run\nprint(1)\n")
    assert dry.shape.startswith("2 nodes") and "memory: 3Gi" in dry.yaml
    dry = run(ip, "%%trainjob --backend local --dry-run --nodes 1\nprint(1)\n")
    assert dry.shape.startswith("1 node")  # the magic's own option first


def test_a_dry_run_needs_no_cluster(ip, monkeypatch, tmp_path):
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KALE_EXT_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    cell = "%%trainjob --backend {} --dry-run --runtime torch-distributed-with-cache\nprint(1)\n"
    for backend in ("kubernetes", "local"):
        dry = run(ip, cell.format(backend))
        assert "name: torch-distributed-with-cache" in dry.yaml
        assert any("its facts are Kubeflow Trainer v2.3.0's published runtimes" in w
                   for w in dry.warnings)  # fmt: skip


def test_config_variable_is_laid_over(ip):
    run(
        ip,
        "from kale_ext.distributed import DistributedConfig\n"
        "cfg = DistributedConfig(env=[{'name': 'GREETING', 'value': 'hi'}], labels={'team': 'ml'})",
    )
    dry = run(ip, "%%trainjob --backend local --dry-run --config cfg\nprint(1)\n")
    assert "name: GREETING" in dry.yaml and "value: hi" in dry.yaml and "team: ml" in dry.yaml


def test_history_imports_keep_submodules_and_the_users_form(ip):
    run(ip, "import xml.dom.minidom\nimport json as j\nfrom collections import OrderedDict as OD")
    dry = run(
        ip,
        "%%trainjob --backend local --dry-run\n"
        "doc = xml.dom.minidom.parseString('<a/>')\n"
        "print(j.dumps(OD(a=1)), doc.documentElement.tagName)\n",
    )
    assert "import xml.dom.minidom" in dry.source
    assert "import json as j" in dry.source
    assert "from collections import OrderedDict as OD" in dry.source


def test_functions_recovered_with_their_dependencies_in_order(ip):
    run(ip, "import functools\nscale = 3")
    run(ip, "def base(x):\n    return x * scale\n")
    run(
        ip,
        "@functools.lru_cache(maxsize=None)\ndef cached(x):\n    return base(x) + 1\n\n"
        "class Model(dict):\n    pass\n\nclass Better(Model):\n    def value(self):\n"
        "        return cached(2)\n\nalias = cached\n",
    )
    dry = run(ip, "%%trainjob --backend local --dry-run\nprint(Better().value(), alias(1))\n")
    src = dry.source
    assert "@functools.lru_cache(maxsize=None)" in src and "alias = cached" in src
    assert src.index("import functools") < src.index("def base")
    assert src.index("def base") < src.index("def cached") < src.index("class Better")
    assert src.index("class Model") < src.index("class Better")
    assert dry.parameters == {"scale": 3}


def test_global_statement_in_a_recovered_function(ip):
    run(ip, "calls = 0\ndef count():\n    global calls\n    calls += 1\n    return calls\n")
    dry = run(ip, "%%trainjob --backend local --dry-run\ncount()\nprint(count(), calls)\n")
    assert "nonlocal calls" in dry.source and dry.parameters == {"calls": 0}


def test_names_the_cell_binds_are_not_taken_from_the_kernel(ip):
    run(ip, "import numpy as np\nmodel = np.zeros(3)\n")
    dry = run(ip, "%%trainjob --backend local --dry-run\nmodel = [1, 2]\nprint(model)\n")
    # neither the kernel's array nor its import: the cell's own list (the compiled module's
    # result saver names NumPy scalars, so the word alone proves nothing)
    assert "np.zeros" not in dry.source and "import numpy" not in dry.source
    assert "model = [1, 2]" in dry.source and dry.parameters == {}


def test_module_dunders_are_not_parameters(ip):
    dry = run(
        ip, "%%trainjob --backend local --dry-run\nif __name__ == '__main__':\n    print(1)\n"
    )
    assert dry.parameters == {}


def test_body_magics_are_compiled(ip):
    dry = run(
        ip,
        "%%trainjob --backend local --dry-run\n%pip install 'tqdm>=4'\n%time x = 1\nprint(x)\n",
    )
    assert "tqdm>=4" in dry.packages and "x = 1" in dry.source


# ---------------------------------------------------------------------------------------------
# %%trainjob: real local jobs


def test_trainjob_runs_a_local_job_and_the_job_magics_see_it(ip, capsys):
    run(ip, SETUP)
    monitor = run(ip, "%%trainjob --backend local --name fit-line\n" + BODY)
    assert isinstance(monitor, JobMonitor) and monitor.name == "fit-line"
    assert finished(monitor) == "Complete"
    out = capsys.readouterr().out
    assert "[fit-line] submitted to the local backend" in out
    assert "[rank 0] loss=" in out and "a=-0.2 path=a/b names=['a', 'b']" in out
    assert "[fit-line] Complete" in out
    assert "loss=" in monitor.model.node_text(0)

    table = run(ip, "%kale_jobs --backend local")
    assert isinstance(table, JobTable) and [j.name for j in table] == ["fit-line"]
    assert "fit-line" in str(table) and "Complete" in table._repr_html_()

    capsys.readouterr()
    run(ip, "%kale_logs fit-line --backend local --tail 1")
    assert capsys.readouterr().out.startswith("[rank 0] loss=")
    run(ip, "%kale_logs fit-line --backend local --node 0 -f")
    assert "[rank 0] loss=" in capsys.readouterr().out

    run(ip, "%kale_delete fit-line --backend local")
    assert capsys.readouterr().out == "deleted fit-line\n"
    assert str(run(ip, "%kale_jobs --backend local")) == "no jobs"


def test_trainjob_two_nodes_in_the_widget(ip, monkeypatch):
    """Two nodes, each its own tab (the ranks torchrun gives them; torch.distributed's world
    is the local backend's test: no torch is imported here)."""
    monkeypatch.setenv("KALE_EXT_MONITOR", "widget")
    run(ip, "from kale_ext.distributed import DistributedConfig\n"
            "cfg = DistributedConfig(env=[{'name': 'GREETING', 'value': 'hello'}])")  # fmt: skip
    monitor = run(
        ip,
        "%%trainjob --backend local --nodes 2 --config cfg\n"
        "import os\n"
        "print(f\"{os.environ['GREETING']} from rank {os.environ['RANK']} of "
        "{os.environ['WORLD_SIZE']}\")\n",
    )
    assert finished(monitor) == "Complete"
    view = monitor.view
    assert 'data-status="Complete"' in view.badge.value
    assert "[rank 0] hello from rank 0 of 2" in view.logs[None].value
    assert "[rank 1] hello from rank 1 of 2" in view.logs[None].value
    assert "[rank 1] hello from rank 1 of 2" in view.logs[1].value
    assert "rank 1" not in view.logs[0].value
    assert view.tabs.titles == ("all nodes", "node 0", "node 1")
    assert view.button.disabled


def test_cancel_stops_a_running_job(ip):
    monitor = run(
        ip,
        "%%trainjob --backend local --name sleeper\nimport time\nprint('started', flush=True)\n"
        "time.sleep(120)\n",
    )
    for _ in range(200):
        if "started" in monitor.model.node_text(0):
            break
        monitor._stop.wait(0.1)
    monitor.cancel(wait=True)
    assert finished(monitor) == "Cancelled"
    assert str(run(ip, "%kale_jobs --backend local")) == "no jobs"


# ---------------------------------------------------------------------------------------------
# %kale_submit


def _tagged_notebook(extra_cells=()):
    return notebook(
        ("import math", ["imports"]),
        ("radius = 2.0", ["parameters"]),
        "area = math.pi * radius ** 2\nprint(f'area {area:.2f}')",
        *extra_cells,
    )


def test_kale_submit_finds_the_notebook_through_the_session(ip, tmp_path, monkeypatch, capsys):
    path = tmp_path / "circle.ipynb"
    path.write_text(
        json.dumps(
            _tagged_notebook(
                ["%load_ext kale_ext\n%kale_submit --backend local", "%%trainjob\nprint(1)\n"]
            )
        )
    )
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    dry = run(ip, "%kale_submit --backend local --dry-run --param radius=3")
    assert dry.name.startswith("circle-") and dry.parameters == {"radius": 3}
    assert "kale-ext.io/notebook: circle.ipynb" in dry.yaml
    assert "trainjob" not in dry.source and "kale_submit" not in dry.source

    monitor = run(ip, "%kale_submit --backend local --name circle-run")
    assert finished(monitor) == "Complete"
    assert "[rank 0] area 12.57" in capsys.readouterr().out


def test_kale_submit_takes_the_train_call_chosen(ip, tmp_path, monkeypatch):
    """A notebook with two train() calls: the last is the job unless --train-call says which."""
    from tests.compile import sdk_notebooks as nbs

    path = tmp_path / "two.ipynb"
    path.write_text(json.dumps(notebook(*nbs.TWO_CALLS)))
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    last = run(ip, "%kale_submit --backend local --dry-run")
    first = run(ip, "%kale_submit --backend local --dry-run --train-call 1")
    assert (last.parameters, first.parameters) == ({"lr": 0.01}, {"lr": 1.0})
    assert "numNodes: 3" in last.yaml and "numNodes: 1" in first.yaml


def test_kale_submit_session_path_relative_to_the_kernels_directory(ip, tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "circle.ipynb").write_text(json.dumps(_tagged_notebook()))
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("JPY_SESSION_NAME", "some/server/dir/circle.ipynb")
    assert run(ip, "%kale_submit --backend local --dry-run").name.startswith("circle-")


def test_kale_submit_vscode_and_explicit_paths(ip, tmp_path):
    (tmp_path / "a.ipynb").write_text(json.dumps(_tagged_notebook()))
    shutil.copy(EXAMPLES / "plain_python.ipynb", tmp_path / "plain_python.ipynb")
    ip.user_ns["__vsc_ipynb_file__"] = str(tmp_path / "a.ipynb")
    assert run(ip, "%kale_submit --backend local --dry-run").name.startswith("a-")
    dry = run(
        ip, f"%kale_submit --backend local --dry-run --notebook '{tmp_path}/plain_python.ipynb'"
    )
    assert dry.function_name == "plain_python" and dry.parameters["steps"] == 400


def test_a_failed_job_says_where_and_why_in_the_monitor_and_kale_status(ip, tmp_path, capsys):
    broken = notebook(("x = 1", ["imports"]), "print('before')\nrow = {}\nrow['label']")
    (tmp_path / "broken.ipynb").write_text(json.dumps(broken))
    monitor = run(
        ip, f"%kale_submit --backend local --name broken --notebook '{tmp_path}/broken.ipynb'"
    )
    assert finished(monitor) == "Failed"
    said = """node 0, rank 0: cell 2 ("training"), line 3: KeyError: 'label'"""
    out = capsys.readouterr().out
    assert f"[broken] Failed: {said}" in out
    assert 'where         cell 2 ("training"), line 3' in out  # the text monitor, at the end

    status = run(ip, "%kale_status broken --backend local")
    assert isinstance(status, JobStatus) and said in str(status).splitlines()
    assert "error         KeyError: &#x27;label&#x27;" in status._repr_html_()
    assert [j.name for j in run(ip, "%kale_jobs --backend local --status failed")] == ["broken"]
    assert str(run(ip, "%kale_jobs --backend local --status running")) == "no jobs"
    assert "invalid choice" in usage_error(ip, capsys, "%kale_jobs --status lost")


def test_a_failed_trainjob_names_the_line_of_its_own_cell(ip, capsys):
    run(ip, "def label_of(row):\n    return row['label']\n")
    monitor = run(ip, "%%trainjob --backend local --name oops\nrow = {}\nlabel_of(row)\n")
    assert finished(monitor) == "Failed"
    out = capsys.readouterr().out
    said = "node 0, rank 0: function `label_of` (from the kernel), line 2: KeyError: 'label'"
    assert f"[oops] Failed: {said}" in out
    assert "where         function `label_of` (from the kernel), line 2\n" in out
    assert "cell id" not in monitor.model.failure_text()
    status = str(run(ip, "%kale_status oops --backend local"))  # the job itself: its cells
    assert 'cell 1 ("functions"), line 2' in status

    again = run(ip, "%%trainjob --backend local --name oops-two\nx = 1\n{}['label']\n")
    assert finished(again) == "Failed"
    assert "the %%trainjob cell, line 3: KeyError" in capsys.readouterr().out


def test_kale_magics_are_left_out_of_a_submitted_notebook():
    job = compile_notebook(
        notebook(
            ("%%trainjob --nodes 2\nprint('its own job')", ["training"]),
            "x = 1\n%kale_jobs\n%kale_logs j -f\nprint(x)",
            "%load_ext kale_ext",
        )
    )
    assert "its own job" not in job.source and "kale_jobs" not in job.source
    assert [s["cell"] for s in job.source_map] == [1]


# ---------------------------------------------------------------------------------------------
# Every bad input: one clear message


@dataclass
class Bad:
    id: str
    cell: str
    expected: tuple[str, ...]
    setup: str = ""


BAD = [
    Bad("unknown option", "%%trainjob --bogus 1\nprint(1)", ("%%trainjob: unrecognized arguments: --bogus 1",)),
    Bad("nodes 0", "%%trainjob --nodes 0\nprint(1)", ("argument --nodes: must be at least 1, got 0",)),
    Bad("nodes not a number", "%%trainjob --nodes two\nprint(1)", ("argument --nodes: must be a whole number, not 'two'",)),
    Bad("procs 0", "%%trainjob --procs-per-node 0\nprint(1)", ("argument --procs-per-node: must be at least 1",)),
    Bad("gpu -1", "%%trainjob --gpu -1\nprint(1)", ("argument --gpu: must be at least 0, got -1",)),
    Bad("cpu", "%%trainjob --cpu lots\nprint(1)", ("argument --cpu: 'lots' is not a Kubernetes quantity",)),
    Bad("memory", "%%trainjob --memory '4 Gi'\nprint(1)", ("argument --memory:", "(no spaces)")),
    Bad("backend", "%%trainjob --backend moon\nprint(1)", ("argument --backend: invalid choice: 'moon'",)),
    Bad("package", "%%trainjob --package 'bad pkg!'\nprint(1)", ("argument --package: 'bad pkg!' is not a package requirement",)),
    Bad("param syntax", "%%trainjob --param lr\nprint(1)", ("argument --param: 'lr': write NAME=VALUE",)),
    Bad("param unknown", "%%trainjob --backend local --param lr=1\nprint(1)", ("parameters.lr: the notebook has no such parameter",)),
    Bad("job name", "%%trainjob --backend local --dry-run --name Bad_Name\nprint(1)", ("%%trainjob: name: 'Bad_Name' is not a valid job name",)),
    Bad("gpu without a GPU", "%%trainjob --backend local --gpu 1\nprint(1)", ("%%trainjob: gpu: the job asks for 1 nvidia.com/gpu per node, and this machine has no GPU",)),
    Bad("tpu without a TPU", "%%trainjob --backend local --config cfg\nprint(1)", ("%%trainjob: limits.google.com/tpu: the job asks for 4 google.com/tpu per node, and this machine has no google.com/tpu: ask for no google.com/tpu, allow CPU for local runs, or run on Kubernetes",), "from kale_ext.distributed import DistributedConfig\ncfg = DistributedConfig(limits={'google.com/tpu': '4'})"),
    Bad("runtime", "%%trainjob --backend local --runtime nope\nprint(1)", ("%%trainjob: runtime: runtime 'nope' not found (available: torch-distributed, xgboost-distributed, jax-distributed, deepspeed-distributed, mlx-distributed)",)),
    Bad("cluster-only runtime", "%%trainjob --backend local --runtime torchtune-llama3.2-1b\nprint(1)", ("%%trainjob: runtime: runtime 'torchtune-llama3.2-1b' runs only on a cluster: it first fills its volumes in initializer jobs",)),
    Bad("empty cell", "%%trainjob --nodes 2\n", ("%%trainjob is a cell magic, but the cell body is empty",)),
    Bad("blank cell", "%%trainjob\n   \n\n", ("%%trainjob: the cell is empty",)),
    Bad("syntax error", "%%trainjob --backend local\nx = 1\nprint((x)\n", ("%%trainjob: cannot compile: line 3: syntax error", "print((x)")),
    Bad("undefined name", "%%trainjob --backend local\nx = 1\nprint(undefined_thing)\n", ("%%trainjob: cannot compile: line 3: name `undefined_thing` is not defined in the cell or in the kernel",)),
    Bad("typo", "%%trainjob --backend local\nprint(learning_rat)\n", ("did you mean `learning_rate`?",), "learning_rate = 0.1"),
    Bad("shell command", "%%trainjob --backend local\n!ls\n", ("line 2: shell command `!ls` cannot run in a training job",)),
    Bad("notebook only", "%%trainjob --backend local\nprint(get_ipython())\n", ("line 2: name `get_ipython` exists only inside a notebook kernel",)),
    Bad("config missing", "%%trainjob --config cfg\nprint(1)", ("%%trainjob: --config cfg: the kernel has no variable `cfg`",)),
    Bad("config not a DistributedConfig", "%%trainjob --config cfg\nprint(1)", ("--config cfg: `cfg` is a dict, not a DistributedConfig",), "cfg = {'env': []}"),
    Bad("config not a name", "%%trainjob --config 'a b'\nprint(1)", ("argument --config: 'a b' is not a variable name",)),
    Bad("tensor", "%%trainjob --backend local\nimport torch\nprint(data.sum())\n", ("cannot travel into the job: line 3: `data` is a torch.Tensor object, which cannot travel",), "import torch\ndata = torch.zeros(3)"),
    Bad("open file", "%%trainjob\nprint(fh.read())\n", ("line 2: `fh` is an open file",), "fh = open(__import__('os').devnull)"),
    Bad("lambda", "%%trainjob\nprint(f(1))\n", ("`f` is a lambda",), "f = lambda x: x"),
    Bad("exec function", "%%trainjob\nprint(g(1))\n", ("`g` is a function whose source code is not available",), "exec('def g(x):\\n    return x')"),
    Bad("closure", "%%trainjob\nprint(h(1))\n", ("`h` is a function defined inside another function",), "def make():\n    def h(x):\n        return x\n    return h\nh = make()"),
    Bad("instance", "%%trainjob\nprint(p.a)\n", ("`p` is an instance of the notebook's class `P`",), "class P:\n    a = 1\np = P()"),
    Bad("nan", "%%trainjob\nprint(lr)\n", ("`lr` is nan, which is not a finite number",), "lr = float('nan')"),
    Bad("numpy scalar", "%%trainjob\nprint(lr)\n", ("`lr` is a numpy.float64, not a plain float: convert it",), "import numpy as np\nlr = np.float64(0.5)"),
    Bad("set", "%%trainjob\nprint(s)\n", ("`s` is a set: parameters are numbers",), "s = {1, 2}"),
    Bad("too large", "%%trainjob\nprint(len(big))\n", ("`big` is a list whose value is", "too large to travel as a parameter"), "big = list(range(5000))"),
    Bad("generator", "%%trainjob\nprint(next(gen))\n", ("`gen` is a generator",), "gen = (i for i in range(3))"),
    Bad("read by a function", "%%trainjob\nprint(fn())\n", ("cannot travel into the job: `fh` (read by `fn`) is an open file",)),
    Bad("two problems", "%%trainjob\nprint(fh, p)\n", ("2 names the cell reads cannot travel", "  line 2: `fh` is an open file", "  line 2: `p` is an instance"), "fh = open(__import__('os').devnull)\nclass P:\n    pass\np = P()"),
    Bad("undefined in a function", "%%trainjob --backend local\nprint(helper())\n", ("function `helper` (from the kernel), line 2: name `zzz` is not defined in the cell or in the kernel",), "def helper():\n    return zzz"),
    Bad("submit: no notebook", "%kale_submit", ("%kale_submit: cannot tell which notebook to submit: this kernel was not started for a notebook file; pass --notebook PATH",)),
    Bad("submit: missing file", "%kale_submit --notebook nowhere.ipynb", ("%kale_submit: --notebook nowhere.ipynb: no such file",)),
    Bad("submit: nodes 0", "%kale_submit --nodes 0", ("%kale_submit: argument --nodes: must be at least 1, got 0",)),
    Bad("logs: no name", "%kale_logs", ("%kale_logs: the following arguments are required: name",)),
    Bad("logs: unknown job", "%kale_logs nope --backend local", ("%kale_logs: no local job named 'nope'",)),
    Bad("logs: negative node", "%kale_logs nope --node -1", ("argument --node: must be at least 0, got -1",)),
    Bad("delete: unknown job", "%kale_delete nope --backend local", ("%kale_delete: no local job named 'nope'",)),
    Bad("jobs: unknown option", "%kale_jobs --all", ("%kale_jobs: unrecognized arguments: --all",)),
]  # fmt: skip


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_input_is_one_clear_message(ip, capsys, case):
    if case.id == "read by a function":
        run(ip, "fh = open(__import__('os').devnull)\ndef fn():\n    return fh.read()\n")
    elif case.setup:
        run(ip, case.setup)
    message = usage_error(ip, capsys, case.cell)
    for part in case.expected:
        assert part in message, message


def test_session_pointing_at_a_missing_file(ip, capsys, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/nowhere/renamed.ipynb")
    message = usage_error(ip, capsys, "%kale_submit")
    assert "the kernel's session names /nowhere/renamed.ipynb" in message
    assert "pass --notebook PATH" in message


def test_compile_error_in_a_submitted_notebook_names_the_cell(ip, capsys, tmp_path):
    (tmp_path / "broken.ipynb").write_text(json.dumps(notebook("x = 1", "print(y)")))
    message = usage_error(
        ip, capsys, f"%kale_submit --backend local --notebook {tmp_path}/broken.ipynb"
    )
    assert message == (
        "%kale_submit: cannot compile: cell 2, line 1: name `y` used in cell 2, line 1 is never "
        "defined"
    )


def test_line_magic_used_as_trainjob(ip, capsys):
    result = ip.run_cell("%trainjob --nodes 2", store_history=True)
    assert not result.success
    assert "Traceback" not in capsys.readouterr().err


def test_trainjob_is_named_after_the_sessions_notebook(ip, tmp_path, monkeypatch):
    (tmp_path / "Digits Demo.ipynb").write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "Digits Demo.ipynb"))
    run(ip, "digits_demo = 1")  # a kernel variable with the function's name
    dry = run(ip, "%%trainjob --backend local --dry-run\nprint(digits_demo)\n")
    assert dry.function_name == "digits_demo_job" and dry.name.startswith("digits-demo-job-")
    assert "kale-ext.io/notebook: Digits Demo.ipynb" in dry.yaml
