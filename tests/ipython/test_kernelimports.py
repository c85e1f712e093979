"""The import statements that give a job the modules and imported names of a kernel."""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os.path

import pytest

from kale_ext.ipython.kernelimports import (
    HistoryImports,
    module_import,
    object_import,
    submodule_imports,
)


def test_the_statement_the_kernel_ran_is_the_one_kept():
    history = HistoryImports(
        [
            "",
            "import os.path as p\nfrom functools import reduce as fold\nif True:\n    import json",
            "def f():\n    import collections as c\n",  # inside a function: not the kernel's
            "import os.path",
            "from math import *",
            "broken(",
        ]
    )
    assert history.binding("p", os.path) == ["import os.path as p"]
    assert history.binding("fold", functools.reduce) == ["from functools import reduce as fold"]
    assert history.binding("json", json) == ["import json"]
    assert history.binding("os", os) == ["import os.path"]  # binds `os` too
    assert history.binding("c", importlib.import_module("collections")) == []
    assert history.binding("sqrt", importlib.import_module("math").sqrt) == [
        "from math import sqrt"
    ]


def test_a_name_rebound_since_its_import_is_not_that_import():
    history = HistoryImports(["from json import dumps"])
    assert history.binding("dumps", repr) == []


@pytest.mark.parametrize(
    ("name", "module", "statement"),
    [("json", "json", "import json"), ("js", "json", "import json as js"),
     ("decoder", "json.decoder", "from json import decoder"),
     ("path", os.path.__name__, f"import {os.path.__name__} as path")],  # posixpath or ntpath
)  # fmt: skip
def test_module_import(name, module, statement):
    assert module_import(name, importlib.import_module(module)) == statement


def test_object_import_by_the_objects_own_name():
    assert object_import("dumps", json.dumps) == "from json import dumps"
    assert object_import("to_json", json.dumps) == "from json import dumps as to_json"
    assert object_import("join", json.JSONEncoder.encode) is None  # a method: no module name
    assert object_import("x", 3) is None

    def local():
        pass

    assert object_import("local", local) is None


def test_submodules_the_code_reaches():
    tree = ast.parse("os.path.join('a')\nos.sep\nprint(os.path.sep)")
    assert submodule_imports("os", os, tree) == ["import os.path"]
    assert submodule_imports("o", os, tree) == []  # `o` is not the module's own name
    tree = ast.parse("json.not_a_module.thing()")
    assert submodule_imports("json", json, tree) == []
