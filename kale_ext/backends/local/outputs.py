"""A local job's outputs: each node writes into its own folder (``KALE_EXT_OUTPUT_DIR``) in the
job's folder while it runs; when the job ends they are gathered into ``outputs/<job>/`` beside
the notebook, flat when the nodes wrote different names, one sub-folder per node (``node-0/``,
...) when two nodes wrote the same name. Gathered outputs outlive the job's record:
``delete`` keeps them unless asked, and notes where (``outputs NAME`` lists and copies them
after the job is gone).

A link a job wrote that leads out of its outputs folder is not gathered: Jupyter's contents API
serves any link under the server root whatever it points at (it checks a path's text, not a
link's target), so `pw -> /etc/passwd` in gathered outputs would serve /etc/passwd. Such links
are noted in LINKS instead, and listed as the links they were."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from ...compile.resultsave import FOLDER as RESULT
from ...errors import NotFound
from ...files import MAX_RECORD_BYTES, read_json, read_text, write_atomic
from ..base import JobOutputs, OutputFile

STAGING = "outputs"  # in the job's folder: a folder per node while the job runs
KEPT = ".kept-outputs"  # in the jobs' folder: where each deleted job's outputs stayed
LINKS = ".kale-ext-links.json"  # in gathered outputs: the links left out, {path: target}


def final_folder(folder: Path | None, jobs_dir: Path, name: str) -> Path:
    """Where a job's outputs last: outputs/<job>/ beside the notebook, else (a notebook without
    a file) in the outputs folder beside the jobs' folder."""
    base = folder / "outputs" if folder is not None else jobs_dir.parent / "outputs"
    return base / name


def staging(job_dir: Path, node: int) -> Path:
    path = job_dir / STAGING / f"node-{node}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _files(folder: Path) -> list[str]:
    """Relative paths of the files and links (to files or folders: never followed) under
    ``folder``, sorted."""
    out = []
    for dirpath, dirs, names in os.walk(folder):
        links = [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]
        out += [os.path.relpath(os.path.join(dirpath, n), folder) for n in names + links]
    return sorted(p for p in out if p != LINKS)


def _leave_out_links(final: Path) -> None:
    """Remove the links in ``final`` that lead out of it (through any chain of links) and note
    them in its LINKS file (see the module's docstring)."""
    inside = os.path.realpath(final)
    out = {}
    for rel in _files(final):
        path = final / rel
        target = os.path.realpath(path)
        if os.path.islink(path) and os.path.commonpath([inside, target]) != inside:
            out[rel] = os.readlink(path)
    for rel in out:  # resolved first, removed after: a link to a link out is out too
        os.unlink(final / rel)
    if out:
        write_atomic(final / LINKS, json.dumps({**_left_out(final), **out}, sort_keys=True))


def _left_out(folder: Path) -> dict[str, str]:
    """The links left out of gathered outputs, {relative path: target as written}."""
    try:
        noted = read_json(folder / LINKS, MAX_RECORD_BYTES)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in noted.items() if isinstance(v, str)} if isinstance(noted, dict) else {}


def gather(job_dir: Path, final: Path) -> int:
    """Move the nodes' outputs into ``final`` (see the module's docstring); return how many
    files it moved. What is there already (an earlier gathering) is kept."""
    root = job_dir / STAGING
    nodes = sorted(p for p in root.glob("node-*") if p.is_dir()) if root.is_dir() else []
    # the value a function returned is rank 0's alone (node-0's folder): another node's RESULT
    # folder (the job's own code wrote it) would pass for it when rank 0 returned nothing
    written = {
        node: [r for r in _files(node) if node.name == "node-0" or RESULT not in r.split(os.sep)]
        for node in nodes
    }
    names = [n for files in written.values() for n in files]
    per_node = len(names) != len(set(names))
    moved = 0
    for node, files in written.items():
        for rel in files:
            target = final / (node.name if per_node else "") / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(node / rel), str(target))
            moved += 1
    shutil.rmtree(root, ignore_errors=True)
    if final.is_dir():
        _leave_out_links(final)
    return moved


def _listed(folder: Path | None) -> list[OutputFile]:
    """The job's own files: the value its function returned (results.py reads it) is left out."""
    files = []
    if folder is not None and folder.is_dir():
        for rel in _files(folder):
            if RESULT in rel.split(os.sep):
                continue
            try:  # the entry itself: a link a job wrote is listed as one, never followed
                info = (folder / rel).lstat()
                link = os.readlink(folder / rel) if stat.S_ISLNK(info.st_mode) else None
            except OSError:
                continue
            size = 0 if link is not None else info.st_size
            files.append(OutputFile(rel.replace(os.sep, "/"), size, link))
        files += [OutputFile(rel, 0, target) for rel, target in _left_out(folder).items()]
    return sorted(files, key=lambda f: f.path)


def listing(record: dict, job_dir: Path) -> JobOutputs:
    """A job's outputs: gathered, or (while it runs) the nodes' own folders."""
    final = Path(record["outputs"]) if record.get("outputs") else None
    running = (job_dir / STAGING).is_dir()
    files = _listed(job_dir / STAGING if running else final)
    note = f"the nodes' outputs, gathered into {final} when the job ends" if running else None
    return JobOutputs(str(final) if final else "", files, note)


def keep_note(jobs_dir: Path, name: str, final: Path | None) -> None:
    """Note where a job that is being deleted leaves its outputs (`outputs NAME` still finds
    them), or (None) that it left none: a file per job in the jobs' folder, under a name no job
    can have."""
    note = jobs_dir / KEPT / name
    if final is None:
        note.unlink(missing_ok=True)
    else:
        write_atomic(note, str(final))


def kept(jobs_dir: Path, name: str) -> JobOutputs:
    """The outputs a deleted job left, when they are still there (else NotFound)."""
    try:
        if not name or "/" in name or name.startswith("."):
            raise OSError
        final = Path(read_text(jobs_dir / KEPT / name, 64 * 1024).strip())
        if not final.is_dir():
            raise OSError
    except OSError:
        raise NotFound(f"no local job named {name!r}") from None
    return JobOutputs(str(final), _listed(final))
