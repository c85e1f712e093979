"""The emulated Trainer's TrainJobStatus feature: what its plugin puts in the pods, and its
status server's answers, as kubeflow/trainer's pkg/statusserver gives them."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.harness.cluster.trainer_status import (  # noqa: E402
    CA_ENV,
    MOUNT,
    TOKEN_ENV,
    URL_ENV,
    audience,
    status_path,
)
from tests.harness.emulated import TRAINJOBS, submit, trainer_status, trainjob  # noqa: E402

ON = pytest.mark.parametrize("emulated_cluster", [{"trainer_status": True}], indirect=True)
WHEN = "2026-11-27T12:00:00.250000+00:00"
SLEEP = "import time; time.sleep(120)"


def post(cluster, path: str, body: bytes, token: str | None, method: str = "POST"):
    """(HTTP status, JSON answer) of a request to the status server, TLS verified."""
    context = ssl.create_default_context(cafile=str(cluster.status_server.certs.ca))
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(cluster.status_server.base + path, data=body,
                                     method=method, headers=headers)  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def token_for(cluster, name: str, namespace: str = "team", seconds: int = 3600) -> str:
    pod = {"metadata": {"name": f"{name}-node-0-0-abcde", "namespace": namespace}}
    return cluster.api.tokens.issue(pod, audience(namespace, name), seconds)


@ON
def test_the_plugin_gives_trainer_pods_the_url_ca_and_a_token_for_their_job(
    emulated_cluster, kube_api
):
    submit(kube_api[1], trainjob("fit", script=SLEEP))
    [pod] = emulated_cluster.wait_for(lambda: emulated_cluster.pods("fit"), what="the pod")
    [node] = pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env[URL_ENV] == emulated_cluster.status_server.base + status_path("team", "fit")
    assert (env[CA_ENV], env[TOKEN_ENV]) == (f"{MOUNT}/ca.crt", f"{MOUNT}/token")
    mount = {m["name"]: m for m in node["volumeMounts"]}["kubeflow-trainer-token"]
    assert mount == {"name": "kubeflow-trainer-token", "mountPath": MOUNT, "readOnly": True}
    config_map = emulated_cluster.get("v1/configmaps", "fit-tls-config")
    assert config_map["data"]["ca.crt"] == emulated_cluster.status_server.ca_pem
    assert config_map["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    folder = emulated_cluster.folder / "team" / pod["metadata"]["name"] / "volumes"
    token = emulated_cluster.wait_for(
        lambda: (
            (folder / "kubeflow-trainer-token" / "token").is_file()
            and (folder / "kubeflow-trainer-token" / "token").read_text()
        ),
        what="the projected token",
    )
    claims = emulated_cluster.api.tokens.claims(token, audience("team", "fit"))
    assert claims["kubernetes.io"]["pod"]["name"] == pod["metadata"]["name"]
    assert emulated_cluster.api.tokens.claims(token, audience("team", "other")) is None


def test_without_the_feature_gate_pods_get_nothing_of_it(emulated_cluster, kube_api):
    submit(kube_api[1], trainjob("fit", script=SLEEP))
    [pod] = emulated_cluster.wait_for(lambda: emulated_cluster.pods("fit"), what="the pod")
    assert URL_ENV not in {e["name"] for e in pod["spec"]["containers"][0].get("env") or []}
    assert emulated_cluster.get("v1/configmaps", "fit-tls-config") is None


@dataclass
class Case:
    name: str
    body: object  # a dict sent as JSON, or bytes as they are
    code: int
    message: str
    token: str = "right"  # right, none, other-job, other-namespace, expired, forged
    path: str = status_path("team", "fit")
    method: str = "POST"
    written: dict | None = field(default_factory=dict)  # {} : nothing written


def status(**fields) -> dict:
    return {"trainerStatus": {"lastUpdatedTime": WHEN, **fields}}


CASES = [
    Case("progress, ETA and metrics", status(progressPercentage=45, estimatedRemainingSeconds=120,
         metrics=[{"name": "loss", "value": "0.25"}]), 200, "",
         written={"progressPercentage": 45, "estimatedRemainingSeconds": 120,
                  "metrics": [{"name": "loss", "value": "0.25"}],
                  "lastUpdatedTime": "2026-11-27T12:00:00Z"}),
    Case("no token", status(progressPercentage=1), 403, "Forbidden", token="none"),
    Case("a token for another job", status(progressPercentage=1), 403, "Forbidden",
         token="other-job"),
    Case("a token from another namespace", status(progressPercentage=1), 403, "Forbidden",
         token="other-namespace"),
    Case("an expired token", status(progressPercentage=1), 403, "Forbidden", token="expired"),
    Case("a token not signed by the cluster", status(progressPercentage=1), 403, "Forbidden",
         token="forged"),
    Case("percent over 100", status(progressPercentage=150), 422,
         'TrainJob.trainer.kubeflow.org "fit" is invalid: status.trainerStatus.'
         "progressPercentage: 150 is greater than the maximum of 100"),
    Case("a negative ETA", status(estimatedRemainingSeconds=-1), 422,
         "estimatedRemainingSeconds: -1 is less than the minimum of 0"),
    Case("a percent that is not an integer", status(progressPercentage=45.5), 422,
         "Invalid payload"),
    Case("a metric value that is not a string", status(metrics=[{"name": "loss", "value": 0.2}]),
         422, "Invalid payload"),
    Case("a metric name past 64 characters", status(metrics=[{"name": "m" * 65, "value": "1"}]),
         422, "is too long"),
    Case("257 metrics", status(metrics=[{"name": f"m{i}", "value": "1"} for i in range(257)]),
         422, "is too long"),
    Case("no time", {"trainerStatus": {"progressPercentage": 5}}, 422,
         "lastUpdatedTime is required when trainerStatus is present"),
    Case("a time that is not RFC 3339", status(lastUpdatedTime="yesterday"), 422,
         "Invalid payload"),
    Case("two JSON values", b"{}{}", 422, "Invalid payload"),
    Case("no trainer status", {}, 200, "", written={}),
    Case("over 64 KiB", b'{"trainerStatus": {"metrics": [' + b'{"name":"m","value":"0.5"},' * 3000
         + b"]}}", 413, "Payload too large"),
    Case("a job that is not there", status(progressPercentage=1), 404, "Train job not found",
         path=status_path("team", "gone")),
    Case("GET", b"", 404, "Not found", method="GET"),
    Case("another path", status(progressPercentage=1), 404, "Not found",
         path="/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/fit"),
]  # fmt: skip


@ON
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_status_server_answers_as_the_trainers_does(emulated_cluster, case: Case):
    job = trainjob("fit", script=SLEEP)
    job["spec"]["suspend"] = True  # no pods needed
    emulated_cluster.create(TRAINJOBS, job)
    target = case.path.split("/")[-2]
    tokens = {
        "right": token_for(emulated_cluster, target),
        "none": None,
        "other-job": token_for(emulated_cluster, "other"),
        "other-namespace": emulated_cluster.api.tokens.issue(
            {"metadata": {"name": "p", "namespace": "default"}}, audience("team", "fit")
        ),
        "expired": token_for(emulated_cluster, "fit", seconds=-120),
        "forged": token_for(emulated_cluster, "fit")[:-4] + "AAAA",
    }
    body = case.body if isinstance(case.body, bytes) else json.dumps(case.body).encode()
    code, answer = post(emulated_cluster, case.path, body, tokens[case.token], case.method)
    assert code == case.code, answer
    if code != 200:
        assert answer["status"] == "Failure" and answer["code"] == code
        assert case.message in answer["message"]
        assert trainer_status(emulated_cluster, "fit") is None
        return
    assert trainer_status(emulated_cluster, "fit") == (case.written or None)
    assert answer == ({"trainerStatus": case.written} if case.written else {})


@ON
def test_a_new_status_replaces_the_old_one_whole(emulated_cluster):
    job = trainjob("fit", script=SLEEP)
    job["spec"]["suspend"] = True
    emulated_cluster.create(TRAINJOBS, job)
    token = token_for(emulated_cluster, "fit")
    first = status(progressPercentage=10, metrics=[{"name": "loss", "value": "1"}])
    assert post(emulated_cluster, status_path("team", "fit"), json.dumps(first).encode(), token)[0]
    second = json.dumps(status(progressPercentage=20)).encode()
    assert post(emulated_cluster, status_path("team", "fit"), second, token)[0] == 200
    assert trainer_status(emulated_cluster, "fit") == {
        "progressPercentage": 20,
        "lastUpdatedTime": "2026-11-27T12:00:00Z",
    }
    conditions = emulated_cluster.get(TRAINJOBS, "fit")["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["Suspended"]  # the rest of the status stays
