"""A failure kept after its pods are gone, on the emulated cluster through `kale-ext`
(tests/cli): `status` while the failed pod exists keeps the failure and each node's last lines
in a ConfigMap owned by the TrainJob; once the pods are deleted `status`, `jobs` and `logs`
still say node, cell and line (and `logs` that its lines were kept); pods deleted before
kale_ext looked are said plainly, and `logs` fails saying so. The sizes are bounded."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import Failure
from kale_ext.backends.kubernetes import kept
from tests.backends.kubernetes.test_reasons import load
from tests.cli import cli
from tests.conftest import notebook

pytest.register_assert_rewrite("tests.harness.server")
pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server", "tests.harness.emulated"]

FAILS = notebook(
    ("import os", ["imports"]),
    ("rows = [{'x': 1}]", ["parameters"]),
    ("print('reading', len(rows), 'rows', flush=True)\nlabels = [r['label'] for r in rows]",
     ["block:training"]),
)  # fmt: skip
K8S = ("--backend", "kubernetes")
PODS = "v1/pods"
CONFIGMAPS = "v1/configmaps"


@pytest.fixture
def failed(emulated_cluster, write_nb):
    """A job whose only node failed (restartPolicy Never, no retries: its failed pod stays)."""
    from tests.harness.emulated import finished
    from tests.harness.runtimes import runtime_manifest

    runtime = runtime_manifest("torch-distributed")
    runtime["kind"] = "TrainingRuntime"
    job = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    job["backoffLimit"] = 0
    job["template"]["spec"]["restartPolicy"] = "Never"
    emulated_cluster.create("trainer.kubeflow.org/v1alpha1/trainingruntimes", runtime)
    out = cli("run", write_nb(FAILS), *K8S)
    assert out.returncode == 0, out.stderr
    [name] = [x.split()[1] for x in out.stderr.splitlines() if x.startswith("submitted")]
    emulated_cluster.wait_for(lambda: finished(emulated_cluster, name) == "Failed", what="Failed")
    return name


def delete_pods(cluster, name: str) -> None:
    for pod in cluster.pods(name):
        cluster.delete(PODS, pod["metadata"]["name"])
    cluster.wait_for(lambda: not cluster.pods(name), what="the pods to go")


def status(name: str) -> dict:
    out = cli("status", name, *K8S, "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


WHERE = {"node": 0, "rank": 0, "cell_index": 2, "cell_label": "training", "line": 2,
         "exception": "KeyError: 'label'"}  # fmt: skip


def test_a_failure_is_kept_until_the_pods_are_deleted_and_after(emulated_cluster, failed):
    seen = status(failed)  # the failed pod is still there: kale_ext keeps what it says
    assert {k: seen["failure"][k] for k in WHERE} == WHERE, seen
    configmap = emulated_cluster.get(CONFIGMAPS, kept.name_of(failed))
    trainjob = emulated_cluster.get("trainer.kubeflow.org/v1alpha1/trainjobs", failed)
    [owner] = configmap["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"]) == ("TrainJob", trainjob["metadata"]["uid"])
    assert configmap["metadata"]["labels"] == {kept.KEPT_LABEL: failed}

    delete_pods(emulated_cluster, failed)
    after = status(failed)
    assert {k: after["failure"][k] for k in WHERE} == WHERE, after
    assert after["reason"] == (
        "node 0, rank 0: cell 3 (\"training\"), line 2: KeyError: 'label'; a node failed, so the "
        "job did (FailedJobs: jobset failed due to one or more job failures (first failed job: "
        f"{failed}-node-0))"
    )
    shown = cli("status", failed, *K8S).stdout
    assert 'cell 3 ("training"), line 2' in shown and "KeyError: 'label'" in shown

    listed = cli("jobs", *K8S, "-o", "json")
    [row] = [j for j in json.loads(listed.stdout) if j["name"] == failed]
    assert {k: row["failure"][k] for k in WHERE} == WHERE

    logs = cli("logs", failed, *K8S)
    assert logs.returncode == 0, logs.stderr
    printed = logs.stdout.splitlines()
    assert printed[0].startswith("[rank 0] kale_ext: the pod of node 0 is gone; its last ")
    assert "kept at " in printed[0] and "when it had failed" in printed[0]
    assert any("reading 1 rows" in line for line in printed[1:]), printed
    assert any("KeyError: 'label'" in line for line in printed[1:]), printed

    out = cli("delete", failed, *K8S)  # the kept failure goes with its job
    assert out.returncode == 0, out.stderr
    emulated_cluster.wait_for(
        lambda: emulated_cluster.get(CONFIGMAPS, kept.name_of(failed)) is None,
        what="the kept failure to go with its TrainJob",
    )


@pytest.fixture
def kale_config(emulated_cluster) -> dict:
    """The REST API's backend: Kubernetes, through KUBECONFIG (the emulated cluster's)."""
    return {"backend": "kubernetes", "poll_interval": 0.1, "warm_up": False}


async def test_the_rest_api_names_the_kept_failure_and_sends_the_kept_lines(
    api, emulated_cluster, failed
):
    from tests.harness.server import lines

    seen = (await api.get(f"jobs/{failed}")).json  # the failed pod is still there
    assert {k: seen["failure"][k] for k in WHERE} == WHERE, seen
    delete_pods(emulated_cluster, failed)
    job = (await api.get(f"jobs/{failed}")).json
    assert job["status"] == "Failed" and {k: job["failure"][k] for k in WHERE} == WHERE
    listed = [j for j in (await api.get("jobs")).json["jobs"] if j["name"] == failed]
    assert {k: listed[0]["failure"][k] for k in WHERE} == WHERE
    sent = lines(await api.logs(failed))
    assert sent[0][1].startswith("kale_ext: the pod of node 0 is gone; its last ")
    assert (0, "KeyError: 'label'") in sent


def test_pods_deleted_before_kale_ext_looked_are_said_plainly(emulated_cluster, failed):
    delete_pods(emulated_cluster, failed)
    seen = status(failed)
    assert seen["status"] == "Failed" and seen["failure"]["node"] is None
    assert "its pods were deleted before kale_ext looked at them" in seen["reason"]
    shown = cli("status", failed, *K8S).stdout
    assert "what they said went with them" in shown
    logs = cli("logs", failed, *K8S)
    assert logs.returncode == 1 and logs.stdout == ""
    assert f"error: the logs of job {failed} went with its pods, and nothing of them was kept" in (
        logs.stderr
    )
    assert "Traceback" not in logs.stderr
    assert emulated_cluster.get(CONFIGMAPS, kept.name_of(failed)) is None


BIG = "x" * (kept.LINE_BYTES * 2)


@pytest.mark.parametrize(
    "lines, expected",
    [
        ({0: [f"line {i}" for i in range(500)]}, {0: [f"line {i}" for i in range(300, 500)]}),
        ({0: ["a", BIG]}, {0: ["a", BIG[: kept.LINE_BYTES] + " …"]}),
        ({n: [BIG] * 200 for n in range(8)}, {n: [BIG[: kept.LINE_BYTES] + " …"] * 15
                                              for n in range(8)}),
    ],
    ids=["the last 200 lines", "a long line cut", "all nodes within KEPT_BYTES"],
)  # fmt: skip
def test_what_is_kept_is_bounded(lines, expected):
    out = kept.bounded(lines)
    assert out == expected
    trainjob = {"metadata": {"name": "fit", "uid": "u"}}
    body = kept.body(trainjob, kept.Kept(Failure("node 0 failed", node=0), lines))
    assert sum(len(v.encode()) for v in body["data"].values()) < kept.KEPT_BYTES + 4096


def test_a_recorded_failure_is_kept_once_and_recalled_by_every_view(backend, kube):
    load(kube, "exception-in-a-cell")  # two failed pods, as the API server returned them
    where = {"node": 1, "rank": 1, "cell_index": 3, "line": 3, "exception": "KeyError: 'label'"}
    for _ in range(2):
        failure = backend.get_job("fit").failure
        assert {k: getattr(failure, k) for k in where} == where
    assert kube.mocks["create_namespaced_config_map"].call_count == 1  # the same endings: once
    pod = kube.get("pods", "fit-node-0-1-q8w4z")
    pod["status"]["containerStatuses"][0]["restartCount"] = 1  # it ended again: kept again
    backend.get_job("fit")
    assert kube.mocks["patch_namespaced_config_map"].call_count == 1
    kube.objects[("pods", "team")].clear()  # the pods go (the Job controller, an admin)
    info = backend.get_job("fit")
    assert {k: getattr(info.failure, k) for k in where} == where
    assert info.reason.startswith("""node 1, rank 1: cell 4 ("training"), line 3: KeyError""")
    assert "[rank 1] KeyError: 'label'" in info.failure.log_tail
    [listed] = backend.list_jobs()
    assert {k: getattr(listed.failure, k) for k in where} == where
    assert kube.mocks["list_namespaced_config_map"].call_count == 1
    texts = [line.text for line in backend.logs("fit", node=1)]
    assert texts[0].startswith("kale_ext: the pod of node 1 is gone; its last ")
    assert "KeyError: 'label'" in texts and len(texts) <= kept.KEPT_LINES + 1
    tail = [line.text for line in backend.logs("fit", node=1, tail=2)]
    assert tail[1:] == texts[-2:]


def test_metric_readers_see_no_lines_where_the_logs_went_with_the_pods(backend, kube):
    from kale_ext.backends.base import LogsGone, lines_left
    from kale_ext.runs.diff import final_metrics

    kube.add_trainjob("fit")
    kube.set_conditions("fit", ("Failed", "True", "FailedJobs", "jobset failed"))
    with pytest.raises(LogsGone) as gone:
        list(backend.logs("fit"))
    assert (gone.value.status, gone.value.reason) == (410, "Gone")
    assert list(lines_left(backend, "fit")) == []  # a sweep's driver reads on
    assert final_metrics(backend, "fit") == {}  # the diff shows no metrics, not an error


def _ending(code: int, message: str | None = None):
    from types import SimpleNamespace

    return SimpleNamespace(exit_code=code, reason="Error", message=message)


def _container(state: dict, last=None):
    from types import SimpleNamespace

    none = {"terminated": None, "running": None, "waiting": None}
    return SimpleNamespace(
        state=SimpleNamespace(**{**none, **state}),
        last_state=SimpleNamespace(**{**none, "terminated": last}),
    )


RECORD = json.dumps({"kale_ext": {"exception": "KeyError: 'missing'"}})


@pytest.mark.parametrize(
    "state, last, expected",
    [
        # crash-looping, and running again: the run before failed (previous=true logs)
        ({"waiting": object()}, "key", ("key", True)),
        ({"running": object()}, "key", ("key", True)),
        # the Job controller deletes the pod as its next run runs: that SIGTERM is later
        ({"terminated": "sigterm"}, "key", ("key", True)),
        # only the later ending left the module's record
        ({"terminated": "key"}, "sigterm", ("key", False)),
        ({"terminated": "key"}, None, ("key", False)),
        ({"running": object()}, None, (None, False)),
    ],
)
def test_the_first_failure_of_a_container_tells_it(state, last, expected):
    """How a node failed, and which run's logs hold its lines (kept and shown): the first
    failure wins over the SIGTERM of a later run; a record (cell, line) wins over none."""
    from kale_ext.backends.kubernetes.failures import failed_ending

    endings = {"key": _ending(1, RECORD), "sigterm": _ending(143)}
    state = {k: endings.get(v, v) if isinstance(v, str) else v for k, v in state.items()}
    ended, previous = failed_ending(_container(state, endings.get(last)))
    assert (ended, previous) == (endings.get(expected[0]), expected[1])


def test_an_mpi_jobs_launcher_failure_is_node_0s_kept_and_recalled(backend, kube):
    """An MPI job fails in its launcher (mpirun brought the failing rank's traceback there): the
    failure, and the lines kept once the pods go, are node 0's; the worker's are node 1's."""
    kube.add_trainjob("fit", num_nodes=2)
    mpirun = ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python", "train.py"]
    kube.get("trainjobs", "fit")["spec"]["trainer"] = {"numNodes": 2, "command": mpirun}
    launcher = kube.add_pod("fit", 0, "Failed", step="launcher")
    kube.logs[launcher].write("Traceback (most recent call last):", "KeyError: 'label'")
    kube.logs[kube.add_pod("fit", 0, "Running")].write("Server listening on port 2222.")
    kube.set_conditions("fit", ("Failed", "True", "FailedJobs", "jobset failed"))
    assert backend.get_job("fit").failure.node == 0  # and kept, with each node's lines
    kube.objects[("pods", "team")].clear()
    info = backend.get_job("fit")
    assert info.failure.node == 0 and info.reason.startswith("node 0")
    node0 = [line.text for line in backend.logs("fit", node=0)]
    assert node0[0].startswith("kale_ext: the pod of node 0 is gone")
    assert node0[1:] == ["Traceback (most recent call last):", "KeyError: 'label'"]
    assert [line.text for line in backend.logs("fit", node=1)][1:] == [
        "Server listening on port 2222."
    ]
