"""The TrainJob's command runs the compiled function byte-exact.

The Kubeflow SDK embeds the source in an unquoted bash heredoc: bash rewrites `$HOME`, `$5` and
backslashes, runs backticks and `$(...)`, and a line `EOM` ends the script. Here the generated
command runs through bash, as a container would run it, with torchrun and the PET_* variables
the Trainer torch plugin sets, and must print exactly what a direct call prints.
"""

import contextlib
import importlib.util
import io
import os
import shlex
import socket
import subprocess

import pytest

from kale_ext.compile.compiler import compile_notebook, write_module
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import training_command
from tests.conftest import notebook

TRICKY = (
    'money = "cost: $5 and $HOME"\n'
    'windows = "C:\\\\temp\\\\new"\n'
    'ticks = "`echo injected`"\n'
    'subshell = "$(echo also-injected)"\n'
    'heredoc = """\nEOM\nEOF\n\'EOM\'\n"""\n'
    "for word in (money, windows, ticks, subshell, heredoc, 'ünïcödé ✓ 東京', 'a\tb'):\n"
    "\tprint(repr(word), suffix)\n"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_command_runs_the_function_byte_exact(tmp_path):
    job = compile_notebook(notebook(("suffix = '$PATH `x`'", ["parameters"]), TRICKY))
    assert "$HOME" in job.source and "\nEOM\n" in job.source and "\t" in job.source

    spec = build_job_spec(job, {"parameters": {"suffix": "\\n $(id) `id` 'q' \"dq\""}})
    module = write_module(job, tmp_path)
    loaded = importlib.util.spec_from_file_location("tricky", module)
    mod = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(mod)
    direct = io.StringIO()
    with contextlib.redirect_stdout(direct):
        getattr(mod, job.function_name)(**spec.func_args)

    pet = {"PET_NNODES": "1", "PET_NPROC_PER_NODE": "1", "PET_NODE_RANK": "0",
           "PET_MASTER_ADDR": "127.0.0.1", "PET_MASTER_PORT": str(free_port())}  # fmt: skip
    command = training_command(spec)
    via_bash = subprocess.run(
        ["bash", "-c", shlex.join(command)],
        env={**os.environ, **pet},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert via_bash.returncode == 0, via_bash.stderr
    prefix = "[default0]:"  # torchrun --tee marks each line with its local rank
    lines = via_bash.stdout.splitlines(keepends=True)
    assert all(line.startswith(prefix) for line in lines), lines
    assert "".join(line[len(prefix) :] for line in lines) == direct.getvalue()
    assert "$(echo also-injected)" in via_bash.stdout and "`echo injected`" in via_bash.stdout
    assert os.environ["HOME"] not in via_bash.stdout


def test_command_is_plain_argv_without_a_shell():
    job = compile_notebook(notebook("print(1)"))
    command = training_command(build_job_spec(job))
    assert command[:2] == ["python", "-c"] and "bash" not in command


def test_missing_packages_are_installed_before_the_run(tmp_path):
    """The bootstrap installs only what is missing; a present package, or a pin the installed
    version meets, installs nothing."""
    job = compile_notebook(notebook(("import packaging", ["imports"]), "print('ok')"))
    assert [p.requirement for p in job.packages] == ["packaging"]
    for pin in (False, True):
        spec = build_job_spec(job, {"pin_packages": pin})
        spec.runtime = type(spec.runtime)(name="plain", framework="xgboost")  # launcher: python
        assert [p.pinned for p in spec.packages] == [pin]
        out = subprocess.run(training_command(spec), capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "ok\n"  # no "installing" line: nothing was missing


#: The runtime's image, emulated: the xgboost a cluster image ships (as `xgboost[cuda12]==3.0.2`
#: is), under another distribution name and version than this machine's (xgboost-cpu 3.2.0).
IMAGE = {"xgboost": ("xgboost", "3.0.2")}
FAKE_PIP = (
    "import json, os, sys\n"
    "keys = ('PIP_DISABLE_PIP_VERSION_CHECK', 'PIP_BREAK_SYSTEM_PACKAGES')\n"
    "with open(os.environ['FAKE_PIP_LOG'], 'a') as f:\n"
    "    f.write(json.dumps([sys.argv[1:], {k: os.environ.get(k) for k in keys}]) + '\\n')\n"
)


def emulated_image(folder, modules: dict[str, tuple[str, str]]):
    """A folder standing for an image's site-packages: each module importable, its distribution
    at its version, packaging (the bootstrap reads versions with it) and a `pip` that records
    what it is asked to install and installs nothing."""
    import packaging

    folder.mkdir()
    for module, (dist, version) in modules.items():
        (folder / module).mkdir()
        (folder / module / "__init__.py").write_text(f"__version__ = {version!r}\n")
        info = folder / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "top_level.txt").write_text(module + "\n")
    (folder / "packaging").symlink_to(os.path.dirname(packaging.__file__))
    (folder / "pip").mkdir()
    (folder / "pip" / "__init__.py").write_text("")
    (folder / "pip" / "__main__.py").write_text(FAKE_PIP)
    return folder


def run_in_image(spec, image, tmp_path):
    """The node's command as the image's Python runs it (this one's standard library only,
    ``image`` as its site-packages): (its output, each pip call as [argv, env])."""
    import json
    import sys

    command = training_command(spec)
    log = tmp_path / "pip-calls.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "KALE_EXT_"))}
    env.update(PYTHONPATH=str(image), FAKE_PIP_LOG=str(log))  # pip's settings: the command's
    out = subprocess.run([sys.executable, "-S", *command[1:]], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return out.stdout, calls


XGBOOST_NOTEBOOK = notebook(
    ("import xgboost", ["imports"]), "print('xgboost', xgboost.__version__)"
)


def xgboost_spec(options=None):
    from kale_ext.job.runtimes import Runtime

    job = compile_notebook(XGBOOST_NOTEBOOK)
    runtime = Runtime(name="xgboost-distributed", framework="xgboost")  # a cluster's
    return build_job_spec(job, options, runtime)


def test_a_cluster_job_installs_nothing_the_image_has(tmp_path):
    """An xgboost notebook compiled here (xgboost-cpu 3.2.0) on a cluster runtime whose image has
    xgboost 3.0.2: the image's is used, nothing is installed."""
    pytest.importorskip("xgboost")
    spec = xgboost_spec()
    [package] = spec.packages
    assert (package.check, package.module, package.pinned) == ("import", "xgboost", False)
    image = emulated_image(tmp_path / "image", IMAGE)
    out, calls = run_in_image(spec, image, tmp_path)
    assert calls == [] and "installing" not in out
    assert out.endswith("xgboost 3.0.2\n")  # the image's own


def test_a_pinned_package_is_installed_when_the_image_has_another_version(tmp_path):
    """Pinned by the user (--pin-packages here: xgboost-cpu==3.2.0, or a %pip line's xgboost==3.2.0),
    a package the image has at another version is installed; at the same version, not."""
    pytest.importorskip("xgboost")
    image = emulated_image(tmp_path / "image", IMAGE)
    pinned = xgboost_spec({"pin_packages": True})
    [package] = pinned.requirements
    assert package.endswith("==" + __import__("xgboost").__version__.split("+")[0])
    out, calls = run_in_image(pinned, image, tmp_path)
    assert [argv[-1] for argv, _ in calls] == [package] and "installing " + package in out
    for wanted, installs in (("xgboost==3.2.0", True), ("xgboost==3.0.2", False)):
        (tmp_path / "pip-calls.jsonl").unlink(missing_ok=True)
        spec = xgboost_spec({"packages": [wanted]})
        checks = {p.requirement: p.check for p in spec.packages}
        assert checks == {wanted: "version"}  # stands for the import here's xgboost-cpu provides
        out, calls = run_in_image(spec, image, tmp_path)
        assert [argv[-1] for argv, _ in calls] == ([wanted] if installs else []), calls


def test_an_sdk_notebooks_packages_install_as_the_sdk_installs_them(tmp_path):
    """The train() call's packages_to_install, as listed, with the SDK's own pip flags and
    environment (kubeflow.trainer's get_script_for_python_packages): per user first."""
    import re
    import shlex

    utils = pytest.importorskip("kubeflow.trainer.backends.kubernetes.utils")
    from tests.compile import sdk_notebooks as nbs

    urls = ["https://pypi.org/simple", "https://download.pytorch.org/whl/cpu"]
    listed = ["numpy<3", "transformers[torch]", "xgboost"]
    train = (
        "TrainerClient().train(runtime='xgboost-distributed', trainer=CustomTrainer(\n"
        f"    func=train_patched, packages_to_install={listed!r}, pip_index_urls={urls!r}))\n"
    )
    spec = build_job_spec(compile_notebook(notebook(nbs.IMPORTS, nbs.PATCH_FN, train)))
    spec.runtime = type(spec.runtime)(name="xgboost-distributed", framework="xgboost")
    assert spec.requirements == listed and spec.pip_index_urls == urls
    image = emulated_image(tmp_path / "image", IMAGE)  # xgboost is there: pip decides, as the SDK
    out, calls = run_in_image(spec, image, tmp_path)
    assert out.endswith("lr 0.1\n")
    [(argv, env)] = calls  # per user worked (the fake pip succeeds): no system-wide try
    script = utils.get_script_for_python_packages(listed, urls)
    script = script.replace("\\\n", " ")  # its continued lines as one
    line = next(t for t in script.splitlines() if "python -m pip install" in t)
    sdk_env = dict(re.findall(r"(PIP_\w+)=(\S+)", line.split("python -m pip")[0]))
    arrays = {}  # each bash array the script defines, as its use in a command names it
    for name in ("PIP_OPTS", "PACKAGES"):
        words = re.search(rf"^{name}=\((.*)\)$", script, re.M).group(1)
        arrays['"${' + name + '[@]}"'] = shlex.split(words)
    sdk_argv = []  # the SDK's first pip command (per user), its arrays expanded as bash does
    for word in line.split("python -m pip ")[1].split():
        if word.startswith(">"):
            break
        sdk_argv += arrays.get(word, [word])
    assert argv == sdk_argv
    assert env == sdk_env
