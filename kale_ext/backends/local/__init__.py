"""The embedded backend: each node a local process group running the TrainJob's own command
with the Trainer's PET_* environment (an MPI runtime's ranks under one mpirun), watched by a
supervisor process.

``LocalBackend`` is imported on first use, not here: the supervisor runs as
``python -m kale_ext.backends.local.supervisor``, and a package that imported it beforehand
(through the backend) would make runpy warn that the module ran twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import LocalBackend

__all__ = ["LocalBackend"]


def __getattr__(name: str) -> Any:
    if name == "LocalBackend":
        from .backend import LocalBackend

        return LocalBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
