"""The models as plain dicts: what the Trainer API's to_dict gives, without importing it."""

import subprocess
import sys
from pathlib import Path

import pytest
from kubeflow_trainer_api.models import IoK8sApiCoreV1EnvVar, TrainerV1alpha1Trainer

from kale_ext.job.plain_models import MODELS, PlainModel, plain


@pytest.mark.parametrize(
    "model, fields",
    [
        ("TrainerV1alpha1Trainer", {"numNodes": 2, "image": None, "command": ["python", "-c"]}),
        ("TrainerV1alpha1Trainer", {"numNodes": 1, "env": None, "resourcesPerNode": None}),
        ("IoK8sApiCoreV1EnvVar", {"name": "A", "value": "1", "valueFrom": None}),
    ],
)
def test_a_plain_model_is_what_the_sdks_model_dumps(model, fields):
    real = {
        "TrainerV1alpha1Trainer": TrainerV1alpha1Trainer,
        "IoK8sApiCoreV1EnvVar": IoK8sApiCoreV1EnvVar,
    }
    assert getattr(MODELS, model)(**fields).to_dict() == real[model](**fields).to_dict()


def test_nested_values_lose_their_none_fields():
    env = PlainModel.from_dict(
        {"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": None}}}
    )
    assert PlainModel(trainer=PlainModel(env=[env], image=None)).to_dict() == {
        "trainer": {
            "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
        }
    }
    assert plain(("a", None, {"b": None})) == ["a", None, {}]
    with pytest.raises(AttributeError):
        MODELS._private  # noqa: B018


def test_a_trainjob_is_built_without_importing_the_models():
    """What makes `compile --trainjob` cost little more than `compile`."""
    code = (
        "import sys\n"
        "from kale_ext.compile.compiler import compile_notebook\n"
        "from kale_ext.job.spec import build_job_spec\n"
        "from kale_ext.job.trainjob import trainjob_dict\n"
        "from tests.conftest import notebook\n"
        "obj = trainjob_dict(build_job_spec(compile_notebook(notebook('print(1)')), None, None))\n"
        "assert obj['kind'] == 'TrainJob', obj\n"
        "print(sorted(m for m in sys.modules if m.startswith('kubeflow_trainer_api.models')))\n"
    )
    root = Path(__file__).parents[2]  # where `tests` imports from
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert (out.returncode, out.stdout) == (0, "[]\n"), out.stderr
