"""Volumes and pod settings: the short forms, the DistributedConfig fields (validated as the
existing ones: errors name the field), the checks across them, and the one runtime patch the
Trainer v2.3 schema and webhooks accept."""

from __future__ import annotations

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.distributed import DistributedConfig
from kale_ext.job.preview import render
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from kale_ext.job.volumes import ShortVolume, describe, parse_volume
from kale_ext.job.workspace import collect
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob
from tests.job.test_workspace import tree

NB = notebook("print(open('data/x.csv').read())")


def spec(options=None, workspace=None):
    return build_job_spec(compile_notebook(NB), {"name": "fit", **(options or {})},
                          workspace=workspace)  # fmt: skip


def pod_of(tj: dict) -> dict:
    [patch] = tj["spec"]["runtimePatches"]
    [job] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return job["template"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("pvc:data:/data", ShortVolume("pvc", "data", "/data")),
        ("pvc:data:/data:ro", ShortVolume("pvc", "data", "/data", read_only=True)),
        ("pvc:data:data/=~/datasets", ShortVolume("pvc", "data", "data", local="~/datasets")),
        ("secret:creds:/etc/creds", ShortVolume("secret", "creds", "/etc/creds")),
        (
            "configmap:conf:/etc/conf=./conf",
            ShortVolume("configmap", "conf", "/etc/conf", local="./conf"),
        ),
        ("emptydir:/scratch", ShortVolume("emptydir", None, "/scratch")),
        ("emptydir:scratch:2Gi", ShortVolume("emptydir", None, "scratch", size="2Gi")),
    ],
)
def test_short_forms(text, parsed):
    assert parse_volume(text) == parsed


@pytest.mark.parametrize(
    "text, message",
    [
        ("nfs:x:/data", "'nfs' is not a volume kind"),
        ("pvc:data", "write pvc:NAME:/mount[:ro]"),
        ("secret:creds:/etc/creds:ro", "write secret:NAME:/mount"),
        ("pvc:Data:/data", "'Data' is not a Kubernetes object name"),
        ("pvc:data:/data/../etc", "is not a folder to mount a volume at"),
        ("pvc:data:/", "'/' is not a folder to mount a volume at"),
        ("emptydir:/s:lots", "is not a Kubernetes quantity"),
        ("emptydir:/s=/tmp", "an emptydir is a scratch folder (no =LOCAL_DIR)"),
        ("", "must be a non-empty string"),
    ],
)
def test_a_volume_that_does_not_parse_names_the_field(text, message):
    with pytest.raises(ConfigError) as info:
        spec({"volumes": ["pvc:ok:/ok", text]})
    assert info.value.field == "volumes[1]" and message in info.value.message


@pytest.mark.parametrize(
    "config, field, message",
    [
        ({"volumes": [{"name": "Bad_Name", "emptyDir": {}}]}, "volumes[0].name", "is not a volume name"),
        ({"volumes": [{"name": "kale-ext-workspace", "emptyDir": {}}]}, "volumes[0].name",
         "a volume kale_ext adds itself"),
        ({"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]}, "volumes",
         "two volumes are named 'a'"),
        ({"volumes": [{"name": "a", "hostPathx": {}}]}, "volumes[0].hostPathx", "unknown field"),
        ({"volume_mounts": [{"name": "a", "mountPath": "/x/../.."}]}, "volume_mounts[0].mountPath",
         "is not a folder to mount"),
        ({"service_account_name": "Trainer!"}, "service_account_name", "is not a service account"),
        ({"image_pull_secrets": [{"name": ""}]}, "image_pull_secrets[0]", "is not a Secret name"),
        ({"security_context": {"runAsUserx": 1}}, "security_context.runAsUserx", "unknown field"),
        ({"shm_size": "big"}, "shm_size", "is not a Kubernetes quantity"),
    ],
)  # fmt: skip
def test_config_fields_are_checked_naming_the_field(config, field, message):
    with pytest.raises(ConfigError) as info:
        DistributedConfig.from_dict(config)
    assert info.value.field == field and message in info.value.message


@pytest.mark.parametrize(
    "options, field, message",
    [
        ({"config": {"volume_mounts": [{"name": "nope", "mountPath": "/x"}]}},
         "volume_mounts[0].name", "no volume is named 'nope'"),
        ({"volumes": ["pvc:a:/data", "pvc:b:/data"]}, "volume_mounts[1].mountPath",
         "/data is the mount of volume 'pvc-a' already"),
        ({"volumes": ["pvc:a:/data", "emptydir:/data/tmp"]}, "volume_mounts[1].mountPath",
         "/data/tmp collides with the mount of volume 'pvc-a'"),
        ({"volumes": ["emptydir:/dev/shm"], "shm_size": "1Gi"}, "volume_mounts[0].mountPath",
         "/dev/shm is /dev/shm (shm_size 1Gi)"),
        ({"volumes": ["pvc:o:/mnt/outputs/x"], "outputs": "pvc:results"},
         "volume_mounts[0].mountPath", "collides with the outputs volume (pvc:results:/mnt/outputs)"),
        ({"volumes": ["pvc:a:/kale-ext/work/data"]}, "volume_mounts[0].mountPath",
         "is kale_ext's working directory on a cluster"),
    ],
)  # fmt: skip
def test_mounts_that_collide_or_name_nothing_are_refused(options, field, message):
    with pytest.raises(ConfigError) as info:
        spec(options)
    assert info.value.field == field and message in info.value.message


def test_a_relative_mount_on_the_workspaces_files_is_refused(tmp_path):
    ws = collect(tree(tmp_path, {"data/x.csv": "1", "a.py": ""}))
    with pytest.raises(ConfigError) as info:
        spec({"volumes": ["pvc:data:data"]}, ws)
    assert info.value.field == "volume_mounts[0].mountPath"
    assert "data is also in the workspace (data): exclude it in .kaleignore" in info.value.message
    spec({"volumes": ["pvc:data:datasets"]}, ws)  # elsewhere is fine


def test_layers_merge_volumes_by_name_and_mounts_by_path():
    low = DistributedConfig(volumes=[{"name": "a", "emptyDir": {}}], image_pull_secrets=["r1"],
                            volume_mounts=[{"name": "a", "mountPath": "/a"}], shm_size="1Gi")  # fmt: skip
    high = DistributedConfig(volumes=[{"name": "a", "emptyDir": {"medium": "Memory"}}],
                             image_pull_secrets=["r1", "r2"], service_account_name="sa")  # fmt: skip
    merged = low.merged(high).to_dict()
    assert merged["volumes"] == [{"name": "a", "emptyDir": {"medium": "Memory"}}]
    assert merged["image_pull_secrets"] == ["r1", "r2"]
    assert (merged["shm_size"], merged["service_account_name"]) == ("1Gi", "sa")
    assert DistributedConfig.from_dict(merged).to_dict() == merged  # round trip


def test_the_pvc_shm_and_service_account_of_the_issue_validate_as_one_runtime_patch():
    s = spec({"volumes": ["pvc:data:/data"], "shm_size": "1Gi", "service_account": "trainer",
              "image_pull_secrets": ["registry"],
              "config": {"security_context": {"runAsNonRoot": True, "fsGroup": 1000}}})  # fmt: skip
    tj = trainjob_dict(s)
    validate_trainjob(tj)
    assert len(tj["spec"]["runtimePatches"]) == 1
    pod = pod_of(tj)
    assert pod["serviceAccountName"] == "trainer"
    assert pod["imagePullSecrets"] == [{"name": "registry"}]
    assert pod["securityContext"] == {"runAsNonRoot": True, "fsGroup": 1000}
    assert pod["volumes"] == [
        {"name": "kale-ext-shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        {"name": "pvc-data", "persistentVolumeClaim": {"claimName": "data"}},
    ]
    assert pod["containers"] == [{"name": "node", "volumeMounts": [
        {"name": "kale-ext-shm", "mountPath": "/dev/shm"}, {"name": "pvc-data", "mountPath": "/data"}]}]  # fmt: skip


def test_a_relative_mount_sits_in_the_fixed_working_directory_on_a_cluster():
    import json

    s = spec({"volumes": ["pvc:data:data=/tmp", "emptydir:scratch"]})
    tj = trainjob_dict(s)
    validate_trainjob(tj)
    mounts = pod_of(tj)["containers"][0]["volumeMounts"]
    assert mounts[0] == {"name": "kale-ext-work", "mountPath": "/kale-ext/work"}
    assert [m["mountPath"] for m in mounts[1:]] == ["/kale-ext/work/data", "/kale-ext/work/scratch"]
    assert json.loads(tj["spec"]["trainer"]["command"][3])["workdir"] == "/kale-ext/work"
    assert [(v["kind"], v["mount"], v["mount_path"], v["local"]) for v in describe(s.config, s.local_folders)] == [
        ("pvc", "data", "/kale-ext/work/data", "/tmp"), ("emptydir", "scratch", "/kale-ext/work/scratch", None)]  # fmt: skip
    summary = render(s).summary()
    assert "volume     pvc data at data (locally /tmp)" in summary


def test_env_from_a_secret_lists_its_keys_at_submit():
    s = spec({"env_from_secrets": ["tokens"]})
    assert [e.secret_ref.name for e in s.config.env_from] == ["tokens"]
    tj = trainjob_dict(s, env_from_keys=lambda kind, name: ["API_KEY"])
    assert tj["spec"]["trainer"]["env"] == [
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "tokens", "key": "API_KEY"}}}
    ]
