"""Shared helpers: build notebooks in memory, the way a user's file would look."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import settings

from tests.markers import mark_slow, skip_collecting
from tests.order import longest_first, measured

pytest_plugins = ["tests.cputime"]  # pytest --cpu-durations=N

ROOT = Path(__file__).resolve().parent.parent

# Property tests draw the same examples every run (a red run is a defect every run shows, not
# one some runs find); KALE_EXT_PROPERTY_EXAMPLES, a deeper search, draws new ones each time.
settings.register_profile(
    "kale_ext", derandomize="KALE_EXT_PROPERTY_EXAMPLES" not in os.environ, database=None
)
settings.load_profile("kale_ext")
EXAMPLES = ROOT / "examples"


def notebook(*cells, nbformat: int = 4) -> dict:
    """A notebook dict. Each cell is a source string, or (source, tags), or ("md", text)."""
    out = []
    for i, c in enumerate(cells):
        if isinstance(c, tuple) and c[0] == "md":
            out.append({"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": c[1]})
            continue
        source, tags = (c, []) if isinstance(c, str) else c
        out.append(
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {"tags": list(tags)},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
        )
    return {
        "nbformat": nbformat,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "cells": out,
    }


@pytest.fixture
def write_nb(tmp_path):
    """Write a notebook dict (or raw bytes) to a file and return its path."""

    def write(content, name: str = "nb.ipynb") -> Path:
        path = tmp_path / name
        if isinstance(content, (bytes, str)):
            path.write_bytes(content.encode() if isinstance(content, str) else content)
        else:
            path.write_text(json.dumps(content))
        return path

    return write


def own_jupyter_settings(monkeypatch: pytest.MonkeyPatch, base: Path) -> None:
    """Jupyter's config, data and JupyterLab settings folders and the packing cache, all
    under ``base`` and empty: nothing from the machine's."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(base / "lab"))
    monkeypatch.setenv("KALE_EXT_CACHE_DIR", str(base / "cache"))  # packed workspaces


@pytest.fixture(autouse=True)
def _own_jupyter_settings(tmp_path_factory, monkeypatch):
    """Defaults (kale_ext.defaults) come from this test's own, empty Jupyter config and
    JupyterLab settings, never from the machine's; a job's default jobs folder (in the Jupyter
    data folder) is the test's own too, so tests running side by side (pytest -n) never meet.
    A module's fixture that submits jobs before it calls own_jupyter_settings itself."""
    own_jupyter_settings(monkeypatch, tmp_path_factory.mktemp("jupyter-settings"))


def pytest_collection_modifyitems(config, items):
    mark_slow(items)
    longest_first(items, measured())  # after the fixtures' own grouping (pytest's runs first)


def pytest_ignore_collect(collection_path, config):
    return True if skip_collecting(collection_path, config) else None


#: The one line a healthy node may end with (issue 29: folded into at most one line): node 0's
#: torchrun agent left the exit barrier before this node's agent saw it (a race inside torch's
#: elastic agent, in about 1 of 12 two-node runs here, more under load).
EXIT_BARRIER_LINE = re.compile(r"torchrun: node \d+ could not wait for the other nodes at exit ")


def without_exit_barrier(texts) -> list[str]:
    """A node's lines as the job printed them: the exit barrier's one line left out."""
    return [t for t in texts if not EXIT_BARRIER_LINE.match(t)]
