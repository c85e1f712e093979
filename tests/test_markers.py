"""Which tests `make check` leaves out: those starting real jobs, servers, kernels or clusters."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.markers import SLOW_PLACES, SLOW_TESTS, TESTS, is_slow, skip_collecting


@pytest.mark.parametrize(
    "path, fixtures, slow",
    [
        ("job/test_options.py", ["tmp_path"], False),  # a unit test
        ("server/test_api.py", ["jp_fetch", "jp_serverapp"], True),  # a Jupyter server
        ("job/test_defaults.py", ["jp_serverapp"], True),  # wherever it is
        ("robustness/test_misuse.py", ["server"], True),  # `jupyter server` in a process
        ("cli/test_jobs.py", ["emulated_cluster"], True),
        ("backends/local/test_queue.py", [], True),  # real local jobs, by folder
        ("backends/local_ish/test_x.py", [], False),  # a folder's name, not a prefix of it
        ("e2e/test_cli.py", [], True),
        ("runs/test_sweep.py", [], True),
        ("test_sdk.py", [], True),  # a module
        ("server/test_jobs.py::test_a_restarted_server_still_has_the_job", [], True),  # one test
        ("server/test_jobs.py::test_another", [], False),
    ],
)
def test_a_test_is_slow_by_its_fixtures_or_its_place(path, fixtures, slow):
    module, _, name = path.partition("::")
    item = SimpleNamespace(path=TESTS / module, fixturenames=fixtures, originalname=name)
    assert is_slow(item) is slow


def test_every_slow_place_and_test_exists():
    for place in SLOW_PLACES:
        assert (TESTS / place).exists(), place
    for test in SLOW_TESTS:
        module, name = test.split("::")
        assert f"def {name}(" in (TESTS / module).read_text(), test


def test_this_session_marks_what_it_collected(request):
    wrong = [i.nodeid for i in request.session.items if ("slow" in i.keywords) is not is_slow(i)]
    assert wrong == [], "marked slow by hand, not by tests/markers.py (or the reverse)"


class Options(SimpleNamespace):
    def getoption(self, name, default=None):
        return getattr(self, name, default)


@pytest.mark.parametrize(
    "markexpr, path, skipped",
    [
        ("not slow", "e2e", True),  # a slow folder is not even imported
        ("not slow", "e2e/test_cli.py", True),
        ("not slow", "test_sdk.py", True),
        ("not slow", "job/test_options.py", False),
        ("not slow", "server/test_jobs.py", False),  # some of its tests are slow, not all
        ("", "e2e/test_cli.py", False),  # make test collects everything
        ("slow", "e2e/test_cli.py", False),
    ],
)
def test_make_check_does_not_collect_the_slow_places(markexpr, path, skipped):
    assert skip_collecting(TESTS / path, Options(markexpr=markexpr)) is skipped
