"""A local job's absolute mounts (``--volume pvc:datasets:/data=./datasets``): one symbolic link
at that path on the machine, shared by every job that mounts the same folder there.

The link is reference-counted. Which jobs hold which path is kept in the jobs folder (a small
ledger, ``.mounts.json``, gone when no job holds a path), changed only under an exclusive
``flock`` of the jobs folder, as the local queue's line is (the CLI, the Jupyter server, the
magics and every supervisor may change it at once):

- ``claim`` (at submit, before the job's supervisor starts) adds the job to each of its paths:
  a path no job holds must not exist yet (then the link is made), a path held for the same
  folder is shared, a path held for another folder is refused naming both folders and the job
  that holds it. The submitting process owns the claim until ``hand_over`` names the
  supervisor;
- ``release`` (the job ended, was deleted, or its supervisor was found gone) drops the job; the
  last job holding a path removes its link (only while the link still points where it was made);
- every claim first drops the holders that no longer run (a killed supervisor: checked by start
  time, not pid alone), so what a crash left on the machine is removed at the next start.

Why links and not the alternatives: a per-job mount namespace (``unshare -Urm``, which works as
non-root on this kernel) cannot mount at a path that does not exist (``/data``) without pivoting
into a new root, is refused under Docker's default seccomp profile and Ubuntu's AppArmor
restriction of unprivileged user namespaces, runs the job as a mapped root, and exists only on
Linux. Rewriting the path into the job's own tree breaks every notebook that opens
``/data/x.csv`` itself. A shared link works wherever a link does, the job sees the very path it
asked for, and the one thing it cannot do (two folders at one path) is refused before the second
job starts.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import ConfigError
from .ledger import locked_json
from .processes import runs, start_time

LEDGER = ".mounts.json"


def _ledger(jobs_dir: Path):
    """{path: {"source": folder, "jobs": {name: [pid, started]}}}, read and written back under
    the jobs folder's lock."""
    return locked_json(jobs_dir, LEDGER, fresh=dict, empty=lambda data: not data)


def _unlink(path: str, source: str) -> None:
    """Remove the link at ``path`` if it is still the one made for ``source``."""
    if os.path.islink(path) and os.readlink(path) == source:
        os.unlink(path)


def _drop(data: dict, path: str) -> None:
    """Forget ``path`` once no job holds it, and remove its link."""
    if not data[path]["jobs"]:
        _unlink(path, data[path]["source"])
        del data[path]


def _prune(data: dict) -> None:
    """Drop the holders that no longer run (a killed supervisor or submitter)."""
    for path, entry in list(data.items()):
        for name, owner in list(entry["jobs"].items()):
            if not runs(*owner):
                del entry["jobs"][name]
        _drop(data, path)


def targets(job_dir: Path, mounts: list[dict]) -> list[tuple[int, str, str]]:
    """(index, path, folder it stands for) of each absolute mount of the job: an emptyDir's is a
    scratch folder in the job's folder."""
    out = []
    for i, m in enumerate(mounts):
        if not m["per_node"]:
            out.append((i, m["path"], m["source"] or str(job_dir.resolve() / "volumes" / str(i))))
    return out


def _refusal(path: str, why: str) -> str:
    return (
        f"{path} cannot stand here ({why}): mount it relative to the working directory (data "
        "rather than /data), which works on a cluster too"
    )


def claim(job_dir: Path, mounts: list[dict]) -> None:
    """Hold each absolute mount of the job in ``job_dir`` (made, or shared with the jobs that
    mount the same folder there); ConfigError naming the mount if one cannot be, and then the
    job holds none. Every call first removes what jobs that no longer run left behind."""
    name, me = job_dir.name, [os.getpid(), start_time(os.getpid())]
    with _ledger(job_dir.parent) as data:
        _prune(data)
        made: list[str] = []
        try:
            for i, path, source in targets(job_dir, mounts):
                _hold(data, name, me, f"volume_mounts[{i}]", path, source, made)
        except BaseException:
            for path in made:
                data[path]["jobs"].pop(name, None)
                _drop(data, path)
            raise


def _hold(data: dict, name: str, me: list, where: str, path: str, source: str, made: list) -> None:
    entry = data.get(path)
    if entry is not None and entry["source"] != source:
        held = sorted(entry["jobs"])
        holders = (
            f"job {held[0]}, which has" if len(held) == 1 else f"jobs {', '.join(held)}, which have"
        )
        raise ConfigError(
            where,
            f"{path} is {entry['source']} for the {holders} not ended, and this job mounts "
            f"{source} there: one path cannot stand for two folders; mount it elsewhere, or "
            "wait for that job to end",
        )
    if entry is None:
        target = Path(path)
        if os.path.lexists(target):
            raise ConfigError(where, _refusal(path, "it exists already"))
        if not target.parent.is_dir() or not os.access(target.parent, os.W_OK):
            raise ConfigError(
                where, _refusal(path, f"{target.parent} is not a folder this user can write to")
            )
        entry = data[path] = {"source": source, "jobs": {}}
    Path(source).mkdir(parents=True, exist_ok=True)  # an emptyDir's scratch folder
    entry["jobs"][name] = me
    made.append(path)
    if not os.path.lexists(path):  # a new path, or its link was removed meanwhile
        try:
            os.symlink(source, path, target_is_directory=True)
        except OSError as e:
            raise ConfigError(where, _refusal(path, e.strerror or str(e))) from None


def hand_over(jobs_dir: Path, name: str, pid: int, started: str | None) -> None:
    """The job's supervisor holds its mounts from now on."""
    with _ledger(jobs_dir) as data:
        for entry in data.values():
            if name in entry["jobs"]:
                entry["jobs"][name] = [pid, started]


def release(jobs_dir: Path, name: str) -> None:
    """The job holds no path any more; a path no other job holds loses its link."""
    if not (jobs_dir / LEDGER).exists():
        return
    with _ledger(jobs_dir) as data:
        for path in list(data):
            if data[path]["jobs"].pop(name, None) is not None:
                _drop(data, path)
