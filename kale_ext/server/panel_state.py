"""GET/PUT kale-ext/panel-state?path=NB: the panel's form for one notebook, as the user last saw
it, kept by the server so that reloading the page restores it.

Why on the server and not in the notebook: the panel's choices are also written to the
notebook's metadata, but the notebook is saved only when the user (or autosave) saves it, so a
reload went back to the last save without a word. Saving the notebook on every keystroke would
save the user's unfinished cells too. The server keeps one small file per notebook instead
(`<Jupyter data dir>/kale_ext/panel-state/`), written atomically; the panel shows what it
restored that differs from the notebook on disk (labextension/src/form/restore.ts).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import tornado.web

from ..files import MAX_RECORD_BYTES, read_json
from .base import ApiError, KaleExtHandler
from .paths import resolve_notebook

#: The largest state kept for one notebook (its JSON, in bytes): a 413 beyond it.
MAX_STATE_BYTES = 64 * 1024
#: The most notebooks whose state is kept: past it, the least recently saved is forgotten.
MAX_NOTEBOOKS = 500
SCHEMA = "#/components/schemas/PanelState"


def state_dir() -> Path:
    """Where the states are kept: <Jupyter data dir>/kale_ext/panel-state."""
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "kale_ext" / "panel-state"


def _file_of(notebook: Path) -> Path:
    """The state's file of a notebook (by its resolved path: one notebook, one state)."""
    digest = hashlib.sha256(os.fsencode(notebook)).hexdigest()[:32]
    return state_dir() / f"{digest}.json"


def read_state(root: str, path: str, allow_hidden: bool) -> dict:
    """`{"path", "state", "saved"}`: the state kept for the notebook at ``path`` (state and saved
    null when none is, or when its file cannot be read)."""
    file = _file_of(resolve_notebook(root, path, allow_hidden))
    try:
        record = read_json(file, MAX_RECORD_BYTES, inside=file.parent)
        state, saved = record["state"], record["saved"]
    except (OSError, ValueError, KeyError, TypeError):
        state, saved = None, None
    return {"path": path, "state": state, "saved": saved}


def write_state(root: str, path: str, allow_hidden: bool, state: dict) -> dict:
    """Keep ``state`` for the notebook at ``path`` (atomically), forgetting the least recently
    saved notebooks past :data:`MAX_NOTEBOOKS`; the record as GET answers it."""
    from ..files import write_atomic

    text = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    size = len(text.encode("utf-8"))
    if size > MAX_STATE_BYTES:
        raise ApiError(413, f"the panel state is {size:,} bytes; the limit is "
                       f"{MAX_STATE_BYTES:,} bytes", "TooLarge", field="body")  # fmt: skip
    file = _file_of(resolve_notebook(root, path, allow_hidden))
    saved = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record = {"path": path, "state": state, "saved": saved}
    write_atomic(file, json.dumps(record, ensure_ascii=False), private=True)
    _forget_oldest(file.parent)
    return record


def _forget_oldest(folder: Path) -> None:
    kept = []
    for entry in os.scandir(folder):
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            try:
                kept.append((entry.stat().st_mtime_ns, entry.path))
            except OSError:
                continue  # removed meanwhile
    kept.sort()
    for _, name in kept[: max(0, len(kept) - MAX_NOTEBOOKS)]:
        Path(name).unlink(missing_ok=True)


class PanelStateHandler(KaleExtHandler):
    """The panel's form of one notebook (`path`, under the server root)."""

    params = {"GET": frozenset({"path"}), "PUT": frozenset({"path"})}
    fields = ("version", "form", "sweep")

    def _notebook(self) -> tuple[str, str, bool]:
        path = self.query_arg("path")
        if path is None:
            raise ApiError(400, "give the notebook's path: panel-state?path=dir/nb.ipynb",
                           field="path")  # fmt: skip
        cm = self.contents_manager
        root = getattr(cm, "root_dir", None) or self.serverapp.root_dir
        return root, path, bool(getattr(cm, "allow_hidden", False))

    @tornado.web.authenticated
    async def get(self):
        root, path, hidden = self._notebook()
        self.reply(await self.call(read_state, root, path, hidden))

    @tornado.web.authenticated
    async def put(self):
        from .schema import check

        root, path, hidden = self._notebook()
        body = await self.json_body(self.fields)
        error = check(body, SCHEMA)
        if error is not None:
            raise ApiError(400, str(error), "InvalidBody", field=error.field)
        self.reply(await self.call(write_state, root, path, hidden, body))
