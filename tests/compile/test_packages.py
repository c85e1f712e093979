"""Packages: the modules a job imports, mapped to distributions by name (the version installed
here recorded, never pinned here); the standard library left out; the user's own requirements
win; each package says where it came from and how start-up decides to install it."""

from __future__ import annotations

import ast
import importlib.metadata as md

import pytest
from packaging.version import Version

from kale_ext.compile.compiler import compile_notebook
from kale_ext.compile.notebook import Cell
from kale_ext.compile.packages import (
    Import,
    Package,
    distribution_of,
    imports_of,
    requirement_name,
    requirements,
    resolve,
)
from tests.conftest import notebook

CELL = Cell(2, "code", "", ("imports",), "abc")


def installed(dist: str) -> str:
    """The version installed here, as a pin names it."""
    return Version(md.version(dist)).public


def imports(*modules: str) -> list[Import]:
    return [Import(module, CELL, line) for line, module in enumerate(modules, start=1)]


@pytest.mark.parametrize(
    "source, found",
    [
        ("import numpy", [("numpy", 1)]),
        ("import os.path, sklearn.datasets as d", [("os", 1), ("sklearn", 1)]),
        ("from torch.nn import functional", [("torch", 1)]),
        ("from . import sibling\nfrom .pkg import x", []),  # relative: the job's own files
        ("def f():\n    import yaml\n    return yaml", [("yaml", 2)]),  # anywhere in the code
    ],
)
def test_imported_modules_and_their_lines(source, found):
    assert imports_of(ast.parse(source)) == found


@pytest.mark.parametrize(
    "module, dist",
    [
        ("numpy", "numpy"),
        ("sklearn", "scikit-learn"),  # a module named unlike its distribution
        ("yaml", "PyYAML"),
        ("torch", "torch"),  # a local label (2.13.0+cpu) is not pinned: indexes lack it
    ],
)
def test_modules_map_to_installed_distributions(module, dist):
    assert distribution_of(module) == (dist, installed(dist))


def test_a_module_nothing_provides_maps_to_nothing():
    assert distribution_of("surely_not_installed_mod") is None


@pytest.mark.parametrize(
    "spec, name",
    [
        ("numpy", "numpy"),
        ("numpy>=2,<3", "numpy"),
        ("scikit-learn[all]==1.5", "scikit-learn"),
        ("torch @ https://example.org/torch.whl", "torch"),
        ("https://example.org/pkg.whl", "https://example.org/pkg.whl"),  # a URL names itself
    ],
)
def test_requirement_names(spec, name):
    assert requirement_name(spec) == name


def test_imports_become_packages_by_name_without_the_standard_library():
    diagnostics = []
    modules = imports("os", "json", "__future__", "kale_ext", "yaml", "numpy", "numpy")
    found = resolve(modules, [], diagnostics)
    assert requirements(found) == ["numpy", "PyYAML"]  # no version: none was written
    assert found == [
        Package("numpy", "import", 2, 6, "numpy", installed("numpy")),
        Package("PyYAML", "import", 2, 5, "yaml", installed("PyYAML")),
    ]
    assert [p.check for p in found] == ["import", "import"]  # installed only when missing
    assert diagnostics == []


def test_requested_packages_override_imports_by_distribution_name():
    diagnostics = []
    requested = [
        ("Scikit_Learn>=1", CELL, 3),  # the same distribution, however it is spelled
        ("https://example.org/extra.whl", None, None),
        ("extra-pkg==1.0", None, None),
    ]
    found = resolve(imports("sklearn", "numpy"), requested, diagnostics)
    assert requirements(found) == [
        "extra-pkg==1.0",
        "https://example.org/extra.whl",
        "numpy",
        "Scikit_Learn>=1",
    ]
    sources = {p.requirement: (p.source, p.cell, p.line, p.module, p.check) for p in found}
    assert sources == {
        "extra-pkg==1.0": ("option", None, None, None, "version"),
        "https://example.org/extra.whl": ("option", None, None, None, "version"),
        "numpy": ("import", 2, 2, "numpy", "import"),
        "Scikit_Learn>=1": ("pip", 2, 3, "sklearn", "version"),  # still the import it provides
    }
    assert diagnostics == []


@pytest.mark.parametrize(
    "package, check, when",
    [
        (Package("xgboost", "import", module="xgboost"), "import", "only if `import xgboost`"),
        (Package("xgboost==3.2", "pip", module="xgboost"), "version", "has another version"),
        (Package("tqdm", "pip"), "version", "if the image lacks it"),  # no import to check
        (Package("pkg @ https://x.org/p.whl", "option"), "version", "has another version"),
        (Package("numpy", "sdk"), "pip", "as the Kubeflow SDK does"),
    ],
)
def test_how_start_up_decides_each_package(package, check, when):
    assert package.check == check and when in package.when()
    assert package.to_dict()["check"] == check


def test_pinning_pins_to_the_version_here_only_what_has_no_version():
    imported = Package("numpy", "import", 0, 3, "numpy", "2.4.6")
    pinned = imported.pin_here()
    assert (pinned.requirement, pinned.pinned_here, pinned.check) == (
        "numpy==2.4.6",
        True,
        "version",
    )
    assert pinned.origin() == (
        "imported (cell 1, line 3), pinned to the version installed here (2.4.6)"
    )
    written = Package("numpy<3", "pip", 0, None, "numpy", "2.4.6")
    assert written.pin_here() == written  # the user's own version stays
    assert Package("numpy", "sdk", here="2.4.6").pin_here().requirement == "numpy"  # as listed
    assert Package("absent", "pip").pin_here().requirement == "absent"  # nothing to pin to


def test_a_requirement_named_like_an_import_stands_for_it():
    """`%pip install xgboost` where this machine's xgboost comes from xgboost-cpu: one package,
    the user's, still known as the import it provides."""
    pytest.importorskip("xgboost")
    found = resolve(imports("xgboost"), [("xgboost==3.0.2", CELL, 1)], [])
    assert [(p.requirement, p.source, p.module) for p in found] == [
        ("xgboost==3.0.2", "pip", "xgboost")
    ]


def test_an_invalid_requirement_is_an_error_naming_its_cell_and_line():
    diagnostics = []
    assert resolve([], [("numpy>>2", CELL, 4)], diagnostics) == []
    [error] = diagnostics
    assert (error.severity, error.cell, error.line, error.code) == ("error", 2, 4, "package")
    assert str(error).startswith("cell 3, line 4: invalid package `numpy>>2`")


def test_a_module_not_installed_here_is_a_warning_with_cell_and_line():
    diagnostics = []
    found = resolve(imports("numpy", "surely_not_installed_mod"), [], diagnostics)
    assert requirements(found) == ["numpy"]
    [warning] = diagnostics
    assert (warning.severity, warning.cell, warning.cell_id, warning.line, warning.code) == (
        "warning",
        2,
        "abc",
        2,
        "module-not-installed",
    )
    assert "`surely_not_installed_mod` is imported but not installed here" in warning.message


def test_a_module_of_the_jobs_own_files_needs_no_package(tmp_path, monkeypatch):
    (tmp_path / "helpers_of_this_job.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    diagnostics = []
    assert resolve(imports("helpers_of_this_job"), [], diagnostics) == []
    assert diagnostics == []


def test_modules_beside_the_notebook_are_neither_pinned_nor_missing():
    diagnostics = []
    local = frozenset({"helpers", "numpy"})  # a local file shadows even an installed name
    assert resolve(imports("helpers", "numpy"), [], diagnostics, local) == []
    assert diagnostics == []
    nb = notebook(("from helpers import make_model\nimport numpy", ["imports"]), "make_model()")
    job = compile_notebook(nb, local_modules=["helpers"])
    assert job.local_modules == ["helpers"] and job.imported_modules == ["helpers", "numpy"]
    assert [w.code for w in job.warnings] == []
    warned = compile_notebook(nb).warnings  # without the workspace: the advice a user got before
    assert [w.code for w in warned] == ["module-not-installed"]


def test_packages_merged_and_overridden_with_where_each_came_from():
    job = compile_notebook(
        notebook(
            (
                "%pip install 'scikit-learn>=1'\nimport json, numpy\nimport sklearn.datasets",
                ["imports"],
            ),
            "print(numpy, json, sklearn)",
        ),
        packages=["extra-pkg==1.0"],
    )
    assert requirements(job.packages) == ["extra-pkg==1.0", "numpy", "scikit-learn>=1"]
    assert [p.origin() for p in job.packages] == [
        "the packages option (panel, CLI, magic)",
        "imported (cell 1, line 2)",
        "a %pip line (cell 1, line 1)",
    ]
    shown = job.to_dict()
    assert shown["packages"] == ["extra-pkg==1.0", "numpy", "scikit-learn>=1"]
    assert [p["source"] for p in shown["package_sources"]] == ["option", "import", "pip"]


def test_module_not_installed_is_a_warning():
    job = compile_notebook(notebook("import surely_not_installed_mod\nprint(1)"))
    [w] = job.warnings
    assert "`surely_not_installed_mod`" in w.message and w.cell == 0 and w.line == 1
