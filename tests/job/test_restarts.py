"""Automatic restarts in the job stage: max_restarts and where it came from, the warning of a job
that saves no checkpoint, and on a cluster the TrainingRuntime of its own that sets the JobSet's
failure policy (a runtime patch cannot: Trainer v2.3.0 refuses failurePolicy in one)."""

from __future__ import annotations

import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.distributed import DistributedConfig
from kale_ext.job.preview import render
from kale_ext.job.restarts import NO_CHECKPOINT, restart_warnings, saves_checkpoints
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook

TRAIN = "print('train')"


def spec_of(*cells, options=None, metadata=None):
    nb = notebook(*cells)
    if metadata is not None:
        nb["metadata"]["kale_ext"] = metadata
    return build_job_spec(compile_notebook(nb), options)


def cell(config: str):
    return (
        f"from kale_ext.distributed import DistributedConfig\nconfig = {config}",
        ["distributed"],
    )


@pytest.mark.parametrize(
    "source, saves",
    [
        ("from kale_ext import checkpoint\ncheckpoint.save({'w': 1}, step=1)", True),
        ("import kale_ext.checkpoint\nkale_ext.checkpoint.save({}, step=2)", True),
        ("from kale_ext.checkpoint import save\nsave({}, step=3)", True),
        ("from kale_ext.checkpoint import save as keep\nkeep({}, step=3)", True),
        ("from kale_ext import checkpoint\nstate = checkpoint.latest()", False),
        ("torch.save(model.state_dict(), 'model.pt')", False),
        ("# checkpoint.save(state) is for later\nprint('no')", False),
        ("checkpoint.save(", True),  # not Python: what the text says
    ],
)
def test_a_checkpoint_save_is_found_in_the_source(source, saves):
    assert saves_checkpoints(source) is saves


def test_only_a_job_with_restarts_and_no_save_is_warned():
    assert restart_warnings(2, "print('x')") == [NO_CHECKPOINT]
    assert restart_warnings(0, "print('x')") == []
    assert restart_warnings(2, "from kale_ext import checkpoint\ncheckpoint.save({})") == []
    assert NO_CHECKPOINT in spec_of(TRAIN, options={"max_restarts": 1}).warnings
    assert NO_CHECKPOINT not in spec_of(TRAIN).warnings


@pytest.mark.parametrize(
    "cells, options, metadata, expect",
    [
        ((TRAIN,), None, None, (0, None)),
        ((TRAIN,), {"max_restarts": 2}, None, (2, "max_restarts")),
        ((cell("DistributedConfig(max_restarts=3)"), TRAIN), None, None,
         (3, "the distributed cell max_restarts")),
        ((cell("DistributedConfig(max_restarts=3)"), TRAIN), {"max_restarts": 0}, None,
         (0, "max_restarts")),  # 0 is a choice: the options win over the cell
        ((cell("DistributedConfig(max_restarts=3)"), TRAIN), None, {"options": {"max_restarts": 4}},
         (4, "metadata.kale_ext.options.max_restarts")),
        ((cell("DistributedConfig(max_restarts=3)"), TRAIN), None, {"config": {"max_restarts": 5}},
         (5, "metadata.kale_ext.config max_restarts")),
        ((TRAIN,), {"config": {"max_restarts": 6}}, {"config": {"max_restarts": 5}},
         (6, "options.config max_restarts")),
    ],
)  # fmt: skip
def test_max_restarts_and_where_it_came_from(cells, options, metadata, expect):
    spec = spec_of(*cells, options=options, metadata=metadata)
    assert (spec.max_restarts, spec.restarts_from) == expect
    shown = [line for line in render(spec).summary() if line.startswith("restarts")]
    if expect[1] is None:
        assert shown == []
    else:
        assert shown == [f"restarts   {_said(expect[0])} ({expect[1]})"]


def _said(most: int) -> str:
    return "none" if not most else f"up to {most} time{'s' if most > 1 else ''} when a node fails"


@pytest.mark.parametrize("value", [-1, 21, "2", True])
def test_max_restarts_is_bounded_in_the_config_as_in_the_options(value):
    with pytest.raises(ConfigError) as info:
        DistributedConfig(max_restarts=value)
    assert info.value.field == "max_restarts"
    with pytest.raises(ConfigError):
        spec_of(TRAIN, options={"max_restarts": value})
    merged = DistributedConfig(max_restarts=2).merged(DistributedConfig(max_restarts=0))
    assert merged.max_restarts == 0 and merged.to_dict() == {"max_restarts": 0}
