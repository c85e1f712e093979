"""Job status and its reasons from the TrainJob and its pods
(kale_ext/backends/kubernetes/status.py), seen through get_job and list_jobs on the fake cluster."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kale_ext.backends.base import Status
from tests.harness.fake_kube import FakeKube
from tests.harness.kube_fixtures import CRASH_LOOP, IMAGE_PULL

UNSCHEDULABLE = {
    "containers": False,
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}],
}  # fmt: skip
OOM = {"state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
EXIT_3 = {"state": {"terminated": {"exitCode": 3, "reason": "Error"}}}
SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")
KUEUE = {"kueue.x-k8s.io/queue-name": "team-a"}


@dataclass
class StatusCase:
    name: str
    status: Status
    reason: str | None = None  # expected within the reason; None: no reason at all
    conditions: tuple = ()
    pods: tuple = ()  # (index, phase, extra)
    labels: dict = field(default_factory=dict)
    suspend: bool = False


STATUS_CASES = [
    StatusCase("no status and no pods yet", Status.CREATED),
    StatusCase("unschedulable", Status.QUEUED, "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
               pods=((0, "Pending", UNSCHEDULABLE),)),
    StatusCase("image pull back-off", Status.QUEUED, 'cannot pull image repo/img:bad (ImagePullBackOff): Back-off pulling image "repo/img:bad"',
               pods=((0, "Pending", IMAGE_PULL),)),
    StatusCase("containers being created", Status.QUEUED, "ContainerCreating", pods=((0, "Pending", {}),)),
    StatusCase("all nodes running", Status.RUNNING, pods=((0, "Running", {}), (1, "Running", {}))),
    StatusCase("one node still unscheduled", Status.QUEUED, "Unschedulable",
               pods=((0, "Running", {}), (1, "Pending", UNSCHEDULABLE))),
    StatusCase("suspended", Status.QUEUED, "suspended", conditions=(SUSPENDED,)),
    StatusCase("suspended in the spec, before the condition", Status.QUEUED, "suspended", suspend=True),
    StatusCase("waiting in a Kueue queue", Status.QUEUED, "waiting for Kueue queue team-a",
               conditions=(SUSPENDED,), labels=KUEUE, suspend=True),
    StatusCase("resumed by Kueue and running (the SDK says Created)", Status.RUNNING,
               conditions=(RESUMED,), labels=KUEUE, pods=((0, "Running", {}),)),
    StatusCase("resumed by Kueue, pods unscheduled", Status.QUEUED, "Unschedulable",
               conditions=(RESUMED,), labels=KUEUE, pods=((0, "Pending", UNSCHEDULABLE),)),
    StatusCase("a node crash-looping", Status.RUNNING, "node 1: restarting (CrashLoopBackOff) after it exited with code 1",
               pods=((0, "Running", {}), (1, "Running", CRASH_LOOP))),
    StatusCase("pods done, condition not yet written", Status.RUNNING, pods=((0, "Succeeded", {}),)),
    StatusCase("complete", Status.COMPLETE, conditions=(
        ("Complete", "True", "AllJobsCompleted", "jobset completed successfully"),), pods=((0, "Succeeded", {}),)),
    StatusCase("a false Complete condition is not completion", Status.RUNNING, conditions=(
        ("Complete", "False", "JobsRunning", ""),), pods=((0, "Running", {}),)),
    StatusCase("out of memory", Status.FAILED, "node 0: killed: out of memory (OOMKilled); a node failed, so the job did (FailedJobs: jobset failed)", conditions=(
        ("Failed", "True", "FailedJobs", "jobset failed"),), pods=((0, "Failed", OOM), (1, "Succeeded", {}))),
    StatusCase("the container's exit code", Status.FAILED, "node 0: exited with code 3", conditions=(
        ("Failed", "True", "FailedJobs", "jobset failed"),), pods=((0, "Failed", EXIT_3),)),
    StatusCase("deadline exceeded", Status.FAILED, "ran longer than its active_deadline_seconds and was stopped (DeadlineExceeded: TrainJob exceeded its activeDeadlineSeconds)",
               conditions=(("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its activeDeadlineSeconds"),)),
    StatusCase("backoff limit", Status.FAILED, "BackoffLimitExceeded: Job has reached the specified backoff limit",
               conditions=(("Failed", "True", "FailedJobs",
                            'job "fit-node-0" failed: BackoffLimitExceeded: Job has reached the specified backoff limit'),)),
]  # fmt: skip


def add_status_case(kube: FakeKube, case: StatusCase) -> None:
    kube.add_trainjob("fit", num_nodes=2, labels=case.labels)
    if case.suspend:
        kube.get("trainjobs", "fit")["spec"]["suspend"] = True
    if case.conditions:
        kube.set_conditions("fit", *case.conditions)
    for index, phase, extra in case.pods:
        kube.add_pod("fit", index, phase, **extra)


@pytest.mark.parametrize("case", STATUS_CASES, ids=lambda c: c.name)
def test_status_from_conditions_and_pods(case, backend, kube):
    add_status_case(kube, case)
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.status is case.status
        if case.reason is None:
            assert info.reason is None
        else:
            assert case.reason in info.reason


@pytest.mark.parametrize(
    "trainer, notes, procs, why",
    [({"numProcPerNode": 2, "resourcesPerNode": {"requests": {"cpu": "8"}}}, {}, 2, "asked"),
     ({"resourcesPerNode": {"requests": {"cpu": "2.5"}}}, {}, 3, "the runtime's choice: 3 CPUs"),
     ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "4", "cpu": "16"}}}, {}, 4, "4 GPUs"),
     ({}, {"kale-ext.io/version": "1", "kale-ext.io/runtime-resources":
           '{"limits": {"nvidia.com/gpu": "2"}, "requests": {}}'}, 2, "from the runtime's"),
     ({}, {}, 1, "not known here")],
)  # fmt: skip
def test_processes_per_node_as_the_trainer_chose(backend, kube, trainer, notes, procs, why):
    """numProcPerNode unset: the count the runtime chose, and where it came from."""
    kube.add_trainjob("fit", num_nodes=2, annotations=notes)
    kube.get("trainjobs", "fit")["spec"]["trainer"] = {"numNodes": 2, **trainer}
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert info.procs_per_node == procs and why in info.procs_why


def test_job_info_fields(backend, kube):
    kube.add_trainjob(
        "fit",
        num_nodes=2,
        procs=4,
        annotations={"kale-ext.io/notebook": "nb.ipynb", "kale-ext.io/source-sha256": "abc"},
    )
    kube.set_conditions(
        "fit", ("Failed", "True", "FailedJobs", "jobset failed", "2026-01-01T00:05:00Z")
    )
    kube.add_pod("fit", 0, "Failed", **OOM)
    kube.add_pod("fit", 1, "Running", suffix="old", created=1)
    kube.add_pod("fit", 1, "Succeeded", suffix="new", created=9)  # the newest pod of a node counts
    kube.add_pod("fit", 0, "Running", step="dataset-initializer")  # not a training node
    info = backend.get_job("fit")
    assert (info.name, info.backend, info.runtime) == ("fit", "kubernetes", "torch-distributed")
    assert (info.num_nodes, info.procs_per_node) == (2, 4)
    assert (info.created, info.finished) == ("2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z")
    assert info.provenance == {
        "kale-ext.io/notebook": "nb.ipynb",
        "kale-ext.io/source-sha256": "abc",
    }
    assert [(n.index, n.state, n.reason, n.exit_code) for n in info.nodes] == [
        (0, "Failed", "killed: out of memory (OOMKilled)", 137),
        (1, "Succeeded", None, 0),
    ]


def test_a_job_that_never_starts_says_why_from_its_events(backend, kube):
    kube.add_trainjob("fit")
    kube.add_event("TrainJob", "fit", "TrainJobResourcesCreationFailed",
                   'JobSet.jobset.x-k8s.io "fit" is invalid: pod name too long', 5, "Warning")  # fmt: skip
    info = backend.get_job("fit")
    assert info.status is Status.CREATED
    assert info.reason == (
        'TrainJobResourcesCreationFailed: JobSet.jobset.x-k8s.io "fit" is invalid: pod name too long'
    )


def test_list_jobs_takes_two_calls_however_many_jobs(backend, kube):
    for i in range(5):
        kube.add_trainjob(f"job-{i}", num_nodes=2, creationTimestamp=f"2026-01-01T00:0{i}:00Z")
        kube.add_pod(f"job-{i}", 0, "Running")
        kube.add_pod(f"job-{i}", 1, "Pending", **IMAGE_PULL)
    kube.calls.clear()
    jobs = backend.list_jobs()
    assert [j.name for j in jobs] == [f"job-{i}" for i in reversed(range(5))]  # newest first
    assert all(j.status is Status.QUEUED and "ImagePullBackOff" in j.reason for j in jobs)
    assert sorted(c[0] for c in kube.calls) == [
        "list_namespaced_custom_object",
        "list_namespaced_pod",
    ]


def test_an_mpi_jobs_nodes_are_its_launcher_then_its_workers(backend, kube):
    """An MPI job (mpirun starts it): node 0 is the launcher pod, node k the `node` job's pod
    k - 1 (job/mpi.py: node_of); a launcher that failed is the failing node 0, and the processes
    per node are the MPI runtime's slots recorded at submit."""
    notes = {"kale-ext.io/version": "1", "kale-ext.io/runtime-mpi-procs": "2"}
    kube.add_trainjob("fit", num_nodes=2, annotations=notes)
    mpirun = ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "train.py"]
    kube.get("trainjobs", "fit")["spec"]["trainer"] = {"numNodes": 2, "command": mpirun}
    kube.add_pod("fit", 0, "Running")  # the node job's only pod: node 1
    assert [(n.index, n.state) for n in backend.get_job("fit").nodes] == [(1, "Running")]
    kube.add_pod("fit", 0, "Failed", step="launcher")
    kube.set_conditions("fit", ("Failed", "True", "FailedJobs", "jobset failed"))
    for info in (backend.get_job("fit"), backend.list_jobs()[0]):
        assert [(n.index, n.state) for n in info.nodes] == [(0, "Failed"), (1, "Running")]
        assert info.failure.node == 0 and info.status is Status.FAILED
        assert (info.procs_per_node, info.num_nodes) == (2, 2)
        assert "its MPI numProcPerNode, 2" in info.procs_why
