"""The Trainer API's models (``kubeflow_trainer_api.models``) as plain dicts, for building a
TrainJob from a JobSpec that is already valid.

Importing ``kubeflow_trainer_api.models`` builds all of its 387 pydantic models: ~2 s here, 3x
the cost of compiling a notebook, paid by every ``compile --trainjob``, ``--dry-run`` and
preview. A JobSpec's values are validated as it is built (job/spec.py, job/distributed.py), so
the TrainJob builder names the models as it would the SDK's (``m.TrainerV1alpha1Trainer(
numNodes=2, ...)``, ``m.IoK8sApiCoreV1EnvVar.from_dict(...)``) and gets what their ``to_dict``
would give: camelCase fields, None left out. tests/job/test_trainjob.py reads every TrainJob it
builds back through the real models and requires the same dict.
"""

from __future__ import annotations

from typing import Any


class PlainModel(dict):
    """One object: its fields that are set (None left out, as the models' to_dict does)."""

    def __init__(self, **fields: Any):
        super().__init__((k, v) for k, v in fields.items() if v is not None)

    @classmethod
    def from_dict(cls, obj: dict) -> PlainModel:
        return cls(**obj)

    def to_dict(self) -> dict:
        return plain(self)


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dicts without None fields, lists and scalars as they are."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class PlainModels:
    """Stands for the models module: any model's name gives :class:`PlainModel`."""

    def __getattr__(self, name: str) -> type[PlainModel]:
        if name.startswith("_"):
            raise AttributeError(name)
        return PlainModel


MODELS = PlainModels()
