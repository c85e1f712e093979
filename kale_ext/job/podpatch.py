"""The TrainJob's one runtime patch (manager ``kale-ext.io/jupyterlab``): what the training pods
get beyond their runtime's template. Trainer v2.3 allows a patch only on the runtime's own
replicated jobs and containers, so the targets are looked up in the runtime (``Runtime``'s
``trainer_job`` and ``trainer_containers``), never assumed; an MPI runtime's nodes run the
function too, so they get the same (job/mpi.py: ``patched_jobs``).

It carries the pod labels and annotations, node selector, affinity and tolerations, service
account, image pull secrets and security context, and the volumes with their mounts in the
trainer container: the workspace's, the outputs', the checkpoints' claim, a memory-backed /dev/shm,
the user's (a relative mount sits in the working directory, then the fixed ``volumes.WORKDIR``);
and the grace period of a job that saves checkpoints when stopped (job/checkpoints.py).
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from .mpi import patched_jobs
from .spec import JobSpec

MANAGER = "kale-ext.io/jupyterlab"  # a domain-prefixed path, as the Trainer requires
CONTAINER = "node"  # the trainer's container: the one TrainJob.spec.trainer overrides


def pod_parts(spec: JobSpec) -> tuple[dict, dict, list[dict]]:
    """(pod metadata, pod spec, the trainer container's volume mounts) the patch sets."""
    from .checkpoints import stop_grace
    from .k8s_objects import k8s_dict
    from .shipping import mount, volume
    from .volumes import SHM_MOUNT, SHM_VOLUME, WORK_VOLUME, WORKDIR, mount_path

    config = spec.config
    pod_spec: dict[str, Any] = {}
    if config.node_selector:
        pod_spec["nodeSelector"] = dict(config.node_selector)
    if config.affinity is not None:
        pod_spec["affinity"] = k8s_dict(config.affinity)
    if config.tolerations:
        pod_spec["tolerations"] = [k8s_dict(t) for t in config.tolerations]
    volumes, mounts = [], []
    if spec.workspace is not None:
        volumes.append(volume(spec.workspace.packed()))
        mounts.append(mount())
    if spec.outputs is not None:
        volumes.append(spec.outputs.volume())
        mounts.append(spec.outputs.volume_mount())
    if spec.checkpoints is not None and spec.checkpoints.volume is not None:
        volumes.append(spec.checkpoints.volume.volume())
        mounts.append(spec.checkpoints.volume.volume_mount())
    if relative_mounts(spec):  # the working directory is a fixed folder they sit inside
        volumes.append({"name": WORK_VOLUME, "emptyDir": {}})
        mounts.append({"name": WORK_VOLUME, "mountPath": WORKDIR})
    if config.shm_size is not None:
        volumes.append(
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": config.shm_size}}
        )
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_MOUNT})
    volumes += [k8s_dict(v) for v in config.volumes]
    for m in config.volume_mounts:
        mounts.append({**k8s_dict(m), "mountPath": mount_path(m.mount_path)})
    if volumes:
        pod_spec["volumes"] = volumes
    if config.service_account_name:
        pod_spec["serviceAccountName"] = config.service_account_name
    if config.image_pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": n} for n in config.image_pull_secrets]
    if config.security_context is not None:
        pod_spec["securityContext"] = k8s_dict(config.security_context)
    grace = stop_grace(spec)  # a job's on_stop handlers save a checkpoint in it
    if grace is not None:
        pod_spec["terminationGracePeriodSeconds"] = grace
    meta = {k: v for k, v in (("labels", config.labels), ("annotations", config.annotations)) if v}
    return meta, pod_spec, mounts


def relative_mounts(spec: JobSpec) -> bool:
    """Whether a volume mounts relative to the working directory (then fixed on a cluster)."""
    return any(not m.mount_path.startswith("/") for m in spec.config.volume_mounts)


def runtime_patch(spec: JobSpec) -> dict | None:
    """The patch in Kubernetes JSON form, or None when the pods need nothing beyond the
    runtime's template."""
    meta, pod_spec, mounts = pod_parts(spec)
    if mounts:
        if CONTAINER not in spec.runtime.trainer_containers:
            have = ", ".join(spec.runtime.trainer_containers) or "none"
            raise ConfigError(
                "runtime",
                f"{spec.runtime.name}'s trainer job {spec.runtime.trainer_job!r} has no container "
                f"named {CONTAINER!r} (it has {have}), so volumes cannot be mounted in it",
            )
        pod_spec["containers"] = [{"name": CONTAINER, "volumeMounts": mounts}]
    if not (meta or pod_spec):
        return None
    template: dict[str, Any] = {}
    if meta:
        template["metadata"] = meta
    if pod_spec:
        template["spec"] = pod_spec
    jobs = [{"name": name, "template": {"spec": {"template": template}}}
            for name in patched_jobs(spec.runtime)]  # fmt: skip
    return {
        "manager": MANAGER,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}},
    }
