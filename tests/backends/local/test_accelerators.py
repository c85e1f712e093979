"""Accelerators a local run cannot honour are refused the same way for every kind
(kale_ext/backends/local/accelerators.py): only NVIDIA GPUs, where nvidia-smi finds some."""

from __future__ import annotations

import pytest

from kale_ext.backends.local import accelerators
from kale_ext.errors import ConfigError

SAID = "per node, and this machine has no {kind}: ask for {none}, allow CPU for local runs, or run on Kubernetes"  # fmt: skip


@pytest.fixture
def no_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.fixture
def nvidia(monkeypatch, tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.mark.parametrize(
    "name, field, kind, none",
    [
        ("nvidia.com/gpu", "gpu", "GPU", "0 GPUs"),
        ("nvidia.com/mig-1g.5gb", "gpu", "GPU", "0 GPUs"),
        ("google.com/tpu", "limits.google.com/tpu", "google.com/tpu", "no google.com/tpu"),
        ("amd.com/gpu", "limits.amd.com/gpu", "amd.com/gpu", "no amd.com/gpu"),
        ("habana.ai/gaudi", "limits.habana.ai/gaudi", "habana.ai/gaudi", "no habana.ai/gaudi"),
    ],
)
def test_every_kind_is_refused_alike_without_it(no_gpu, name, field, kind, none):
    with pytest.raises(ConfigError) as refused:
        accelerators.check({}, {name: "4"}, allow_cpu=False)
    assert refused.value.field == field
    assert refused.value.message == f"the job asks for 4 {name} " + SAID.format(
        kind=kind, none=none
    )
    # the suggestion "allow CPU for local runs" works: the job runs with no device visible
    assert accelerators.check({}, {name: "4"}, allow_cpu=True) == {"CUDA_VISIBLE_DEVICES": ""}
    # and so does "ask for 0"
    assert accelerators.check({}, {name: "0"}, allow_cpu=False) == {}


def test_nvidia_gpus_are_honoured_where_there_are_some_and_nothing_else_is(nvidia):
    assert accelerators.check({"nvidia.com/gpu": "1"}, {}, allow_cpu=False) == {}
    with pytest.raises(ConfigError, match="no google.com/tpu: ask for no google.com/tpu"):
        accelerators.check({}, {"nvidia.com/gpu": "1", "google.com/tpu": "4"}, allow_cpu=False)


def test_cpu_memory_and_storage_are_no_accelerators(no_gpu):
    plain = {"cpu": "2", "memory": "4Gi", "ephemeral-storage": "1Gi", "hugepages-2Mi": "1Gi"}
    assert accelerators.asked(plain, plain) == {}
    assert accelerators.check(plain, plain, allow_cpu=False) == {}
