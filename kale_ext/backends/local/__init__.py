"""The embedded backend: each node a local process group running the TrainJob's own command
with the Trainer's PET_* environment, watched by a supervisor process."""

from .backend import LocalBackend

__all__ = ["LocalBackend"]
