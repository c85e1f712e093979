"""Where the emulated scheduler places a pod, and how it says why it cannot."""

import pytest

from tests.harness.cluster.faults import Faults
from tests.harness.cluster.scheduler import place


class Api:
    def __init__(self, nodes, claims=()):
        self.nodes, self.claims = nodes, set(claims)

    def items(self, resource):
        return self.nodes

    def get(self, resource, namespace, name):
        return {} if name in self.claims else None


def node(name="n0", cpu="4", labels=None, cordoned=False):
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi"}}}  # fmt: skip


def pod(cpu="1", selector=None, claim=None, on=None, phase=None):
    spec = {"containers": [{"name": "node", "resources": {"requests": {"cpu": cpu}}}]}
    if selector:
        spec["nodeSelector"] = selector
    if claim:
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    if on:
        spec["nodeName"] = on
    labels = {
        "jobset.sigs.k8s.io/jobset-name": "fit",
        "batch.kubernetes.io/job-completion-index": "0",
    }
    return {"metadata": {"namespace": "team", "labels": labels}, "spec": spec,
            "status": {"phase": phase} if phase else {}}  # fmt: skip


@pytest.mark.parametrize(
    "nodes, wanted, placed, expected",
    [
        ([node()], pod(), [], ("n0", "")),
        ([node(cpu="2")], pod(cpu="1500m"), [pod(on="n0")], (None, "0/1 nodes are available: 1 Insufficient cpu.")),
        ([node(cpu="2")], pod(cpu="1500m"), [pod(on="n0", phase="Succeeded")], ("n0", "")),
        ([node(cordoned=True), node("n1", labels={"pool": "gpu"})], pod(selector={"pool": "cpu"}), [],
         (None, "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                "1 node(s) were unschedulable.")),
        ([node(), node("n1", labels={"pool": "gpu"})], pod(selector={"pool": "gpu"}), [], ("n1", "")),
        ([node()], pod(claim="data"), [], (None, '0/1 nodes are available: persistentvolumeclaim "data" not found.')),
    ],
    ids=["fits", "full", "freed", "none", "selector", "claim"],
)  # fmt: skip
def test_placement(nodes, wanted, placed, expected):
    assert place(Api(nodes), Faults(), wanted, placed) == expected


def test_a_claim_that_exists_and_an_injected_fault():
    faults = Faults()
    assert place(Api([node()], claims=["data"]), faults, pod(claim="data"), []) == ("n0", "")
    faults.unschedulable(job="fit", why="Insufficient nvidia.com/gpu")
    assert place(Api([node()]), faults, pod(), []) == (
        None, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")  # fmt: skip
