"""Accelerators a job asks for, and whether this machine can honour them: NVIDIA GPUs (a count
or a MIG profile) where nvidia-smi finds some, nothing else (a TPU ``google.com/tpu``, an
``amd.com/gpu``, a ``habana.ai/gaudi``, any extended resource). What it cannot honour is refused
the same way for every kind, from every entry point (the CLI, the REST API, the magics all
submit through LocalBackend.submit), unless CPU is allowed for local runs."""

from __future__ import annotations

import os
import shutil

from ...errors import ConfigError

#: Kubernetes' own resource names: what a pod asks for that is no accelerator (hugepages-<size>
#: too). Every other name (a domain-prefixed extended resource) is one.
PLAIN = frozenset({"cpu", "memory", "ephemeral-storage", "storage", "pods"})


def asked(requests: dict, limits: dict) -> dict[str, str]:
    """The accelerators per node in a config's requests and limits (limits win), none of 0."""
    out = {}
    for name, value in {**requests, **limits}.items():
        if name in PLAIN or name.startswith("hugepages-") or str(value) == "0":
            continue
        out[name] = str(value)
    return out


def is_nvidia_gpu(name: str) -> bool:
    return name == "nvidia.com/gpu" or name.startswith("nvidia.com/mig-")


def nvidia_gpus_here() -> bool:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return shutil.which("nvidia-smi") is not None and visible not in ("", "-1")


def check(requests: dict, limits: dict, allow_cpu: bool) -> dict[str, str]:
    """The environment that runs the job without the accelerators it asks for (CPU allowed),
    else {} when this machine has them all (or none is asked); a ConfigError otherwise."""
    wanted = asked(requests, limits)
    missing = {k: v for k, v in wanted.items() if not (is_nvidia_gpu(k) and nvidia_gpus_here())}
    if not missing:
        return {}
    if allow_cpu:
        return {"CUDA_VISIBLE_DEVICES": ""}
    what = ", ".join(f"{v} {k}" for k, v in missing.items())
    others = [k for k in missing if not is_nvidia_gpu(k)]
    field, kind, none = ("gpu", "GPU", "0 GPUs") if not others else (
        f"limits.{others[0]}", ", ".join(others), f"no {', '.join(others)}")  # fmt: skip
    raise ConfigError(
        field,
        f"the job asks for {what} per node, and this machine has no {kind}: ask for {none}, "
        "allow CPU for local runs, or run on Kubernetes",
    )
