"""Selectors and patches as the API server reads and applies them."""

import pytest

from tests.harness.cluster.objects import (
    field_values,
    merge_patch,
    parse_selector,
    selected,
    strategic_merge,
)

LABELS = {"app": "kale", "tier": "train", "index": "1"}


@pytest.mark.parametrize(
    "selector, matches",
    [
        ("", True),
        ("app=kale", True),
        ("app==kale,tier=train", True),
        ("app=other", False),
        ("app!=other", True),
        ("index in (0, 1)", True),
        ("index notin (0,1)", False),
        ("tier", True),
        ("!tier", False),
        ("!missing,app in (kale)", True),
        ("jobset.sigs.k8s.io/jobset-name=x", False),
    ],
)
def test_label_selectors(selector, matches):
    assert selected(LABELS, parse_selector(selector)) is matches


def test_a_selector_that_cannot_be_read_is_refused():
    with pytest.raises(ValueError, match="unable to parse requirement"):
        parse_selector("app=(x")


def test_field_selectors_read_dotted_fields():
    event = {"involvedObject": {"name": "job-node-0-0-abcde", "kind": "Pod"}}
    terms = parse_selector("involvedObject.kind=Pod,involvedObject.name=job-node-0-0-abcde")
    assert selected(field_values(event, terms), terms)
    assert not selected(field_values(event, parse_selector("involvedObject.kind=Job")),
                        parse_selector("involvedObject.kind=Job"))  # fmt: skip


def test_strategic_merge_merges_named_lists_and_replaces_others():
    base = {"containers": [{"name": "node", "image": "a", "env": [{"name": "A", "value": "1"}]}],
            "tolerations": [{"key": "x"}], "nodeSelector": {"a": "1"}}  # fmt: skip
    patch = {"containers": [{"name": "node", "env": [{"name": "B", "value": "2"}],
                             "volumeMounts": [{"name": "v", "mountPath": "/m"}]},
                            {"name": "side", "image": "b"}],
             "tolerations": [{"key": "y"}], "nodeSelector": {"b": "2", "a": None}}  # fmt: skip
    merged = strategic_merge(base, patch)
    node, side = merged["containers"]
    assert node["image"] == "a" and [e["name"] for e in node["env"]] == ["A", "B"]
    assert node["volumeMounts"] == [{"name": "v", "mountPath": "/m"}] and side["name"] == "side"
    assert merged["tolerations"] == [{"key": "y"}] and merged["nodeSelector"] == {"b": "2"}
    assert base["containers"][0]["env"] == [{"name": "A", "value": "1"}]  # untouched


def test_merge_patch_deletes_with_null_and_replaces_lists():
    assert merge_patch({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": None}, "l": [3]}) == {
        "a": {"c": 2},
        "l": [3],
    }
