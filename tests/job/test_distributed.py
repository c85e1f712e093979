from dataclasses import dataclass

import pytest
from kubernetes.client import V1EnvVar, V1Toleration

from kale_ext.errors import ConfigError
from kale_ext.job.distributed import DistributedConfig, V1RunPolicy, V1SchedulingPolicy


def test_the_seed_examples_work_as_written():
    config = DistributedConfig(
        env=[V1EnvVar(name="ENV1", value="VALUE1")],
        labels={"significant-label": "a-value"},
        run_policy=V1RunPolicy(clean_pod_policy="All"),
    )
    assert config.env[0].name == "ENV1" and config.run_policy.clean_pod_policy == "All"
    complex_env = {"name": "MY_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    config = DistributedConfig(
        env=[V1EnvVar(name="ENV2", value="VALUE2"), complex_env],
        limits={"cpu": "100m", "memory": "1Gi"},
        node_selector={"node-id": "1234"},
    )
    assert isinstance(config.env[1], V1EnvVar)
    assert config.env[1].value_from.field_ref.field_path == "status.podIP"


def test_friendly_resource_keys_and_numbers_become_strings():
    config = DistributedConfig(
        requests={"cpu": 2, "memory": "4Gi"}, limits={"CPU": 4.5, "gpu": 1, "storage": "10Gi"}
    )
    assert config.requests == {"cpu": "2", "memory": "4Gi"}
    assert config.limits == {"cpu": "4.5", "nvidia.com/gpu": "1", "ephemeral-storage": "10Gi"}
    mig = DistributedConfig(limits={"mig-1g.5gb": 2})
    assert mig.limits == {"nvidia.com/mig-1g.5gb": "2"}


def test_round_trip_through_a_plain_dict():
    config = DistributedConfig(
        env=[{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
        env_from=[{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        requests={"cpu": "1"},
        limits={"cpu": "2"},
        annotations={"example.com/note": "any text: allowed"},
        labels={"team": "ml"},
        node_selector={"gpu": "a100"},
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        tolerations=[V1Toleration(key="gpu", operator="Exists", effect="NoSchedule")],
        run_policy={"suspend": True, "activeDeadlineSeconds": 60,
                    "scheduling_policy": {"queue": "team-a", "priority_class": "high"}},
    )  # fmt: skip
    data = config.to_dict()
    assert data["env"][0]["valueFrom"]["secretKeyRef"] == {"name": "s", "key": "k"}
    assert data["run_policy"]["active_deadline_seconds"] == 60
    again = DistributedConfig.from_dict(data)
    assert again == config and again.to_dict() == data


def test_run_policy_from_a_training_v1_look_alike():
    @dataclass
    class KubeflowOrgV1RunPolicy:  # the v1 SDK's shape, without installing it
        clean_pod_policy: str = "Running"
        ttl_seconds_after_finished: int = 30
        active_deadline_seconds: int | None = None
        backoff_limit: int = 3
        scheduling_policy: object = None
        suspend: bool = False

    policy = DistributedConfig(run_policy=KubeflowOrgV1RunPolicy()).run_policy
    assert (policy.clean_pod_policy, policy.ttl_seconds_after_finished) == ("Running", 30)
    sched = DistributedConfig(
        run_policy=V1RunPolicy(scheduling_policy=V1SchedulingPolicy(queue="q"))
    ).run_policy.scheduling_policy
    assert sched.queue == "q"


def test_merge_lays_one_config_over_another():
    low = DistributedConfig(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "1"}],
                            limits={"cpu": "1", "memory": "1Gi"}, labels={"x": "1"})  # fmt: skip
    high = DistributedConfig(env=[{"name": "B", "value": "2"}], limits={"cpu": "2"})
    merged = low.merged(high)
    assert [(e.name, e.value) for e in merged.env] == [("A", "1"), ("B", "2")]
    assert merged.limits == {"cpu": "2", "memory": "1Gi"} and merged.labels == {"x": "1"}


@pytest.mark.parametrize(
    "kwargs, field, message",
    [
        ({"bogus": 1}, "config.bogus", "unknown field"),
        ({"limits": {"cpu": "10X"}}, "limits.cpu", "not a Kubernetes quantity"),
        ({"limits": {"memory": "1 Gi"}}, "limits.memory", "no spaces"),
        ({"requests": {"cpu": -1}}, "requests.cpu", "must not be negative"),
        ({"requests": {"cpu": True}}, "requests.cpu", "must be a quantity"),
        ({"limits": {"gpu": "0.5"}}, "limits.gpu", "whole devices"),
        ({"limits": {"gpu": 1, "mig-1g.5gb": 1}}, "limits", "not both"),
        ({"limits": {"mig-1g.5gb": 1, "mig-2g.10gb": 1}}, "limits", "one MIG profile"),
        ({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, "requests.cpu", "more than its limit"),
        ({"env": [{"name": "1ABC", "value": "x"}]}, "env[0].name", "not a valid variable name"),
        ({"env": [{"name": "MY-VAR", "value": "x"}]}, "env[0].name", "not a valid variable name"),
        ({"env": [{"name": "PET_NNODES", "value": "2"}]}, "env[0].name", "set by the Trainer"),
        ({"env": [{"name": "A", "value": "1"}, {"name": "A"}]}, "env", "set twice"),
        (
            {"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPth": "x"}}}]},
            "env[0].valueFrom.fieldRef.fieldPth",
            "unknown field",
        ),  # fmt: skip
        ({"env": "A=1"}, "env", "must be a list"),
        ({"env_from": [{"prefix": "X"}]}, "env_from[0]", "exactly one of secretRef"),
        ({"labels": {"bad key!": "v"}}, "labels['bad key!']", "a key must be"),
        ({"labels": {"team": "not ok"}}, "labels['team']", "not a valid label value"),
        ({"labels": {"team": 5}}, "labels['team']", "must be a string"),
        ({"node_selector": {"-x": "1"}}, "node_selector['-x']", "a key must be"),
        (
            {"tolerations": [{"key": "k", "operator": "Maybe"}]},
            "tolerations[0].operator",
            "Exists or Equal",
        ),
        (
            {"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
            "tolerations[0].value",
            "empty",
        ),
        (
            {"tolerations": [{"key": "k", "effect": "Sometimes"}]},
            "tolerations[0].effect",
            "NoSchedule",
        ),
        (
            {"affinity": {"nodeAffinity": {"bogus": 1}}},
            "affinity.nodeAffinity.bogus",
            "unknown field",
        ),
        (
            {"run_policy": {"clean_pod_policy": "Some"}},
            "run_policy.clean_pod_policy",
            "All, Running",
        ),
        ({"run_policy": {"backoff_limit": -1}}, "run_policy.backoff_limit", "at least 0"),
        (
            {"run_policy": {"active_deadline_seconds": 0}},
            "run_policy.active_deadline_seconds",
            "at least 1",
        ),
        ({"run_policy": {"suspend": "yes"}}, "run_policy.suspend", "true or false"),
        ({"run_policy": {"retries": 1}}, "run_policy.retries", "unknown field"),
        ({"run_policy": "All"}, "run_policy", "must be a V1RunPolicy"),
    ],
)
def test_invalid_values_name_the_field(kwargs, field, message):
    with pytest.raises(ConfigError) as info:
        DistributedConfig.from_dict(kwargs)
    assert info.value.field == field
    assert message in str(info.value)


def test_kubernetes_models_are_importable_from_kale_ext_distributed():
    from kale_ext.job.distributed import V1Affinity, V1EnvVar  # noqa: F401

    with pytest.raises(ImportError):
        from kale_ext.job.distributed import NotAModel  # noqa: F401
