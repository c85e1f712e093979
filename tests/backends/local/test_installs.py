"""What a local job may install, and where: installed packages are never replaced (the
end-to-end runs with a real package index are in tests/robustness/test_local_packages.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from kale_ext.backends.local.installs import (
    _name_version,
    constraints,
    installed,
    needed,
    pip_error,
    prepare,
    refusal,
)
from kale_ext.compile.compiler import compile_notebook
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import LOCAL_PACKAGES_ENV, training_command
from tests.conftest import notebook

HAVE = {"torch": ("torch", "2.13.0+cpu"), "numpy": ("numpy", "1.26.4"), "ray": ("ray", "2.9.0")}
OTHER_OS = 'sys_platform == "nonexistent"'

CASES = [
    # (requirement, refused with, needed)
    ("torch", None, False),
    ("torch==2.13.0", None, False),  # the pins of a compile: the local label does not matter
    ("torch>=2", None, False),
    ("Torch", None, False),
    ("torch==2.5.0", "torch 2.13.0+cpu is installed here", None),
    ("torch<2", "the job asks for torch <2", None),
    ("torch @ https://example.org/torch-2.5.0.whl", "from https://example.org", None),
    (f"torch==2.5.0; {OTHER_OS}", None, False),  # not for this platform: nothing to do
    ("ray[default]", None, True),  # its extras' dependencies may be missing
    ("kaletiny", None, True),
    ("kaletiny==1.0", None, True),
    ("https://example.org/kaletiny-1.0-py3-none-any.whl", None, True),  # named by the dry run
]


@pytest.mark.parametrize("requirement, refused, need", CASES, ids=[c[0] for c in CASES])
def test_what_is_refused_and_what_is_installed(requirement, refused, need):
    error = refusal(["numpy==1.26.4", requirement], HAVE)
    if refused is None:
        assert error is None
        assert needed([requirement], HAVE) == ([requirement] if need else [])
    else:
        assert error.field == "packages[1]" and refused in error.message
        assert "a local run never changes the installed packages" in error.message


def test_installed_is_what_python_imports():
    have = installed()
    assert have["packaging"][1] == __import__("packaging").__version__
    # PyPI's CUDA build says 2.13.0+cu130 at import and 2.13.0 in its metadata (what pip reads)
    torch = Version(__import__("torch").__version__)
    assert have["torch"][0] == "torch" and Version(have["torch"][1]).public == torch.public


def test_installed_reads_every_distribution_as_importlib_does():
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    theirs: dict = {}
    for dist in md.distributions():  # the email parser over each whole file: the slow way
        if dist.metadata["Name"]:
            theirs.setdefault(canonicalize_name(dist.metadata["Name"]), (dist.metadata["Name"],
                                                                         dist.version))  # fmt: skip
    assert installed() == theirs


@pytest.mark.parametrize(
    "text",
    [
        "Metadata-Version: 2.1\nSummary: no name\n\nName: body\nVersion: 9\n",  # not headers
        "name: x\nversion: 1\n",  # header names are read as the email parser reads them
    ],
)
def test_metadata_of_an_unusual_shape_is_read_as_importlib_reads_it(tmp_path, text):
    import importlib.metadata as md

    info = tmp_path / "x-1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(text)
    dist = md.PathDistribution(info)
    assert _name_version(dist) == (dist.metadata["Name"], dist.version)


def test_constraints_pin_every_installed_distribution():
    text = constraints({**HAVE, "odd": ("odd", "not a version")})
    assert text == "numpy==1.26.4\nray==2.9.0\ntorch==2.13.0+cpu\n"


PIP_CONFLICT = """\
ERROR: Cannot install kaleneeds==1.0 because these package versions have conflicting dependencies.

The conflict is caused by:
    kaleneeds 1.0 depends on torch>=3
    The user requested (constraint) torch==2.13.0+cpu

To fix this you could try to:
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/
"""


@pytest.mark.parametrize(
    "output, said",
    [
        (
            PIP_CONFLICT,
            "kaleneeds 1.0 depends on torch>=3; torch 2.13.0+cpu is installed here "
            "(a local run never changes the installed packages)",
        ),
        (
            "Looking in indexes: x\nERROR: Could not find a version that satisfies the "
            "requirement nope (from versions: none)\nERROR: No matching distribution found\n",
            "Could not find a version that satisfies the requirement nope (from versions: none)",
        ),
        ("", "pip failed"),
    ],
    ids=["conflict", "not found", "silent"],
)
def test_pips_error_in_a_line(output, said):
    assert pip_error(output) == said


def test_a_job_that_needs_nothing_installs_nothing(tmp_path):
    record = {"num_nodes": 2, "env": {}, "packages": ["torch", "packaging"]}
    for k in range(2):
        (tmp_path / f"node-{k}.log").touch()
    env = prepare(tmp_path, record)
    assert env == {LOCAL_PACKAGES_ENV: str((tmp_path / "tmp" / "packages").resolve())}
    assert all((tmp_path / f"node-{k}.log").read_bytes() == b"" for k in range(2))


def test_the_bootstrap_installs_nothing_in_a_local_run(tmp_path):
    """Where the local backend says it installed the job's packages, the bootstrap never runs
    pip, even for a package it cannot find (on a cluster it would install it)."""
    job = compile_notebook(notebook("print('ok')"))
    spec = build_job_spec(job, {"packages": ["kale-ext-no-such-package==1.0"]})
    spec.runtime = type(spec.runtime)(name="plain", framework="xgboost")  # launcher: python
    env = {**os.environ, LOCAL_PACKAGES_ENV: str(tmp_path), "TMPDIR": str(tmp_path)}
    out = subprocess.run(
        training_command(spec), env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok\n"  # no "installing" line, no pip


def test_the_plan_travels_in_the_record(tmp_path):
    """The supervisor reads the job's packages and indexes from its record."""
    from kale_ext.backends.local.backend import LocalBackend
    from kale_ext.backends.submit import submit

    backend = LocalBackend(tmp_path / "jobs")
    nb = notebook("print('ok')")
    options = {"packages": ["torch"], "pip_index_urls": ["https://example.org/simple"]}
    name = submit(backend, nb, {**options, "config": {"run_policy": {"suspend": True}}}).name
    record = json.loads(Path(tmp_path / "jobs" / name / "job.json").read_text())
    assert record["packages"][-1] == "torch"
    assert record["pip_index_urls"] == ["https://example.org/simple"]
    assert sys.executable == record["command"][0]
