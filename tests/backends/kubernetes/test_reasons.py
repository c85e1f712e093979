"""Cluster reasons in plain words and the failure summary on Kubernetes, against recorded
objects: pods, events, TrainJobs and container logs in the form the API server returns them
(tests/backends/kubernetes/recorded/*.json), served by the fake cluster.

Covers kale_ext/backends/kubernetes/reasons.py, failures.py and diagnose.py through get_job
(which reads events and the failing pod's last lines) and list_jobs (which does not)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from kale_ext.backends.base import Event, Status
from kale_ext.backends.kubernetes.reasons import kueue_wait
from tests.harness.fake_kube import FakeKube

RECORDED = Path(__file__).parent / "recorded"
PULL = (
    'failed to pull and unpack image "ghcr.io/acme/train:v9": failed to resolve reference '
    '"ghcr.io/acme/train:v9": ghcr.io/acme/train:v9: not found'
)


def load(kube: FakeKube, case: str) -> None:
    data = json.loads((RECORDED / f"{case}.json").read_text())
    kube.put("trainjobs", data["trainjob"])
    for pod in data["pods"]:
        kube.add_pod_object(pod, data.get("logs", {}).get(pod["metadata"]["name"], ""))
    for event in data["events"]:
        kube.put("events", event)


@dataclass
class Case:
    name: str
    status: Status
    reason: str  # get_job's reason starts with it
    listed: str | None = None  # list_jobs' (no events read), when it says less
    failure: dict | None = None  # fields of the failure summary


CASES = [
    Case(
        "image-pull-backoff",
        Status.QUEUED,
        f"node 0: cannot pull image ghcr.io/acme/train:v9 (ImagePullBackOff): {PULL}",
        'node 0: cannot pull image ghcr.io/acme/train:v9 (ImagePullBackOff): Back-off pulling image "ghcr.io/acme/train:v9"',
    ),
    Case(
        "err-image-pull",
        Status.QUEUED,
        "node 0: cannot pull image registry.corp/ml/train:1 (ErrImagePull): failed to pull and unpack "
        'image "registry.corp/ml/train:1": failed to resolve reference "registry.corp/ml/train:1": '
        "pull access denied, repository does not exist or may require authorization: server "
        "message: insufficient_scope: authorization failed",
    ),
    Case(
        "unschedulable",
        Status.QUEUED,
        "node 1: no node has room: not enough nvidia.com/gpu (Unschedulable: 0/3 nodes are "
        "available: 1 node(s) had untolerated taint",
    ),
    Case(
        "create-container-config-error",
        Status.QUEUED,
        'node 0: cannot start its container (CreateContainerConfigError): secret "hf-token" not '
        "found; a Secret or ConfigMap the job's env or env_from names is missing",
    ),
    Case(
        "kueue-waiting",
        Status.QUEUED,
        "waiting for Kueue queue team-a to admit it: couldn't assign flavors to pod set node: "
        "insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed",
        "waiting for Kueue queue team-a to admit it",
    ),
    Case(
        "oom-killed",
        Status.FAILED,
        "node 1: killed: out of memory (OOMKilled; memory limit 2Gi)",
        failure={
            "node": 1,
            "rank": None,
            "exit_code": 137,
            "signal": "killed: out of memory",
            "log_tail": ["[rank 1] epoch 1", "[rank 1] loading the full dataset into memory"],
        },
    ),
    Case(
        "evicted",
        Status.FAILED,
        "node 0: evicted from its node (Evicted): The node was low on resource: ephemeral-storage.",
        failure={"node": 0, "rank": None, "exit_code": None},
    ),
    Case(
        "deadline-exceeded",
        Status.FAILED,
        "ran longer than its active_deadline_seconds (3600 s) and was stopped (DeadlineExceeded: "
        "TrainJob exceeded its activeDeadlineSeconds)",
        failure={"node": None, "reason": "ran longer than its active_deadline_seconds (3600 s) "
                 "and was stopped (DeadlineExceeded: TrainJob exceeded its activeDeadlineSeconds)"},
    ),
    Case(
        "jobset-failed-jobs",
        Status.FAILED,
        "a node failed, so the job did (FailedJobs: jobset failed due to one or more job failures "
        "(first failed job: fit-node-0))",
    ),
    Case(
        "jobset-max-restarts",
        Status.FAILED,
        "failed again after the restarts its runtime allows (ReachedMaxRestarts: jobset failed "
        "due to reaching max number of restarts)",
    ),
    Case(
        "jobset-failure-policy",
        Status.FAILED,
        "its runtime's failure policy ended it (FailJobSetFailurePolicyAction: applying "
        "FailJobSet failure policy action)",
    ),
    Case(
        "exception-in-a-cell",
        Status.FAILED,
        """node 1, rank 1: cell 4 ("training"), line 3: KeyError: 'label'""",
        failure={
            "node": 1,
            "rank": 1,
            "exception": "KeyError: 'label'",
            "cell_index": 3,
            "cell_id": "9f1e2d3c",
            "cell_label": "training",
            "line": 3,
            "exit_code": 1,
        },
    ),
    Case(
        "a-rank-killed-by-a-signal",
        Status.FAILED,
        "node 0, rank 0: killed by signal 9 (SIGKILL)",
        "node 0: exited with code 1",  # torchrun's own exit: its report is in the log
        failure={"node": 0, "rank": 0, "exit_code": -9, "signal": "signal 9 (SIGKILL)"},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_recorded_cluster_state_in_plain_words(case, backend, kube):
    load(kube, case.name)
    info = backend.get_job("fit")
    assert info.status is case.status
    assert info.reason.startswith(case.reason), info.reason
    listed = backend.list_jobs()[0]
    assert listed.status is case.status
    assert listed.reason.startswith(case.listed or case.reason), listed.reason
    if case.status is not Status.FAILED:
        assert info.failure is None and listed.failure is None
        return
    assert info.reason.startswith(info.failure.summary)
    for field, value in (case.failure or {}).items():
        assert getattr(info.failure, field) == value, field
    assert listed.failure.log_tail == []  # a listing reads no logs: two calls, however many jobs


def test_the_failing_ranks_last_lines_come_with_the_summary(backend, kube):
    load(kube, "exception-in-a-cell")
    tail = backend.get_job("fit").failure.log_tail
    assert tail[0] == "[rank 1] epoch 1"
    assert """[rank 1] cell 4 ("training"), line 3: KeyError: 'label'""" in tail
    assert "[rank 1] KeyError: 'label'" in tail  # torch's own "[rank1]: " prefix is gone
    assert tail[-1].startswith("[rank 1] E0101 ") and "failed (exitcode: 1)" in tail[-1]


def test_a_signal_reported_by_torchrun_is_read_from_the_log(backend, kube):
    load(kube, "a-rank-killed-by-a-signal")
    failure = backend.get_job("fit").failure
    assert failure.log_tail[-1] == (
        "[node 0] torchrun: rank 0 failed first on node 0 (killed by signal 9 (SIGKILL)): "
        "Signal 9 (SIGKILL) received by PID 18084"
    )
    assert not any("Root Cause" in line for line in failure.log_tail)


def test_a_quiet_running_job_shows_as_stalled(backend, kube):
    kube.add_trainjob("fit", num_nodes=2)
    for index in (0, 1):
        name = kube.add_pod("fit", index, "Running")
        kube.logs[name].write("epoch 1", at="2026-01-01T00:01:00.000000Z")
    backend.stall_seconds = 600
    quiet = backend.get_job("fit")
    assert quiet.status is Status.RUNNING and quiet.status_text == "Stalled (no output for 10 min)"
    assert quiet.last_output == "2026-01-01T00:01:00Z"
    kube.logs[name].write("epoch 2")  # now: node 1 speaks again
    busy = backend.get_job("fit")
    assert busy.status_text == "Running" and busy.stalled_after is None
    backend.stall_seconds = None
    assert backend.get_job("fit").last_output is None  # never: not even asked


def test_the_logs_show_torchruns_report_as_one_line(backend, kube):
    load(kube, "a-rank-killed-by-a-signal")
    lines = [line.shown for line in backend.logs("fit")]
    assert lines[-1].startswith("[node 0] torchrun: rank 0 failed first on node 0 (killed by")
    assert not any("ChildFailedError" in line or "Root Cause" in line for line in lines)
    assert len(lines) == 2  # torchrun's own error line, then its report


WORKLOAD = "Workload/trainjob-fit-0a1b2"
PENDING = Event("2026-01-01T00:00:01Z", "Normal", "Pending", "couldn't assign flavors", WORKLOAD)
DEACTIVATED = Event(
    "2026-01-01T00:00:02Z",
    "Normal",
    "EvictedDueToDeactivated",
    "The workload is deactivated",
    WORKLOAD,
)
ADMITTED = Event(
    "2026-01-01T00:00:03Z", "Normal", "Admitted", "Admitted by ClusterQueue cq", WORKLOAD
)


@pytest.mark.parametrize("events, says", [
    ((), "waiting for Kueue queue team-a to admit it"),
    ((PENDING,), "waiting for Kueue queue team-a to admit it: couldn't assign flavors"),
    ((PENDING, DEACTIVATED), "its Kueue Workload is deactivated (The workload is deactivated): Kueue does not "
                             "run it until its spec.active is true again (queue team-a)"),
    ((DEACTIVATED, ADMITTED), "waiting for Kueue queue team-a to admit it: Admitted by ClusterQueue cq"),
], ids=["no event", "pending", "deactivated", "active again"])  # fmt: skip
def test_a_job_waiting_for_kueue_says_what_its_workload_last_said(events, says):
    assert kueue_wait("team-a", events) == says
