"""Small file helpers every stage uses: atomic writes, and where kale_ext keeps its data."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def umask() -> int:
    """The process's umask (read where the system shows it; else set and put back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all at once: readers never see a half-written file. The file
    gets the mode any new file gets (0666 less the umask), not the temporary file's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            os.fchmod(f.fileno(), 0o666 & ~umask())
            f.flush()
            os.fsync(f.fileno())  # on disk before it takes the name: a crash leaves old or new
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: The file that marks a folder as the local backend's jobs folder: a workspace that holds it
#: leaves it out (its records, logs and snapshots are no job's files).
JOBS_MARK = ".kale_ext-jobs"


def mark_jobs_dir(folder: Path) -> None:
    """Mark ``folder`` (that exists) as a jobs folder, once; a folder that cannot be written is
    left as it is."""
    mark = folder / JOBS_MARK
    if not mark.exists():
        try:
            mark.write_text("kale_ext's local jobs: never shipped in a workspace\n")
        except OSError:
            pass


def jobs_dir() -> Path:
    """The local backend's jobs: KALE_EXT_JOBS_DIR, else <jupyter data dir>/kale_ext/jobs."""
    if os.environ.get("KALE_EXT_JOBS_DIR"):
        return Path(os.environ["KALE_EXT_JOBS_DIR"])
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "kale_ext" / "jobs"
