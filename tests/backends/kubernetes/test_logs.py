"""Pod logs of a job's nodes (kale_ext/backends/kubernetes/logs.py) on the fake cluster: ranks,
tails, offsets, restarts, pending pods, and following several nodes at once."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from kale_ext.backends.base import NotFound
from kale_ext.backends.kubernetes.logs import split_lines
from tests.harness.fake_kube import FakeKube
from tests.harness.kube_fixtures import CRASH_LOOP, IMAGE_PULL


def run(function, timeout: float = 10.0):
    """Run ``function`` in a thread; fail (instead of hanging) if it does not return in time."""
    result: dict = {}

    def target():
        try:
            result["value"] = function()
        except BaseException as e:  # re-raised below, in the test's thread
            result["error"] = e

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"still running after {timeout} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def lines(iterator) -> list[tuple]:
    return [(x.node, x.rank, x.text, x.offset) for x in run(lambda: list(iterator))]


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ([b"a\nb", b"c\n"], ["a", "bc"]),
        ([b"crlf\r", b"\nnext"], ["crlf", "next"]),  # Windows line ends, the last without one
        (
            ["d\u00e9j\u00e0".encode()[:2], "d\u00e9j\u00e0".encode()[2:] + b"\n"],
            ["d\u00e9j\u00e0"],
        ),
        ([b"\xff\n"], ["\ufffd"]),  # bytes that are no UTF-8 do not stop the log
        ([b"", b"\n\n"], ["", ""]),
    ],
    ids=["split across chunks", "crlf", "a character split across chunks", "not utf-8", "empty"],
)
def test_split_lines(chunks, expected):
    assert list(split_lines(chunks)) == expected


def two_nodes(kube: FakeKube, phase: str = "Succeeded") -> None:
    """A job of 2 nodes × 2 processes whose lines carry torchrun's local-rank prefixes."""
    kube.add_trainjob("fit", num_nodes=2, procs=2)
    kube.logs[kube.add_pod("fit", 0, phase)].write("[default0]:a", "[default1]:b", "plain")
    kube.logs[kube.add_pod("fit", 1, phase)].write("[default0]:c", "[default1]:d")
    if phase == "Succeeded":  # the job complete (a followed node looks for a new pod till then)
        for log in kube.logs.values():
            log.end()
        kube.set_conditions("fit", ("Complete", "True", "AllJobsCompleted", "done"))


NODE_0 = [(0, 0, "a", 1), (0, 1, "b", 2), (0, None, "plain", 3)]
NODE_1 = [(1, 2, "c", 1), (1, 3, "d", 2)]


@dataclass
class LogCase:
    name: str
    kwargs: dict
    expected: list


LOG_CASES = [
    LogCase("all nodes, one after another, ranked", {}, NODE_0 + NODE_1),
    LogCase("one node", {"node": 1}, NODE_1),
    LogCase("tail keeps the last lines of each node", {"tail": 1}, [NODE_0[-1], NODE_1[-1]]),
    LogCase("tail 0", {"tail": 0}, []),
    LogCase("resume after offsets", {"offsets": {0: 2, 1: 2}}, [NODE_0[-1]]),
    LogCase("offsets from JSON (string keys)", {"offsets": {"0": 1}}, NODE_0[1:] + NODE_1),
    LogCase("tail after offsets", {"offsets": {0: 1}, "tail": 5}, NODE_0[1:] + NODE_1),
    LogCase("follow a finished job", {"follow": True}, None),  # same lines, any interleaving
]


@pytest.mark.parametrize("case", LOG_CASES, ids=lambda c: c.name)
def test_logs(case, backend, kube):
    two_nodes(kube)
    got = lines(backend.logs("fit", **case.kwargs))
    if case.expected is None:
        assert [g for g in got if g[0] == 0] == NODE_0 and [g for g in got if g[0] == 1] == NODE_1
    else:
        assert got == case.expected


@pytest.mark.parametrize("cut", range(6))
def test_resuming_with_offsets_loses_and_repeats_nothing(cut, backend, kube):
    two_nodes(kube, phase="Running")
    first = lines(backend.logs("fit"))[:cut]
    offsets = {node: offset for node, _, _, offset in first}  # the last offset seen per node
    kube.logs["fit-node-0-0-abcde"].write("[default0]:e")
    rest = lines(backend.logs("fit", offsets=offsets))
    assert sorted(first + rest, key=repr) == sorted([*NODE_0, (0, 0, "e", 4), *NODE_1], key=repr)


def test_the_last_line_without_a_newline_is_not_lost(backend, kube):
    kube.add_trainjob("fit")
    kube.logs[kube.add_pod("fit", 0)].write(
        "Traceback (most recent call last):", "Boom", newline=False
    )
    assert [t for _, _, t, _ in lines(backend.logs("fit"))] == [
        "Traceback (most recent call last):",
        "Boom",
    ]


def test_a_restarted_container_shows_the_previous_log(backend, kube):
    kube.add_trainjob("fit")
    log = kube.logs[kube.add_pod("fit", 0, "Running", **CRASH_LOOP)]
    log.write("[default0]:loading", "[default0]:Killed")
    log.restart()  # waiting to start again: only the previous container has a log
    assert [t for _, _, t, _ in lines(backend.logs("fit"))] == ["loading", "Killed"]
    assert kube.mocks["read_namespaced_pod_log"].call_args.kwargs["previous"] is True


def test_no_logs_of_a_pending_pod_without_follow(backend, kube):
    kube.add_trainjob("fit", num_nodes=2)
    kube.logs[kube.add_pod("fit", 0)].write("x")
    kube.add_pod("fit", 1, "Pending")
    assert lines(backend.logs("fit")) == [(0, 0, "x", 1)]  # one process per node: rank = node


def test_logs_of_a_node_that_does_not_exist(backend, kube):
    kube.add_trainjob("fit", num_nodes=2)
    with pytest.raises(NotFound, match="job fit has no node 2: its nodes are 0 to 1"):
        backend.logs("fit", node=2)
    with pytest.raises(NotFound):
        backend.logs("nope")


def finish(kube: FakeKube, job: str = "fit") -> None:
    """Every container ends, every pod succeeds, the job completes."""
    for name, log in kube.logs.items():
        log.end()
        if name.startswith(f"{job}-"):
            kube.set_pod(name, "Succeeded", {"terminated": {"exitCode": 0, "reason": "Completed"}})
    kube.set_conditions(job, ("Complete", "True", "AllJobsCompleted", "done"))


def test_follow_waits_for_a_pending_pod_then_streams(backend, kube):
    kube.add_trainjob("fit")
    pod = kube.add_pod("fit", 0, "Pending")

    def scheduled(calls):  # the third look finds the pod running
        if calls == 3:
            kube.set_pod(pod, "Running")
            kube.logs[pod].write("[default0]:started")

    kube.hooks["list_namespaced_pod"] = scheduled
    stream = backend.logs("fit", follow=True)
    assert run(lambda: next(stream)).text == "started"
    assert kube.count("list_namespaced_pod") >= 3  # it waited instead of returning nothing
    kube.logs[pod].write("[default0]:step 1")
    assert run(lambda: next(stream)).text == "step 1"  # a line written after the stream opened
    kube.logs[pod].write("[default0]:done")
    finish(kube)
    assert [x.text for x in run(lambda: list(stream))] == ["done"]


def test_follow_multiplexes_the_nodes_as_their_lines_come(backend, kube):
    two_nodes(kube, phase="Running")
    late = kube.add_pod("fit", 1, "Pending", suffix="later", created=5)  # node 1's newest pod

    def progress(calls):
        if calls == 4:
            kube.set_pod(late, "Running")
            kube.logs[late].write("[default0]:node 1 started late")
            finish(kube)

    kube.hooks["list_namespaced_pod"] = progress
    got = lines(backend.logs("fit", follow=True))
    assert [g for g in got if g[0] == 0] == NODE_0
    assert [g for g in got if g[0] == 1] == [(1, 2, "node 1 started late", 1)]


def test_follow_resumes_after_offsets(backend, kube):
    two_nodes(kube)
    got = lines(backend.logs("fit", follow=True, offsets={0: 2, 1: 1}))
    assert sorted(got, key=str) == sorted([NODE_0[2], NODE_1[1]], key=str)


def test_follow_with_tail_then_new_lines(backend, kube):
    two_nodes(kube, phase="Running")
    stream = backend.logs("fit", node=0, follow=True, tail=1)
    assert run(lambda: next(stream)).text == "plain"
    kube.logs["fit-node-0-0-abcde"].write("[default1]:new")
    line = run(lambda: next(stream))
    assert (line.rank, line.text, line.offset) == (1, "new", 4)
    finish(kube)
    assert run(lambda: list(stream)) == []


def test_follow_ends_when_the_job_fails_before_its_pod_runs(backend, kube):
    kube.add_trainjob("fit")
    kube.add_pod("fit", 0, "Pending", **IMAGE_PULL)

    def fail(calls):
        if calls == 3:
            kube.set_conditions("fit", ("Failed", "True", "DeadlineExceeded", "too slow"))
            del kube.objects[("pods", "team")]["fit-node-0-0-abcde"]

    kube.hooks["get_namespaced_custom_object"] = fail
    assert lines(backend.logs("fit", follow=True)) == []


def test_follow_reads_a_restarted_container_from_its_first_line(backend, kube):
    kube.add_trainjob("fit")
    pod = kube.add_pod("fit", 0, "Running")
    log = kube.logs[pod]
    log.write("[default0]:try 1", "[default0]:Killed")
    log.end()  # the container died; it restarts

    def restarted(calls):
        if calls == 3:
            log.restart()
            log.write("[default0]:try 2")
            log.end()
            status = kube.get("pods", pod)["status"]["containerStatuses"][0]
            status["containerID"], status["restartCount"] = "containerd://second", 1
        if calls == 5:
            finish(kube)

    kube.hooks["list_namespaced_pod"] = restarted
    assert lines(backend.logs("fit", follow=True)) == [
        (0, 0, "try 1", 1),
        (0, 0, "Killed", 2),
        (0, 0, "try 2", 1),
    ]


@pytest.mark.parametrize("node_0", ["Running", "Succeeded"])
def test_follow_goes_on_to_the_pods_a_jobset_restart_makes(backend, kube, node_0):
    """A JobSet restart deletes every node's pod and makes new ones (other names, other uids):
    each followed node goes on to its new pod, the one whose pod failed (and made the restart)
    and one whose pod had succeeded too; they once stopped at their done pod, and `run
    --follow` showed one node's second attempt only."""
    kube.add_trainjob("fit", num_nodes=2)
    first = [kube.add_pod("fit", k, "Running") for k in (0, 1)]
    for k, pod in enumerate(first):
        kube.get("pods", pod)["metadata"]["uid"] = f"uid-{k}-first"
        kube.logs[pod].write(f"[default0]:node {k} attempt 0")
    done = {first[1]: "Failed", **({first[0]: node_0} if node_0 != "Running" else {})}
    for pod, phase in done.items():
        kube.logs[pod].end()
        code = 1 if phase == "Failed" else 0
        kube.set_pod(pod, phase, {"terminated": {"exitCode": code, "reason": phase}})

    def restart(calls):  # JobSet's restart, once the follower has read every first pod's log
        # to its end and read each done pod as done; looked at as the follower polls for pods
        caught_up = {a[0] for m, a, kw in kube.calls
                     if m == "read_namespaced_pod_log" and not kw["follow"]}  # fmt: skip
        if not caught_up >= set(done) or kube.get("pods", first[1]) is None:
            return
        if not all(any(s.delivered(kube.logs[p]) for s in kube.streams) for p in first):
            return
        for k, pod in enumerate(first):
            kube.logs.pop(pod).end()
            del kube.objects[("pods", "team")][pod]
            again = kube.add_pod("fit", k, "Running", suffix="fghij", created=5)
            kube.get("pods", again)["metadata"]["uid"] = f"uid-{k}-again"
            kube.logs[again].write(f"[default0]:node {k} attempt 1")

    kube.hooks["list_namespaced_pod"] = restart
    stream = backend.logs("fit", follow=True)
    got = run(lambda: [next(stream) for _ in range(4)])  # both nodes' first and second attempts
    finish(kube)
    got += run(lambda: list(stream))  # the job ends: so does the follow, with no line again
    for k in (0, 1):
        said = [x.text for x in got if x.node == k]
        assert said == [f"node {k} attempt 0", f"node {k} attempt 1"], got


def test_closing_a_followed_log_closes_its_streams(backend, kube):
    two_nodes(kube, phase="Running")
    stream = backend.logs("fit", follow=True)
    got = run(lambda: [next(stream) for _ in NODE_0 + NODE_1])  # both streams open, then quiet
    assert len(got) == 5
    stream.close()  # the reader goes away, e.g. a browser tab closed
    assert len(kube.streams) == 2 and all(s.closed for s in kube.streams)


MPIRUN = ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "train.py"]


def mpi_job(kube: FakeKube, phase: str = "Running") -> None:
    """A 3-node MPI job as the Trainer's MPI plugin lays it out (runLauncherAsNode): the
    launcher (mpirun: every rank's output) and the `node` job's 2 pods (sshd)."""
    kube.add_trainjob("fit", num_nodes=3)
    kube.get("trainjobs", "fit")["spec"]["trainer"] = {"numNodes": 3, "command": MPIRUN}
    kube.logs[kube.add_pod("fit", 0, phase, step="launcher")].write("rank 0 loss 0.5")
    kube.logs[kube.add_pod("fit", 0, phase)].write("Server listening on 0.0.0.0 port 2222.")
    kube.logs[kube.add_pod("fit", 1, phase)].write("sshd of the second worker")


def test_an_mpi_jobs_node_0_is_its_launcher_and_node_k_its_worker_k_minus_1(backend, kube):
    """As the Kubeflow SDK counts them (utils.get_trainjob_node_step): the launcher's log, where
    mpirun brings every rank's output, is node 0's; the workers follow."""
    mpi_job(kube)
    assert [t for _, _, t, _ in lines(backend.logs("fit", node=0))] == ["rank 0 loss 0.5"]
    assert [(n, r, t) for n, r, t, _ in lines(backend.logs("fit"))] == [
        (0, None, "rank 0 loss 0.5"),  # no rank: every rank's lines are in the launcher's log
        (1, None, "Server listening on 0.0.0.0 port 2222."),  # a worker's log is its sshd's
        (2, None, "sshd of the second worker"),
    ]
    with pytest.raises(NotFound, match="its nodes are 0 to 2"):
        backend.logs("fit", node=3)


def test_an_mpi_jobs_nodes_are_its_pods_when_they_outnumber_num_nodes(backend, kube):
    """numNodes 1 on a runLauncherAsNode runtime: the Trainer makes the launcher and one `node`
    pod (max(numNodes - 1, 1)); both are the job's nodes, in its logs as in its status."""
    kube.add_trainjob("one")
    kube.get("trainjobs", "one")["spec"]["trainer"] = {"numNodes": 1, "command": MPIRUN}
    with pytest.raises(NotFound, match="its nodes are 0 to 0"):
        backend.logs("one", node=1)  # no pods yet: numNodes says
    kube.logs[kube.add_pod("one", 0, step="launcher")].write("rank 0")
    kube.logs[kube.add_pod("one", 0)].write("sshd")
    assert [(n, t) for n, _, t, _ in lines(backend.logs("one"))] == [(0, "rank 0"), (1, "sshd")]
    assert [n.index for n in backend.get_job("one").nodes] == [0, 1]


def test_following_an_mpi_job_streams_its_launcher(backend, kube):
    mpi_job(kube)
    stream = backend.logs("fit", node=0, follow=True)
    assert run(lambda: next(stream)).text == "rank 0 loss 0.5"
    kube.logs["fit-launcher-0-0-abcde"].write("rank 0 loss 0.25")
    assert run(lambda: next(stream)).text == "rank 0 loss 0.25"
    finish(kube)
    assert run(lambda: list(stream)) == []
