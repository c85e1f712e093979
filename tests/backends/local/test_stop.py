"""Stop and delete of a local job (kale_ext/backends/local/stop.py), one at a time: real jobs,
real concurrent calls (threads, as the Jupyter server's), each bounded in time."""

from __future__ import annotations

import json
import threading
import time

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.local.joblock import acting_on
from kale_ext.backends.submit import submit
from kale_ext.errors import KaleExtError
from kale_ext.runs.rerun import rerun
from kale_ext.runs.stop import stop
from tests.backends.local.waiting import until
from tests.conftest import notebook

SLOW = notebook("import time\nfor step in range(2000):\n    print(f'step {step}', flush=True)\n"
                "    time.sleep(0.05)")  # fmt: skip
#: How long one race may take: a stop gives the supervisor 15 s, the machine is shared.
BOUND = 90


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


def running(backend, tmp_path, name: str, nb=SLOW) -> str:
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    submit(backend, path, {"name": name}, None)
    until(lambda: backend.get_job(name).status is Status.RUNNING, f"{name} to run")
    return name


def outcome(call) -> int:
    """What the REST API would answer: 200, or the error's status (a bare exception: 500)."""
    try:
        call()
        return 200
    except KaleExtError as e:
        return getattr(e, "status", None) or 500
    except Exception:  # noqa: BLE001 (what the server answers 500 for)
        return 500


def race(calls: dict, delay: float = 0.0) -> dict:
    """Run ``calls`` (name: function) on threads, each started ``delay`` s after the one before;
    what each answered."""
    answers: dict = {}
    threads = [threading.Thread(target=lambda k=k, f=f: answers.__setitem__(k, outcome(f)),
                                daemon=True) for k, f in calls.items()]  # fmt: skip
    for t in threads:
        t.start()
        time.sleep(delay)
    for t in threads:
        t.join(BOUND)
    assert not any(t.is_alive() for t in threads), f"still running after {BOUND} s: {answers}"
    return answers


ACTIONS = {
    "stop": lambda b, name: stop(b, name),
    "delete": lambda b, name: b.delete(name),
    "rerun": lambda b, name: b.delete(rerun(b, name).name),  # its new job goes at once
}


@pytest.mark.parametrize(
    ("first", "second", "delay"),
    [("stop", "delete", 0.0), ("stop", "delete", 0.03), ("delete", "stop", 0.0),
     ("delete", "stop", 0.1), ("stop", "stop", 0.0), ("delete", "delete", 0.0),
     ("stop", "rerun", 0.0), ("delete", "rerun", 0.0)],
)  # fmt: skip
def test_two_actions_on_one_job_at_once_are_each_done_whole_or_refused(
    backend, tmp_path, first, second, delay
):
    """Stop racing delete answered 500 (FileNotFoundError: the delete removed the folder under
    the stop) in 4 of 6 tries: each is now a 2xx, 404 or 409, and the job ends as one of them
    left it."""
    name = running(backend, tmp_path, "race")
    started = time.monotonic()
    answers = race({"a": lambda: ACTIONS[first](backend, name),
                    "b": lambda: ACTIONS[second](backend, name)}, delay)  # fmt: skip
    assert set(answers.values()) <= {200, 404, 409}, answers
    assert time.monotonic() - started < BOUND
    if "delete" in (first, second):
        with pytest.raises(KaleExtError) as gone:
            backend.get_job(name)
        assert gone.value.status == 404
        assert not (backend.jobs_dir / name).exists()
    else:
        info = backend.get_job(name)
        assert (info.status_text, info.reason.startswith("stopped by ")) == ("Stopped", True)


def test_a_stop_as_the_job_ends_by_itself_leaves_one_end(backend, tmp_path):
    """The supervisor's own end and a stop meet: the record says one of them, whole."""
    quick = notebook("import time\ntime.sleep(1.5)\nprint('done', flush=True)")
    for k, delay in enumerate((1.0, 1.4, 1.6)):
        name = running(backend, tmp_path, f"ends-{k}", quick)
        time.sleep(delay)
        answers = race({"stop": lambda name=name: stop(backend, name)})
        assert answers["stop"] in (200, 409), answers
        info = backend.get_job(name)
        record = json.loads((backend.jobs_dir / name / "job.json").read_text())
        assert "stop_reason" not in record
        if info.status is Status.COMPLETE:
            assert info.reason is None and info.failure is None
        else:
            assert info.status_text == "Stopped" and info.reason.startswith("stopped by ")
        backend.delete(name)


def test_an_action_waiting_on_another_past_its_bound_is_a_409_and_after_a_delete_a_404(
    backend, tmp_path
):
    name = running(backend, tmp_path, "held")
    job_dir = backend.jobs_dir / name
    with acting_on(job_dir, name):
        with pytest.raises(KaleExtError) as busy, acting_on(job_dir, name, wait=0.2):
            pass
        assert busy.value.status == 409 and "still under way" in str(busy.value)
    backend.delete(name)
    with pytest.raises(KaleExtError) as gone, acting_on(job_dir, name):
        pass
    assert gone.value.status == 404
