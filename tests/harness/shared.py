"""Where the shared reference files are: ``../shared`` beside the checkout (always there in CI,
absent on a new user's clone), or wherever KALE_EXT_SHARED_DIR points."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import ROOT

ENV = "KALE_EXT_SHARED_DIR"


def shared_dir() -> Path:
    """The shared folder (which may not exist)."""
    return Path(os.environ.get(ENV) or ROOT.parent / "shared")


def trainer_dir() -> Path | None:
    """The official Kubeflow Trainer v2.3.0 CRDs and runtimes, or None when they are absent."""
    path = shared_dir() / "kubeflow-trainer"
    return path if (path / "crds").is_dir() else None
