"""Volumes as folders, environments and `$(VAR)` expansion as the kubelet makes them, and the
mount shim a pod's Python processes see them through."""

import base64
import json
import os
import subprocess
import sys

import pytest

from tests.harness.cluster.volumes import (
    MOUNTS_ENV,
    SHIM,
    Waiting,
    environment,
    expand,
    materialise,
    mounts,
    nest,
)


class Store:
    """The API server's ``get``, over a few objects."""

    def __init__(self, *objects):
        self.objects = {(o["kind"], o["metadata"]["name"]): o for o in objects}

    def get(self, resource, namespace, name):
        kind = {"v1/configmaps": "ConfigMap", "v1/secrets": "Secret"}[resource]
        return self.objects.get((kind, name))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


STORE = Store(
    {"kind": "ConfigMap", "metadata": {"name": "conf"}, "data": {"a.txt": "A", "b.txt": "B"},
     "binaryData": {"blob": b64("\x00\x01")}},
    {"kind": "Secret", "metadata": {"name": "creds"}, "data": {"token": b64("t0k$n")}},
)  # fmt: skip


def pod(volumes=(), env=(), containers=None) -> dict:
    container = {"name": "node", "env": list(env), "resources": {"limits": {"cpu": "1500m"}}}
    return {"metadata": {"name": "p", "namespace": "team", "annotations": {"i": "1"}},
            "spec": {"volumes": list(volumes), "containers": containers or [container],
                     "nodeName": "n0"}}  # fmt: skip


@pytest.mark.parametrize(
    "text, expected",
    [
        ("$(A)-$(B)", "1-$(B)"),
        ("$$(A) $$HOME $$", "$(A) $HOME $"),
        ("$(command -v pip)", "$(command -v pip)"),
        ("cost $5 $(A", "cost $5 $(A"),
        ("trailing $", "trailing $"),
    ],
)
def test_expansion_follows_kubernetes(text, expected):
    assert expand(text, {"A": "1"}) == expected


def test_volumes_become_folders(tmp_path):
    volumes = [
        {"name": "conf", "configMap": {"name": "conf", "items": [{"key": "a.txt", "path": "x/a"}]}},
        {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
        {"name": "both", "projected": {"sources": [{"configMap": {"name": "conf"}},
                                                   {"secret": {"name": "creds"}}]}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "gone", "configMap": {"name": "missing", "optional": True}},
        {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
    ]  # fmt: skip
    made = materialise(STORE, pod(volumes), tmp_path / "pod", tmp_path / "claims")
    assert (made["conf"] / "x" / "a").read_text() == "A" and not (made["conf"] / "b.txt").exists()
    assert (made["creds"] / "token").read_bytes() == b"t0k$n"
    assert oct((made["creds"] / "token").stat().st_mode & 0o777) == oct(0o400)
    assert sorted(p.name for p in made["both"].iterdir()) == ["a.txt", "b.txt", "blob", "token"]
    assert (made["both"] / "blob").read_bytes() == b"\x00\x01"
    assert list(made["scratch"].iterdir()) == [] and list(made["gone"].iterdir()) == []
    assert made["claim"] == tmp_path / "claims" / "team" / "data"


@pytest.mark.parametrize(
    "volume, said",
    [
        ({"name": "v", "configMap": {"name": "missing"}},
         'MountVolume.SetUp failed for volume "v" : configmap "missing" not found'),
        ({"name": "v", "secret": {"secretName": "creds", "items": [{"key": "nope", "path": "p"}]}},
         'MountVolume.SetUp failed for volume "v" : secret references non-existent config key: nope'),
        ({"name": "v", "hostPath": {"path": "/etc"}},
         'MountVolume.SetUp failed for volume "v" : hostPath volumes are not emulated'),
    ],
)  # fmt: skip
def test_a_volume_that_cannot_be_made_waits(tmp_path, volume, said):
    with pytest.raises(Waiting) as waiting:
        materialise(STORE, pod([volume]), tmp_path, tmp_path)
    assert (waiting.value.reason, waiting.value.message, waiting.value.event) == (
        "ContainerCreating",
        said,
        "FailedMount",
    )


def test_the_environment_resolves_references():
    env = [
        {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['i']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "CPUS", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "conf", "key": "a.txt"}}},
        {"name": "OPT", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k", "optional": True}}},
        {"name": "BOTH", "value": "$(A)/$(RANK)/$(LATER)"},
        {"name": "LATER", "value": "l"},
    ]
    assert environment(STORE, pod(env=env), pod(env=env)["spec"]["containers"][0]) == {
        "RANK": "1", "NODE": "n0", "CPUS": "2", "TOKEN": "t0k$n", "A": "A", "BOTH": "A/1/$(LATER)",
        "LATER": "l",
    }  # fmt: skip


@pytest.mark.parametrize(
    "ref, said",
    [
        ({"secretKeyRef": {"name": "nope", "key": "k"}}, 'secret "nope" not found'),
        (
            {"secretKeyRef": {"name": "creds", "key": "k"}},
            "couldn't find key k in Secret team/creds",
        ),
    ],
)
def test_a_missing_reference_is_a_config_error(ref, said):
    env = [{"name": "X", "valueFrom": ref}]
    with pytest.raises(Waiting) as waiting:
        environment(STORE, pod(env=env), pod(env=env)["spec"]["containers"][0])
    assert (waiting.value.reason, waiting.value.message) == ("CreateContainerConfigError", said)


def test_python_processes_see_the_mounts_at_their_paths(tmp_path):
    folder = tmp_path / "volume"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "f.txt").write_text("inside")
    container = {"volumeMounts": [{"name": "v", "mountPath": "/var/run/emulated/data"}]}
    mounted = mounts(container, {"v": folder})
    script = (
        "import os, pathlib, shutil\n"
        "m = '/var/run/emulated/data'\n"
        "print(open(m + '/sub/f.txt').read(), os.listdir(m), pathlib.Path(m, 'sub').is_dir())\n"
        "pathlib.Path(m, 'new.txt').write_text('written')\n"
        "shutil.copy(m + '/new.txt', 'copied.txt'); print(open('copied.txt').read())\n"
    )
    env = dict(os.environ, PYTHONPATH=str(SHIM), **{MOUNTS_ENV: json.dumps(mounted)})
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, text=True,
                         capture_output=True, check=True)  # fmt: skip
    assert out.stdout.splitlines() == ["inside ['sub'] True", "written"]
    assert (folder / "new.txt").read_text() == "written"


def test_a_mount_inside_another_is_found_by_a_relative_path_too(tmp_path):
    work, conf = tmp_path / "work", tmp_path / "conf"
    work.mkdir()
    conf.mkdir()
    (conf / "lr").write_text("0.1")
    mounted = {"/kale-ext/work": str(work), "/kale-ext/work/conf": str(conf)}
    nest(mounted)
    script = "import os; os.chdir('/kale-ext/work'); print(open('conf/lr').read(), os.listdir('.'))"
    env = dict(os.environ, PYTHONPATH=str(SHIM), **{MOUNTS_ENV: json.dumps(mounted)})
    out = subprocess.run([sys.executable, "-c", script], env=env, text=True, capture_output=True,
                         check=True)  # fmt: skip
    assert out.stdout == "0.1 ['conf']\n"
