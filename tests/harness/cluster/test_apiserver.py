"""The emulated API server through the real kubernetes client over HTTP: what it stores and
answers, as a real API server with Kubeflow Trainer v2.3 would."""

import json

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from kubernetes import watch  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

from tests.harness.emulated import GROUP, VERSION, trainjob  # noqa: E402

NS = "team"


def status_of(e: ApiException) -> dict:
    return json.loads(e.body)


def create(custom, body, **kw):
    return custom.create_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", body, **kw)


def test_a_create_answers_201_with_the_servers_metadata(kube_api):
    _, custom = kube_api
    made, status, _ = custom.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, NS, "trainjobs", trainjob("fit"), field_validation="Strict"
    )
    assert status == 201  # kmock answers 200: kubernetes ≥ 36 then reads the body as None
    meta = made["metadata"]
    assert (
        meta["namespace"] == NS
        and meta["uid"]
        and meta["resourceVersion"]
        and meta["creationTimestamp"]
    )
    got = custom.get_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit")
    assert got["metadata"]["uid"] == meta["uid"] and got["spec"] == made["spec"]
    with pytest.raises(ApiException) as again:
        create(custom, trainjob("fit"))
    answer = status_of(again.value)
    assert (again.value.status, answer["reason"]) == (409, "AlreadyExists")
    assert answer["message"] == 'trainjobs.trainer.kubeflow.org "fit" already exists'


def test_unknown_fields_are_pruned_without_strict_validation(kube_api):
    _, custom = kube_api
    body = trainjob("fit", valid=False)
    body["spec"]["labels"] = {"old": "field"}  # removed in Trainer v2.2
    assert "labels" not in create(custom, body)["spec"]


def test_a_namespace_that_does_not_exist(kube_api):
    core, _ = kube_api
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_config_map("nope", {"metadata": {"name": "c"}})
    assert (
        missing.value.status == 404
        and status_of(missing.value)["message"] == 'namespaces "nope" not found'
    )


def test_lists_select_by_labels_and_fields(kube_api):
    core, _ = kube_api
    for name, labels in (("a", {"app": "x", "i": "0"}), ("b", {"app": "x", "i": "1"}), ("c", {})):
        core.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": labels}})
    listed = core.list_namespaced_config_map(NS, label_selector="app=x,i in (1, 2)")
    assert listed.kind == "ConfigMapList" and [c.metadata.name for c in listed.items] == ["b"]
    by_name = core.list_namespaced_config_map(NS, field_selector="metadata.name=c")
    assert [c.metadata.name for c in by_name.items] == ["c"]
    with pytest.raises(ApiException) as bad:
        core.list_namespaced_config_map(NS, label_selector="app in (x")
    assert bad.value.status == 400


def test_watches_stream_what_exists_then_what_changes(kube_api, emulated_cluster):
    core, _ = kube_api
    core.create_namespaced_config_map(NS, {"metadata": {"name": "before", "labels": {"w": "1"}}})
    seen = []
    stream = watch.Watch().stream(core.list_namespaced_config_map, NS, label_selector="w=1",
                                  timeout_seconds=30)  # fmt: skip
    for event in stream:
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 1:
            core.create_namespaced_config_map(NS, {"metadata": {"name": "other"}})
            core.create_namespaced_config_map(
                NS, {"metadata": {"name": "after", "labels": {"w": "1"}}}
            )
            core.delete_namespaced_config_map("after", NS)
        if len(seen) == 3:
            break
    assert seen == [("ADDED", "before"), ("ADDED", "after"), ("DELETED", "after")]


def test_patches_json_merge_and_strategic(kube_api):
    core, custom = kube_api
    cm = core.create_namespaced_config_map(NS, {"metadata": {"name": "c"}, "data": {"a": "1"}})
    guard = {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": cm.metadata.resource_version,
    }
    add = {"op": "add", "path": "/data/b", "value": "2"}
    assert core.patch_namespaced_config_map("c", NS, [guard, add]).data == {"a": "1", "b": "2"}
    with pytest.raises(ApiException) as stale:  # the guard's version has moved on
        core.patch_namespaced_config_map("c", NS, [guard, add])
    assert stale.value.status == 422
    assert core.patch_namespaced_config_map("c", NS, {"data": {"a": None}}).data == {"b": "2"}
    create(custom, trainjob("fit"))
    patched = custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                                    {"spec": {"suspend": True}})  # fmt: skip
    assert patched["spec"]["suspend"] is True
    with pytest.raises(ApiException) as immutable:
        custom.patch_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "fit",
                                              {"spec": {"trainer": {"numNodes": 3}}})  # fmt: skip
    assert immutable.value.status == 422 and "spec.trainer: Invalid value: field is immutable" in (
        status_of(immutable.value)["message"])  # fmt: skip


def test_configmap_and_secret_rules(kube_api):
    core, _ = kube_api
    big = "x" * (1 << 20)  # exactly the most a ConfigMap holds: a request body over 1 MiB
    core.create_namespaced_config_map(NS, {"metadata": {"name": "big"}, "data": {"k": big}})
    with pytest.raises(ApiException) as too_big:
        core.create_namespaced_config_map(
            NS, {"metadata": {"name": "bigger"}, "data": {"k": big + "x"}}
        )
    assert too_big.value.status == 422 and "must have at most 1048576 bytes" in too_big.value.body
    core.create_namespaced_config_map(NS, {"metadata": {"name": "frozen"}, "data": {"a": "1"},
                                           "immutable": True})  # fmt: skip
    with pytest.raises(ApiException) as frozen:
        core.patch_namespaced_config_map("frozen", NS, {"data": {"a": "2"}})
    assert frozen.value.status == 422 and "field is immutable" in frozen.value.body
    secret = core.create_namespaced_secret(
        NS, {"metadata": {"name": "s"}, "stringData": {"token": "t0k"}}
    )
    assert secret.data == {"token": "dDBr"} and secret.type == "Opaque"


def test_the_garbage_collector_follows_owner_references(kube_api):
    core, custom = kube_api
    owners = [create(custom, trainjob(n)) for n in ("one", "two")]
    refs = [{"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob", "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"]} for o in owners]  # fmt: skip
    core.create_namespaced_config_map(NS, {"metadata": {"name": "shared", "ownerReferences": refs}})
    core.create_namespaced_config_map(
        NS, {"metadata": {"name": "own", "ownerReferences": refs[:1]}}
    )
    gone = custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "one")
    assert gone["status"] == "Success" and gone["details"]["name"] == "one"
    left = core.list_namespaced_config_map(NS).items
    assert [c.metadata.name for c in left] == ["shared"]
    assert [r.name for r in left[0].metadata.owner_references] == ["two"]
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, "trainjobs", "two")
    assert core.list_namespaced_config_map(NS).items == []
