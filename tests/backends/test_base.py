"""The one job interface: what `Backend.logs` checks before a backend reads a line."""

from __future__ import annotations

import pytest

from kale_ext.backends.base import Backend, BackendError, LogLine, LogQuery
from kale_ext.backends.local.backend import LocalBackend


class Recording(Backend):
    """A backend whose log is the query it was handed."""

    name = "recording"

    def read_logs(self, name, query):
        yield LogLine(node=0, text=repr((name, query)))

    def list_runtimes(self):
        return []

    def submit(self, spec, notebook_path=None):
        raise AssertionError("not submitted here")

    def list_jobs(self):
        return []

    def get_job(self, name):
        raise AssertionError("not asked here")

    def events(self, name):
        return []

    def delete(self, name, outputs=False):
        return None


@pytest.mark.parametrize(
    "kwargs, query",
    [
        ({}, LogQuery()),
        ({"node": 1, "follow": True, "tail": 0}, LogQuery(1, True, 0, {})),
        (
            {"offsets": {"0": "7", 1: 3}},
            LogQuery(offsets={0: 7, 1: 3}),
        ),  # as a query string has them
    ],
)
def test_logs_hands_the_backend_one_checked_query(kwargs, query):
    (line,) = Recording().logs("job-1", **kwargs)
    assert line.text == repr(("job-1", query))


@pytest.mark.parametrize("make", [lambda tmp: Recording(), lambda tmp: LocalBackend(tmp / "jobs")])
def test_a_negative_tail_is_refused_before_any_log_is_read(make, tmp_path):
    with pytest.raises(BackendError) as caught:
        make(tmp_path).logs("no-such-job", tail=-1)
    assert caught.value.status == 400
    assert "tail must be 0 or more, not -1" in str(caught.value)
