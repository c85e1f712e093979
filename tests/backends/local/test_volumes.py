"""A local job's volumes, with real processes: a local folder stands for a PVC (relative or
absolute mount), an emptydir is a scratch folder per node, and a volume that cannot be honoured
here is an error before anything starts."""

from __future__ import annotations

import json

import pytest

from kale_ext.backends.base import Status
from kale_ext.backends.local.backend import LocalBackend
from kale_ext.backends.submit import submit
from kale_ext.errors import ConfigError
from tests.conftest import notebook
from tests.job.test_workspace import tree

READS = notebook(
    ("import os\nimport torch.distributed as dist", ["imports"]),
    ("data = 'data'", ["parameters"]),
    "dist.init_process_group('gloo')\n"
    "rank = dist.get_rank()\n"
    "print('read', open(os.path.join(data, 'x.csv')).read().strip())\n"
    "open(os.path.join('scratch', f'mine-{rank}'), 'w').write('s')\n"
    "dist.barrier()\n"
    "print('scratch', sorted(os.listdir('scratch')))\n"
    "dist.destroy_process_group()",
)


@pytest.fixture
def backend(tmp_path):
    return LocalBackend(tmp_path / "jobs")


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project" / "train.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps(READS))
    tree(tmp_path / "datasets", {"x.csv": "a,b"})
    return path


def texts(backend, name) -> dict:
    return {(line.rank, line.text.split()[0]): line.text for line in backend.logs(name)}


def test_a_local_folder_stands_for_a_pvc_and_each_node_gets_its_own_scratch(
    backend, project, tmp_path
):
    options = {"nodes": 2, "volumes": ["pvc:data:data=../datasets", "emptydir:scratch:1Gi"]}
    name = submit(backend, project, options).name  # a relative LOCAL_DIR: from the notebook's
    info = backend.wait(name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    out = texts(backend, name)
    assert out.get((0, "read")) == out.get((1, "read")) == "read a,b", out
    assert out.get((0, "scratch")) == "scratch ['mine-0']", out
    assert out.get((1, "scratch")) == "scratch ['mine-1']", out
    assert not (project.parent / "data").exists()  # the links are in the nodes' folders


def test_an_absolute_mount_is_a_link_for_the_jobs_life(backend, project, tmp_path):
    mount = tmp_path / "mnt" / "data"
    mount.parent.mkdir()
    options = {"volumes": [f"pvc:data:{mount}={tmp_path / 'datasets'}", "emptydir:scratch"],
               "parameters": {"data": str(mount)}}  # fmt: skip
    name = submit(backend, project, options).name
    info = backend.wait(name, timeout=120, interval=0.1)
    assert info.status is Status.COMPLETE, info.reason
    assert texts(backend, name)[(0, "read")] == "read a,b"
    assert not mount.exists() and not mount.is_symlink()  # removed when the job ended


@pytest.mark.parametrize(
    "options, field, message",
    [
        ({"volumes": ["pvc:data:data"]}, "volume_mounts[0]",
         "PersistentVolumeClaim data at data exists only on a cluster: give the folder that stands "
         "for it here, --volume pvc:data:data=DIR"),
        ({"volumes": ["configmap:conf:conf=missing"]}, "volume_mounts[0]",
         "for ConfigMap conf does not exist"),
        ({"volumes": ["secret:creds:{tmp}/exists=."]}, "volume_mounts[0]",
         "exists cannot stand here (it exists already): mount it relative to the working directory"),
        ({"volumes": ["pvc:d:{tmp}/no/such/place=."]}, "volume_mounts[0]",
         "is not a folder this user can write to"),
        ({"config": {"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}],
                     "volume_mounts": [{"name": "n", "mountPath": "/n"}]}},
         "options.config.volumes[0]", "a nfs volume is not allowed"),  # the one allow-list
        ({"env_from_secrets": ["tokens"]}, "env_from", "exist only on a cluster"),
    ],
)  # fmt: skip
def test_a_volume_that_cannot_be_honoured_here_is_an_error_before_anything_starts(
    backend, project, tmp_path, options, field, message
):
    (tmp_path / "exists").mkdir()
    text = json.dumps(options).replace("{tmp}", str(tmp_path))
    with pytest.raises(ConfigError) as info:
        submit(backend, project, json.loads(text))
    assert info.value.field == field and message in info.value.message
    assert not backend.jobs_dir.exists() or not list(backend.jobs_dir.iterdir())


def test_pod_settings_for_a_cluster_are_named_in_a_warning(backend, project):
    policy = {"run_policy": {"scheduling_policy": {"priority_class": "urgent"}}}
    options = {"service_account": "trainer", "image_pull_secrets": ["reg"], "queue": "team-a",
               "volumes": ["pvc:data:data=../datasets", "emptydir:scratch"], "config": policy}  # fmt: skip
    submitted = submit(backend, project, options)
    assert ("service_account_name, image_pull_secrets: for a cluster's pods; a local run does "
            "without") in submitted.warnings  # fmt: skip
    assert ("queue team-a: Kueue's queues are a cluster's; a local job waits in this machine's "
            "own queue instead") in submitted.warnings  # fmt: skip
    assert ("priority class urgent: Kueue's priorities are a cluster's; local jobs start in the "
            "order they were submitted") in submitted.warnings  # fmt: skip
    backend.wait(submitted.name, timeout=120, interval=0.1)
