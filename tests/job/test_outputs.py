"""Outputs on a cluster: `--outputs pvc:NAME[:/mount]`, its volume in the one runtime patch, the
folder every node gets in KALE_EXT_OUTPUT_DIR, and where the TrainJob says they are."""

from __future__ import annotations

import json

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.outputs import OutputsVolume, parse_outputs
from kale_ext.job.preview import render
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import OUTPUTS, training_command, trainjob_dict
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob

NB = notebook("import os\nprint(os.environ['KALE_EXT_OUTPUT_DIR'])")


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("pvc:results", OutputsVolume("results", "/mnt/outputs")),
        ("pvc:results:/data/out/", OutputsVolume("results", "/data/out")),
        (" pvc:team.results:/o ", OutputsVolume("team.results", "/o")),
    ],
)
def test_the_short_form(text, parsed):
    assert parse_outputs(text) == parsed


@pytest.mark.parametrize(
    "text, message",
    [
        ("results", "is not pvc:NAME or pvc:NAME:/mount"),
        ("secret:results", "is not pvc:NAME"),
        ("pvc:Results", "'Results' is not a PersistentVolumeClaim name"),
        ("pvc:r:relative", "is not pvc:NAME"),
        ("pvc:r:/", "'/' is not a folder to mount a volume at"),
        ("pvc:r:/a/../b", "is not a folder to mount a volume at"),
    ],
)
def test_a_bad_short_form_names_the_field(text, message):
    with pytest.raises(ConfigError) as info:
        parse_outputs(text)
    assert info.value.field == "outputs" and message in info.value.message


def test_the_trainjob_mounts_the_claim_and_says_where_the_outputs_last():
    spec = build_job_spec(compile_notebook(NB), {"name": "fit", "outputs": "pvc:results"})
    tj = trainjob_dict(spec)
    validate_trainjob(tj)
    [patch] = tj["spec"]["runtimePatches"]
    pod = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]
    pod = pod["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "kale-ext-outputs", "persistentVolumeClaim": {"claimName": "results"}}
    ]
    assert pod["containers"] == [
        {
            "name": "node",
            "volumeMounts": [{"name": "kale-ext-outputs", "mountPath": "/mnt/outputs"}],
        }
    ]
    assert tj["metadata"]["annotations"][OUTPUTS] == "pvc:results:/mnt/outputs/fit"
    plan = json.loads(training_command(spec)[3])
    assert plan["outputs"] == "/mnt/outputs/fit"
    assert "outputs    pvc:results:/mnt/outputs/fit on a cluster" in "\n".join(
        render(spec).summary()
    )


def test_without_a_volume_the_preview_says_where_outputs_go():
    spec = build_job_spec(compile_notebook(NB), {"name": "fit"})
    assert json.loads(training_command(spec)[3])["outputs"] is None
    assert OUTPUTS not in trainjob_dict(spec)["metadata"]["annotations"]
    summary = "\n".join(render(spec).summary())
    assert "locally outputs/fit/ beside the notebook; on a cluster they go with the pods" in summary
