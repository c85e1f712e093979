"""The definition of a job that `kale-ext diff` compares (kale_ext/job/definition.py)."""

from __future__ import annotations

import pytest

from kale_ext.checkpoint import KEEP
from kale_ext.compile.compiler import compile_notebook
from kale_ext.job.definition import (
    DEFAULTS,
    definition,
    priority_class_of,
    queue_of,
    with_defaults,
)
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook

NB = notebook(("lr = 0.1\napi_token = 'x'", ["parameters"]), "print(lr, api_token)")


def defined(options: dict | None = None) -> dict:
    return definition(build_job_spec(compile_notebook(NB), options))


@pytest.mark.parametrize(
    "options, field, value",
    [
        ({"max_restarts": 2}, "max_restarts", 2),
        ({"checkpoints": "pvc:ckpt"}, "checkpoints", "pvc:ckpt:/mnt/checkpoints"),
        ({"keep_checkpoints": 5}, "keep_checkpoints", 5),
        ({"queue": "team-a"}, "queue", "team-a"),
        ({"config": {"run_policy": {"scheduling_policy": {"queue": "team-b"}}}}, "queue", "team-b"),
        (
            {"config": {"run_policy": {"scheduling_policy": {"priority_class": "urgent"}}}},
            "priority_class",
            "urgent",
        ),
    ],
)
def test_the_definition_diff_compares_holds_what_shapes_the_run(options, field, value):
    """Two jobs that differ only in how they restart, checkpoint, queue or rank in Kueue are not
    the same job
    to `kale-ext diff` (max_restarts and the priority class once were left out of it)."""
    plain, asked = defined(), defined(options)
    assert asked[field] == value and plain[field] != value
    assert {k: v for k, v in asked.items() if k != field} == {
        k: v for k, v in plain.items() if k != field
    }


def test_the_definition_holds_the_resolved_shape_and_masked_parameters():
    got = defined({"nodes": 2, "parameters": {"lr": 0.5, "api_token": "s3cret"}})
    assert (got["runtime"], got["nodes"], got["parameters"]["lr"]) == ("torch-distributed", 2, 0.5)
    assert "s3cret" not in repr(got)  # a secret-named parameter's value is masked


def test_the_queue_is_the_scheduling_policys_or_none():
    spec = build_job_spec(compile_notebook(NB), {"queue": "team-a"})
    assert queue_of(spec.config) == "team-a"
    assert queue_of(build_job_spec(compile_notebook(NB), {}).config) is None


def test_the_priority_class_is_the_scheduling_policys_or_none():
    policy = {"run_policy": {"scheduling_policy": {"priority_class": "urgent"}}}
    assert priority_class_of(build_job_spec(compile_notebook(NB), {"config": policy}).config) == (
        "urgent"
    )
    assert priority_class_of(build_job_spec(compile_notebook(NB), {}).config) is None


def test_a_definition_lacking_a_key_reads_as_its_default():
    """One recorded before max_restarts, checkpoints, keep_checkpoints and queue joined it."""
    new = defined()
    old = {k: v for k, v in new.items() if k not in DEFAULTS}
    read_old, filled = with_defaults(old)
    assert filled == {"max_restarts", "keep_checkpoints"}  # checkpoints, queue: no default
    assert read_old == {k: v for k, v in with_defaults(new)[0].items() if v is not None or k in old}
    assert (read_old["max_restarts"], read_old["keep_checkpoints"]) == (0, KEEP)
    assert with_defaults(defined({"keep_checkpoints": 5}))[0]["keep_checkpoints"] == 5
