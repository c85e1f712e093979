"""warmup.warm_up: what a compile process (or the server, compiling in threads) loads before a
user's first compile, so that first compile costs what the next ones do."""

import json
import subprocess
import sys
import textwrap

#: In a new process: warm up as a compile process does, then answer a preview of a notebook with
#: tagged cells, a magic and the panel's options, as a compile process does; print the modules
#: that answer imported.
FIRST_PREVIEW = textwrap.dedent(
    """
    import json, pickle, sys
    from kale_ext.server.compile_worker import answer
    from kale_ext.server.warmup import warm_up
    warm_up(False)
    from kale_ext.job.defaults import Defaults
    from kale_ext.job.runtimes import TORCH_DISTRIBUTED
    from kale_ext.server import service
    notebook = json.loads(sys.stdin.read())
    args = (notebook, "train.ipynb", None, OPTIONS, TORCH_DISTRIBUTED, Defaults(), None)
    call = (service.preview_json, args)
    before = set(sys.modules)
    ok, reply = pickle.loads(answer(pickle.dumps(call))[4:])
    assert ok and json.loads(reply)["ok"], reply
    print(json.dumps(sorted(set(sys.modules) - before)))
    """
)


def test_a_first_preview_after_the_warm_up_imports_nothing_more():
    from tests.conftest import notebook

    nb = notebook(
        ("import math\nimport json", ["imports"]),
        ("epochs = 2\nlr = 0.1", ["parameters"]),
        (
            "def scale(x):\n    return x * lr\n\nclass Model:\n    def fit(self):\n        "
            "return [scale(i) for i in range(epochs)]",
            ["functions"],
        ),  # fmt: skip
        "%time x = 1\nresult = Model().fit()\nprint(json.dumps(result), math.pi)",
    )
    # env and volumes are checked as Kubernetes client models: the first job that sets them
    # loads that client (0.3 s, 48 MB a process), which the warm-up leaves to the jobs that do
    options = {"name": "first", "nodes": 2, "cpu": "1", "memory": "2Gi", "packages": ["numpy"]}
    code = FIRST_PREVIEW.replace("OPTIONS", repr(options))
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(nb),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == []
