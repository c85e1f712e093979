"""Container logs as the kubelet serves them: followed as they are written, the run before a
restart, the last lines, and a 400 where a real kubelet says no."""

import json

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from kubernetes.client.exceptions import ApiException  # noqa: E402

from tests.harness.emulated import (  # noqa: E402
    finished,
    node_state,
    patch_of,
    submit,
    trainjob,
)

GATED = """
import os, time
print("one", flush=True)
while not os.path.exists("go"):
    time.sleep(0.02)
print("two")
"""
SECOND_TIME = """
import os, sys
if os.path.exists("ran"):
    print("second run")
else:
    open("ran", "w").close(); print("first run"); sys.exit(1)
"""


def read(core, name: str, **params) -> str:
    answer = core.read_namespaced_pod_log(name, "team", container="node", _preload_content=False,
                                          **params)  # fmt: skip
    return answer.data.decode()


def test_a_followed_log_streams_lines_as_they_are_written(emulated_cluster, kube_api):
    core, custom = kube_api
    submit(custom, trainjob("fit", script=GATED))
    pod = emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods("fit")
                                             if node_state(p).get("running")])[0]  # fmt: skip
    name = pod["metadata"]["name"]
    stream = core.read_namespaced_pod_log(name, "team", container="node", follow=True,
                                          _preload_content=False)  # fmt: skip
    got = b""
    chunks = stream.stream(16)
    while b"one\n" not in got:
        got += next(chunks)
    assert got == b"one\n"  # while the container still runs
    (emulated_cluster.folder / "team" / name / "work" / "go").write_text("")
    got += b"".join(chunks)  # ends when the container does
    assert got == b"one\ntwo\n"
    assert read(core, name, tail_lines=1) == "two\n"


def test_the_log_before_a_restart(emulated_cluster, kube_api):
    core, custom = kube_api
    submit(custom, trainjob("fit", script=SECOND_TIME))
    assert emulated_cluster.wait_for(lambda: finished(emulated_cluster, "fit")) == "Complete"
    [pod] = emulated_cluster.pods("fit")
    name = pod["metadata"]["name"]
    assert read(core, name) == "second run\n" and read(core, name, previous=True) == "first run\n"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 1


@pytest.mark.parametrize(
    "params, said",
    [
        ({"container": "sidecar"}, "container sidecar is not valid for pod {pod}"),
        ({"previous": True}, 'previous terminated container "node" in pod "{pod}" not found'),
        ({}, 'container "node" in pod "{pod}" is waiting to start: ContainerCreating'),
    ],
)
def test_what_a_kubelet_says_no_to(emulated_cluster, kube_api, params, said):
    core, custom = kube_api
    volume = {"name": "conf", "configMap": {"name": "never"}}
    submit(custom, trainjob("fit", patches=[patch_of(volumes=[volume],
                                                     mounts=[{"name": "conf", "mountPath": "/c"}])]))  # fmt: skip
    pod = emulated_cluster.wait_for(lambda: [p for p in emulated_cluster.pods("fit")
                                             if node_state(p).get("waiting")])[0]  # fmt: skip
    name = pod["metadata"]["name"]
    with pytest.raises(ApiException) as refused:
        core.read_namespaced_pod_log(name, "team", **{"container": "node", **params})
    answer = json.loads(refused.value.body)
    assert (refused.value.status, answer["message"]) == (400, said.format(pod=name))
