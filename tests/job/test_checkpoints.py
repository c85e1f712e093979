"""Where a job's checkpoints live on a cluster (job/checkpoints.py): the TrainJob's env, the
checkpoints' claim, the grace period; nothing for a job that uses none."""

from __future__ import annotations

import pytest

from kale_ext.checkpoint import DIR_ENV, KEEP_ENV, RUN_ENV, STOP_GRACE
from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.checkpoints import (
    IN_POD,
    VOLUME,
    Checkpoints,
    check_cluster,
    cluster_warnings,
    parse_checkpoints,
    summary_text,
)
from kale_ext.job.outputs import OutputsVolume
from kale_ext.job.preview import render
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec
from kale_ext.job.trainjob import trainjob_dict
from tests.conftest import notebook
from tests.harness.crd import validate_trainjob
from tests.harness.runtimes import runtime_manifest

SAVES = notebook(
    "from kale_ext import checkpoint\nstate = checkpoint.latest()\n"
    "checkpoint.save({'epoch': 1}, step=1)"
)
READS_THE_FOLDER = notebook("import os\nprint(os.environ.get('KALE_EXT_CHECKPOINT_DIR'))")
PLAIN = notebook("print('no checkpoints')")


def spec_of(nb, **options):
    runtime = Runtime.from_manifest(runtime_manifest("torch-distributed"))
    return build_job_spec(compile_notebook(nb), {"name": "fit", **options}, runtime)


def env_of(trainjob: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in trainjob["spec"]["trainer"].get("env") or []}


def pod_of(trainjob: dict) -> dict:
    [patch] = trainjob["spec"]["runtimePatches"]
    [job] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return job["template"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("pvc:ckpt", Checkpoints(volume=OutputsVolume("ckpt", "/mnt/checkpoints", VOLUME))),
        ("pvc:ckpt:/data/ck/", Checkpoints(volume=OutputsVolume("ckpt", "/data/ck", VOLUME))),
        (" runs/ckpt ", Checkpoints(folder="runs/ckpt")),
        (None, None),
    ],
)
def test_checkpoints_is_a_claim_or_a_folder(text, parsed):
    assert parse_checkpoints(text) == parsed


@pytest.mark.parametrize("text", ["pvc:", "pvc:Bad_Name", "pvc:ok:/", "a\nb"])
def test_what_is_neither_is_refused_naming_the_option(text):
    with pytest.raises(ConfigError) as e:
        parse_checkpoints(text)
    assert e.value.field == "checkpoints"


def test_a_job_that_uses_no_checkpoints_gets_nothing_of_them():
    trainjob = trainjob_dict(spec_of(PLAIN))
    assert not any(k.startswith("KALE_EXT_CHECKPOINT") for k in env_of(trainjob))
    assert "runtimePatches" not in trainjob["spec"]  # no grace period, no volume


def test_on_the_outputs_volume_per_lineage_with_a_grace_period_to_stop():
    spec = spec_of(SAVES, outputs="pvc:results", keep_checkpoints=5)
    trainjob = trainjob_dict(spec)
    validate_trainjob(trainjob)
    env = env_of(trainjob)
    assert env[DIR_ENV] == "/mnt/outputs/checkpoints/fit" and env[RUN_ENV] == "fit"
    assert env[KEEP_ENV] == "5"
    assert pod_of(trainjob)["terminationGracePeriodSeconds"] == STOP_GRACE
    assert cluster_warnings(spec) == []
    spec.options["lineage"] = "parent"  # a job resumed from another (set by resume)
    assert env_of(trainjob_dict(spec))[DIR_ENV] == "/mnt/outputs/checkpoints/parent"


def test_on_a_claim_of_their_own():
    trainjob = trainjob_dict(spec_of(SAVES, checkpoints="pvc:ckpt:/ck", outputs="pvc:results"))
    validate_trainjob(trainjob)
    assert env_of(trainjob)[DIR_ENV] == "/ck/fit"
    pod = pod_of(trainjob)
    assert {"name": VOLUME, "persistentVolumeClaim": {"claimName": "ckpt"}} in pod["volumes"]
    assert {"name": VOLUME, "mountPath": "/ck"} in pod["containers"][0]["volumeMounts"]


def test_a_notebook_that_reads_the_folder_gets_it_without_importing_kale_ext():
    spec = spec_of(READS_THE_FOLDER)
    assert env_of(trainjob_dict(spec))[DIR_ENV] == f"{IN_POD}/fit"
    assert "go with each pod" in cluster_warnings(spec)[0]  # no volume keeps them
    assert "inside the container" in summary_text(spec)


def test_the_option_alone_gives_a_folder_and_its_claim():
    trainjob = trainjob_dict(spec_of(PLAIN, checkpoints="pvc:ckpt"))
    assert env_of(trainjob)[DIR_ENV] == "/mnt/checkpoints/fit"
    assert "terminationGracePeriodSeconds" not in pod_of(trainjob)  # no on_stop to wait for


def test_a_folder_of_this_machine_is_refused_on_a_cluster_and_said_in_the_preview():
    spec = spec_of(SAVES, checkpoints="ckpt")
    with pytest.raises(ConfigError, match="folder of this machine"):
        check_cluster(spec)
    assert "checkpoints locally ckpt/fit; on a cluster refused" in "\n".join(render(spec).summary())


def test_kale_exts_own_variables_are_not_the_jobs_to_set():
    with pytest.raises(ConfigError, match="give --checkpoints"):
        spec_of(SAVES, env={DIR_ENV: "/elsewhere"})


def test_the_claim_mounts_where_nothing_else_is():
    with pytest.raises(ConfigError, match="where the outputs volume"):
        spec_of(SAVES, checkpoints="pvc:ckpt:/mnt/outputs", outputs="pvc:results")
