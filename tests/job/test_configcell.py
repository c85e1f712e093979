import pytest

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import CompileError
from kale_ext.job.configcell import config_of
from tests.conftest import notebook


def config_with(cell: str):
    return config_of(compile_notebook(notebook((cell, ["distributed"]), "print('train')")))


@pytest.mark.parametrize(
    "cell",
    [
        "from kale_ext.distributed import DistributedConfig, V1EnvVar\n"
        "config = DistributedConfig(env=[V1EnvVar(name='A', value='1')], limits={'cpu': 2})",
        "from kale.distributed import DistributedConfig\n"  # a Kale notebook
        "config = DistributedConfig(labels={'team': 'ml'}, limits={'cpu': '2'})",
        "from kubernetes import client\nfrom kale_ext.distributed import DistributedConfig\n"
        "env = [client.V1EnvVar(name='A', value='1')]\n"
        "DistributedConfig(env=env, limits={'cpu': 2})",
        "import kubernetes.client as k8s\nimport kale_ext.distributed as kd\n"
        "config = kd.DistributedConfig(env=[k8s.V1EnvVar(name='A', value='1')], limits={'cpu': 2.0})",
    ],
)
def test_distributed_cell_is_read_without_running_it(cell):
    config = config_with(cell)
    assert config is not None
    assert config.limits.get("cpu") in ("2", "2.0")


def test_config_is_read_as_data():
    config = config_with(
        "from kale_ext.distributed import DistributedConfig, V1RunPolicy\n"
        "config = DistributedConfig(run_policy=V1RunPolicy(suspend=True), node_selector={'a': 'b'})"
    )
    assert config.to_dict() == {"node_selector": {"a": "b"}, "run_policy": {"suspend": True}}


def test_no_distributed_cell_no_config():
    assert config_of(compile_notebook(notebook("print('train')"))) is None


@pytest.mark.parametrize(
    "cell, message, line",
    [
        ("import os\nos.system('rm -rf /')", "may import only from", 1),
        (
            "from kale_ext.distributed import DistributedConfig\n__import__('os').system('x')",
            "name `__import__` is not defined",
            2,
        ),  # fmt: skip
        (
            "from kale_ext.distributed import DistributedConfig\nc = DistributedConfig(labels={'a': 'b'}['a'])",
            "cannot be evaluated safely",
            2,
        ),  # fmt: skip
        (
            "from kale_ext.distributed import DistributedConfig\nx = open('/etc/passwd')",
            "name `open` is not defined",
            2,
        ),  # fmt: skip
        (
            "from kale_ext.distributed import DistributedConfig\nfor i in range(3): pass",
            "holds only imports and assignments",
            2,
        ),  # fmt: skip
        (
            "from kale_ext.distributed import DistributedConfig\nc = DistributedConfig(limits={'cpu': '1 0'})",
            "DistributedConfig limits.cpu",
            2,
        ),  # fmt: skip
        (
            "from kale_ext.distributed import DistributedConfig\nc = DistributedConfig(colour='red')",
            "unexpected keyword argument 'colour'",
            2,
        ),  # fmt: skip
        ("from kale_ext.distributed import V1EnvVar\ne = V1EnvVar(value='x')", "name", 2),
        ("x = 1", "defines no DistributedConfig", None),
        ("from kale_ext.distributed import *", "not `*`", 1),
    ],
)
def test_bad_distributed_cells(cell, message, line):
    with pytest.raises(CompileError) as info:
        config_with(cell)
    [d] = info.value.errors
    assert message in d.message and d.cell == 0 and d.line == line, str(d)
