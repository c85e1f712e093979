"""Item 11: a local run never changes the user's installed packages. What a job lacks is
installed into the job's own folder; a package installed at another version than the job asks
for is refused; a missing package whose dependencies would move an installed one fails the job
instead. No network: the packages come from a package index served on loopback, made of wheels
this test builds.

The user's environment here is this Python plus a folder on PYTHONPATH where the test installed
`kale-ext-probe` 1.0 (the index also has 2.0): the jobs run through `kale-ext run` with it."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import notebook

#: name → (version, dependencies); each becomes a wheel in the index.
PROJECTS = {
    "kale-ext-probe": [("1.0", []), ("2.0", [])],
    "kaletiny": [("1.0", [])],
    "kaleneeds": [("1.0", ["kale-ext-probe>=2"])],
}
#: Lists every distribution this environment's Python sees, with where it is.
SNAPSHOT = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps(sorted((d.metadata['Name'], d.version, str(d.locate_file('')))\n"
    "                        for d in m.distributions())))\n"
)
USES_TINY = notebook("import kaletiny\nprint(kaletiny.VALUE, kaletiny.__file__)")
PLAIN = notebook("print('the job ran')")


def build_wheel(root: Path, name: str, version: str, requires: list[str], out: Path) -> None:
    module = name.replace("-", "_")
    project = root / f"{module}-{version}"
    (project / module).mkdir(parents=True)
    (project / module / "__init__.py").write_text(f"VALUE = '{name} {version}'\n")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = {json.dumps(requires)}\n'
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "-w", str(out), str(project)],
        check=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull}, cwd=root,
    )  # fmt: skip


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """A PEP 503 index on loopback (a folder per project, its wheels listed), and a site folder
    with kale-ext-probe 1.0 installed: (index URL, site folder)."""
    base = tmp_path_factory.mktemp("index")
    simple = base / "simple"
    for name, versions in PROJECTS.items():
        for version, requires in versions:
            build_wheel(base / "projects", name, version, requires, simple / name)
    site = base / "site"
    probe = next((simple / "kale-ext-probe").glob("*-1.0-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(site), str(probe)],
        check=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=base))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/", site
    server.shutdown()
    server.server_close()


@pytest.fixture
def user(index, tmp_path):
    """The user's environment: its variables (pip configured by nothing but the job), and a
    function that runs a command line in it."""
    url, site = index
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PYTHONPATH=str(site),
        PIP_CONFIG_FILE=os.devnull,  # no index but the job's own
        KALE_EXT_JOBS_DIR=str(tmp_path / "jobs"),
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], env=env, capture_output=True, text=True, timeout=300,
            cwd=tmp_path,
        )  # fmt: skip

    run.url = url
    yield run
    for job in (tmp_path / "jobs").glob("*/job.json"):
        run("-m", "kale_ext.cli", "delete", job.parent.name, "--backend", "local")


def environment(user) -> list:
    done = user("-c", SNAPSHOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def kale_run(user, tmp_path, nb: dict, *packages: str) -> subprocess.CompletedProcess:
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    flags = [a for p in packages for a in ("--package", p)]
    return user("-m", "kale_ext.cli", "run", "nb.ipynb", "--backend", "local", "--follow",
                "--pip-index-url", user.url, *flags)  # fmt: skip


def test_11_a_missing_package_is_installed_into_the_jobs_folder_only(user, tmp_path):
    before = environment(user)
    done = kale_run(user, tmp_path, USES_TINY, "kaletiny")
    assert done.returncode == 0, done.stdout + done.stderr
    value, where = next(line for line in done.stdout.splitlines() if "kaletiny 1.0" in line).split(
        "kaletiny 1.0 "
    )
    jobs = tmp_path / "jobs"
    assert where.startswith(str(jobs)) and "/tmp/packages/kaletiny/" in where, where
    assert "kale_ext: installing kaletiny for this job only" in done.stdout
    assert environment(user) == before  # nothing installed, upgraded or removed
    assert not list(jobs.glob("*/tmp"))  # the job's folder of packages went with the job


def test_11_another_version_of_an_installed_package_is_refused(user, tmp_path):
    before = environment(user)
    done = kale_run(user, tmp_path, PLAIN, "kale-ext-probe==2.0")
    assert done.returncode != 0
    assert "packages[0]" in done.stderr and "kale-ext-probe 1.0 is installed here" in done.stderr
    assert "a local run never changes the installed packages" in done.stderr
    assert "Traceback" not in done.stderr
    assert environment(user) == before
    assert not list((tmp_path / "jobs").glob("*/job.json"))  # nothing half-created


def test_11_a_package_that_would_move_an_installed_one_fails_the_job(user, tmp_path):
    before = environment(user)
    done = kale_run(user, tmp_path, PLAIN, "kaleneeds")
    assert done.returncode != 0, done.stdout
    name = next((tmp_path / "jobs").glob("*/job.json")).parent.name
    status = user("-m", "kale_ext.cli", "status", name, "--backend", "local", "-o", "json")
    info = json.loads(status.stdout)
    assert info["status"] == "Failed"
    assert info["reason"] == (
        "could not install kaleneeds: kaleneeds 1.0 depends on kale-ext-probe>=2; "
        "kale-ext-probe 1.0 is installed here (a local run never changes the installed packages)"
    )
    assert "the job ran" not in done.stdout  # the nodes never started
    assert environment(user) == before  # kale-ext-probe is still 1.0, and only there


def test_11_an_installed_package_asked_for_without_a_version_is_used_as_it_is(user, tmp_path):
    before = environment(user)
    done = kale_run(user, tmp_path, PLAIN, "kale-ext-probe")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the job ran" in done.stdout and "installing" not in done.stdout
    assert environment(user) == before
