"""A local job's volumes: each mount becomes a symbolic link to the folder that stands for its
volume, made before the nodes start and removed when the job ends.

- a PersistentVolumeClaim, Secret or ConfigMap: the local folder given for it
  (`--volume pvc:NAME:/mount=LOCAL_DIR`), shared by the nodes; none given is an error;
- an emptyDir: a scratch folder in the job's folder, one per node (as a pod gets its own);
- a relative mount path: in each node's working directory; an absolute one: a link at that
  path, made at submit and shared by the jobs that mount the same folder there (links.py: a
  path that exists otherwise, or stands for another job's folder, is an error that says to
  mount relatively, which works on a cluster too).

Everything is checked in :func:`plan_mounts`, before anything starts. Pod settings a local run
has no use for (service account, pull secrets, ...) are named in a warning, never dropped
silently.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...errors import ConfigError
from ...job.definition import priority_class_of, queue_of
from ...job.k8s_values import quantity_value
from ...job.spec import JobSpec
from .links import release

EMPTY_DIRS = "volumes"  # in the job's folder: the emptyDirs' scratch folders, `<i>-node-<k>`
_KINDS = {"persistent_volume_claim": ("PersistentVolumeClaim", "claim_name", "pvc"),
          "secret": ("Secret", "secret_name", "secret"),
          "config_map": ("ConfigMap", "name", "configmap")}  # fmt: skip


def _source(volume) -> tuple[str, str, str] | None:
    """(kind, name, short form's kind) of a volume a local folder can stand for."""
    for attr, (kind, name_attr, short) in _KINDS.items():
        source = getattr(volume, attr)
        if source is not None:
            return kind, getattr(source, name_attr), short
    return None


def plan_mounts(spec: JobSpec) -> list[dict]:
    """How each of the job's mounts is made here: {path, source (None: a scratch folder),
    per_node}; ConfigError (naming the mount) for one that cannot be."""
    volumes = {v.name: v for v in spec.config.volumes}
    base = spec.folder or Path.cwd()
    out = []
    for i, m in enumerate(spec.config.volume_mounts):
        where, volume = f"volume_mounts[{i}]", volumes[m.name]
        absolute = m.mount_path.startswith("/")
        if volume.empty_dir is not None:
            source = None
        else:
            found = _source(volume)
            if found is None:
                stands = "a local run stands in for a PVC, Secret, ConfigMap or emptyDir"
                raise ConfigError(where, f"volume {m.name!r} exists only on a cluster ({stands})")
            kind, name, short = found
            local = spec.local_folders.get(m.name)
            if local is None:
                raise ConfigError(
                    where,
                    f"{kind} {name} at {m.mount_path} exists only on a cluster: give the folder "
                    f"that stands for it here, --volume {short}:{name}:{m.mount_path}=DIR",
                )
            folder = (base / Path(local).expanduser()).resolve()
            if not folder.is_dir():
                raise ConfigError(where, f"the local folder {folder} for {kind} {name} does "
                                  "not exist")  # fmt: skip
            source = str(folder)
        out.append({"path": m.mount_path, "source": source, "per_node": not absolute})
    return out


def local_warnings(spec: JobSpec) -> list[str]:
    """What a local run does without: pod settings for a cluster; a /dev/shm smaller than
    shm_size (the machine's own is used)."""
    out = []
    wanted = spec.config.shm_size
    if wanted is not None and os.path.isdir("/dev/shm"):
        stat = os.statvfs("/dev/shm")
        have = stat.f_blocks * stat.f_frsize
        if have < quantity_value(wanted):
            out.append(f"shm_size: this machine's /dev/shm holds {have >> 20} MiB, less than "
                       f"{wanted}")  # fmt: skip
    c = spec.config
    settings = {"service_account_name": c.service_account_name, "node_selector": c.node_selector,
                "image_pull_secrets": c.image_pull_secrets, "tolerations": c.tolerations,
                "security_context": c.security_context, "affinity": c.affinity}  # fmt: skip
    named = [name for name, value in settings.items() if value]
    if named:
        out.append(f"{', '.join(named)}: for a cluster's pods; a local run does without")
    if queue := queue_of(c):
        out.append(f"queue {queue}: Kueue's queues are a cluster's; a local job waits in this "
                   "machine's own queue instead")  # fmt: skip
    if priority := priority_class_of(c):
        out.append(f"priority class {priority}: Kueue's priorities are a cluster's; local jobs "
                   "start in the order they were submitted")  # fmt: skip
    return out


def make_mounts(job_dir: Path, mounts: list[dict], node: int, workdir: Path) -> None:
    """The links of one node's relative mounts, in its working directory (the absolute ones are
    made at submit: links.claim)."""
    for i, m in enumerate(mounts):
        if not m["per_node"]:
            continue
        source = m["source"]
        if source is None:  # an emptyDir: a scratch folder (per node, as per pod)
            source = job_dir / EMPTY_DIRS / f"{i}-node-{node}"
            source.mkdir(parents=True, exist_ok=True)
        link = workdir / m["path"]
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink():  # made by the job's last attempt (restarts.py)
            link.unlink()
        link.symlink_to(source, target_is_directory=True)


def free_mounts(job_dir: Path) -> None:
    """The job's hold on its absolute mounts (the last job holding one removes its link), and
    its scratch folders."""
    release(job_dir.parent, job_dir.name)
    shutil.rmtree(job_dir / EMPTY_DIRS, ignore_errors=True)
