"""Which tests start first: the longest modules (tests/seconds.json), each module's tests
together and in their order; and scripts/module_seconds.py, which measures them."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT
from tests.order import TESTS, UNMEASURED_SLOW, longest_first, measured, module_of

spec = importlib.util.spec_from_file_location("module_seconds", ROOT / "scripts/module_seconds.py")
module_seconds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module_seconds)


class Item(SimpleNamespace):
    def get_closest_marker(self, name):
        return name if name in self.marks else None


def item(where: str, *marks: str) -> Item:
    module, _, name = where.partition("::")
    return Item(path=TESTS / module, name=name, marks=marks)


@pytest.mark.parametrize(
    "seconds, collected, started",
    [
        (  # the longest module first; each module's tests together, in their order
            {"a/test_a.py": 5, "b/test_b.py": 50, "test_c.py": 1},
            ["a/test_a.py::1", "b/test_b.py::1", "a/test_a.py::2", "b/test_b.py::2",
             "test_c.py::1"],
            ["b/test_b.py::1", "b/test_b.py::2", "a/test_a.py::1", "a/test_a.py::2",
             "test_c.py::1"],
        ),
        (  # not measured: a module with a slow test counts as slow, the others as units
            {"a/test_a.py": UNMEASURED_SLOW - 1},
            ["test_unit.py::1", "a/test_a.py::1", "test_new.py::1 slow", "test_new.py::2"],
            ["test_new.py::1", "test_new.py::2", "a/test_a.py::1", "test_unit.py::1"],
        ),
        (  # equal seconds: the order of collection
            {},
            ["test_z.py::1", "test_a.py::1", "test_z.py::2"],
            ["test_z.py::1", "test_z.py::2", "test_a.py::1"],
        ),
    ],
)  # fmt: skip
def test_the_longest_modules_start_first(seconds, collected, started):
    items = [item(c.split()[0], *c.split()[1:]) for c in collected]
    longest_first(items, seconds)
    assert [f"{module_of(i)}::{i.name}" for i in items] == started


def test_this_session_started_the_longest_modules_first(request):
    seconds = measured()
    modules = list(dict.fromkeys(module_of(i) for i in request.session.items))
    weights = [seconds[m] for m in modules if m in seconds]
    assert weights == sorted(weights, reverse=True)
    order = [module_of(i) for i in request.session.items]
    changes = sum(1 for before, now in zip(order, order[1:], strict=False) if before != now)
    assert changes == len(modules) - 1  # each module's tests one after the other


def test_the_seconds_on_file_are_of_modules_that_exist():
    seconds = measured()
    assert len(seconds) > 50, "tests/seconds.json: measure it with scripts/module_seconds.py"
    assert [m for m in seconds if not (TESTS / m).is_file()] == []


REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.backends.local.test_queue" name="test_a" time="12.5"/>
<testcase classname="tests.backends.local.test_queue" name="test_b[x]" time="2.25"/>
<testcase classname="tests.server.test_api.TestCompile" name="test_c" time="1.0"/>
<testcase classname="tests.test_sdk" name="test_d" time="0.4"><skipped/></testcase>
<testcase classname="elsewhere.test_e" name="test_e" time="9"/>
</testsuite></testsuites>
"""


def test_a_report_gives_each_modules_seconds(tmp_path, monkeypatch, capsys):
    report = tmp_path / "report.xml"
    report.write_text(REPORT)
    monkeypatch.setattr(module_seconds, "OUT", tmp_path / "seconds.json")
    assert module_seconds.main([str(report)]) == 0
    assert (tmp_path / "seconds.json").read_text() == (
        '{\n "backends/local/test_queue.py": 14.8,\n "server/test_api.py": 1.0,\n'
        ' "test_sdk.py": 0.4\n}\n'
    )
    assert "3 modules, 16 s" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, content, code, said",
    [
        ([], None, 2, "Write tests/seconds.json"),
        (["report.xml"], "<testsuites/>", 1, "no test of tests/ in this report"),
    ],
)
def test_a_wrong_call_or_report_says_so(tmp_path, monkeypatch, capsys, args, content, code, said):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module_seconds, "OUT", tmp_path / "seconds.json")
    if content:
        (tmp_path / "report.xml").write_text(content)
    assert module_seconds.main(args) == code
    assert said in capsys.readouterr().err and not (tmp_path / "seconds.json").exists()
