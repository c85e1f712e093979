"""The packages a job installs: an SDK notebook's train() list as listed, a tagged notebook's
imports by name, pinned to the versions here only when the job asks (by default: locally), the
packages option above both; each with where it came from and when it is installed."""

from __future__ import annotations

import importlib.metadata as md

import pytest
from packaging.version import Version

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.packages import Pinning, job_packages, package_lines, pinning
from kale_ext.job.preview import render
from kale_ext.job.runtimes import TORCH_DISTRIBUTED, Runtime
from kale_ext.job.spec import build_job_spec
from tests.compile import sdk_notebooks as nbs
from tests.conftest import notebook

CLUSTER = Runtime(name="torch-distributed", framework="torch")
TAGGED = notebook(
    ("%pip install 'PyYAML>=6'\nimport numpy\nimport yaml", ["imports"]), "print(numpy, yaml)"
)
NUMPY = Version(md.version("numpy")).public


def test_pinning_is_on_locally_and_off_on_a_cluster_unless_asked():
    assert pinning(None, TORCH_DISTRIBUTED) == Pinning(
        True, "the default for local runs: they use this environment's versions"
    )
    assert pinning(None, CLUSTER).on is False and "cluster" in pinning(None, CLUSTER).why
    assert pinning(False, TORCH_DISTRIBUTED) == Pinning(False, "--no-pin-packages asked")
    assert pinning(True, CLUSTER) == Pinning(True, "--pin-packages asked")


def test_a_tagged_notebooks_imports_are_pinned_only_when_asked():
    job = compile_notebook(TAGGED)
    off = job_packages(job, None, Pinning(False, ""))
    assert [p.requirement for p in off] == ["numpy", "PyYAML>=6"]
    on = job_packages(job, None, Pinning(True, ""))
    assert [p.requirement for p in on] == [f"numpy=={NUMPY}", "PyYAML>=6"]  # the user's stays
    assert [p.pinned_here for p in on] == [True, False]


def test_the_packages_option_replaces_one_of_its_name_keeping_its_import():
    job = compile_notebook(TAGGED)
    chosen = job_packages(job, ["NumPy", "tqdm==4.67.1"], Pinning(True, ""))
    shown = [(p.requirement, p.source, p.module, p.check) for p in chosen]
    assert shown == [
        ("PyYAML>=6", "pip", "yaml", "version"),
        ("NumPy", "option", "numpy", "import"),  # installed only when `import numpy` fails
        ("tqdm==4.67.1", "option", None, "version"),
    ]
    with pytest.raises(ConfigError, match="requirement string"):
        job_packages(job, [""], Pinning(False, ""))


def test_an_sdk_notebook_installs_its_train_call_list_as_listed():
    """torch is imported by the function, numpy<3 listed: the job installs numpy<3 alone, the
    same with pinning on (the SDK pins nothing)."""
    job = compile_notebook(notebook(*nbs.TORCH))
    for pin in (Pinning(False, ""), Pinning(True, "")):
        [listed] = job_packages(job, None, pin)
        assert (listed.requirement, listed.source, listed.cell, listed.line) == (
            "numpy<3",
            "sdk",
            4,
            9,
        )
        assert listed.origin() == "the train() call's packages_to_install (cell 5, line 9)"
    assert job_packages(compile_notebook(notebook(*nbs.XGBOOST)), None, Pinning(True, "")) == []


def test_an_sdk_list_without_an_index_uses_the_sdks_default_index():
    """As CustomTrainer's pip_index_urls default (the SDK passes --index-url); a tagged
    notebook's packages use the image's pip configuration."""
    job = compile_notebook(notebook(*nbs.XGBOOST_PACKAGES))
    runtime = Runtime(name="xgboost-distributed", framework="xgboost")
    spec = build_job_spec(job, None, runtime)
    assert spec.requirements == ["xgboost", "scikit-learn>=1.5"]
    assert spec.pip_index_urls == ["https://pypi.org/simple"]
    chosen = build_job_spec(job, {"pip_index_urls": ["https://example.org/simple"]}, runtime)
    assert chosen.pip_index_urls == ["https://example.org/simple"]
    assert build_job_spec(compile_notebook(TAGGED), None, CLUSTER).pip_index_urls == []
    assert build_job_spec(compile_notebook(notebook(*nbs.XGBOOST))).pip_index_urls == []


def test_the_spec_pins_by_the_runtimes_backend_and_the_option():
    job = compile_notebook(TAGGED)
    local = build_job_spec(job, None, TORCH_DISTRIBUTED)
    assert local.requirements == [f"numpy=={NUMPY}", "PyYAML>=6"] and local.pinning.on
    cluster = build_job_spec(job, None, CLUSTER)
    assert cluster.requirements == ["numpy", "PyYAML>=6"] and not cluster.pinning.on
    assert build_job_spec(job, {"pin_packages": False}, TORCH_DISTRIBUTED).requirements == [
        "numpy",
        "PyYAML>=6",
    ]
    with pytest.raises(ConfigError, match="true or false"):
        build_job_spec(job, {"pin_packages": "yes"}, CLUSTER)


def test_the_preview_says_where_each_package_comes_from_and_when_it_is_installed():
    job = compile_notebook(TAGGED)
    lines = render(build_job_spec(job, None, CLUSTER)).summary()
    start = lines.index(
        "packages   pinning off (the default on a cluster: the image's own packages are used)"
    )
    assert lines[start + 1 : start + 3] == [
        "           numpy: imported (cell 1, line 2); installed only if `import numpy` fails "
        "(never replaces the image's)",
        "           PyYAML>=6: a %pip line (cell 1, line 1); installed if the image lacks it or has "
        "another version",
    ]
    pinned = render(build_job_spec(job, None, TORCH_DISTRIBUTED)).summary()
    assert any(
        f"numpy=={NUMPY}: imported (cell 1, line 2), pinned to the version installed here" in line
        for line in pinned
    )
    assert package_lines([], Pinning(False, "")) == ["packages   (none)"]
