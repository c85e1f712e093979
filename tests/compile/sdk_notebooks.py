"""Kubeflow SDK notebooks as their users write them, one for each shape of train() call: the
notebooks of the parity test (test_sdk_parity.py) and of the train-call tests (test_sdkcall.py).
Each is a list of code cells; every one runs as it is with the real SDK."""

from __future__ import annotations

IMPORTS = (
    "import os\n"
    "from kubeflow.trainer import CustomTrainer, TrainerClient\n"
)  # fmt: skip

TORCH_FN = (
    "def train_torch(model_name, epochs=2):\n"
    "    import os\n"
    "    import torch.distributed as dist\n"
    "    dist.init_process_group('gloo')\n"
    "    print(model_name, epochs, os.environ['TP_SIZE'], dist.get_world_size())\n"
)

#: torch: the runtime from the list_runtimes() loop, settings from earlier cells, a dict updated
#: under an `if`, str() and an f-string, packages and an index.
TORCH = [
    IMPORTS,
    "num_nodes = 2\ntp_size = 2\nuse_big = True\n"
    "resources_per_node = {'cpu': 2, 'memory': '4Gi'}\n"
    "if use_big:\n    resources_per_node.update({'memory': '8Gi'})\n",
    TORCH_FN,
    "client = TrainerClient()\n"
    "for r in client.list_runtimes():\n"
    "    if r.name == 'torch-distributed':\n"
    "        torch_runtime = r\n",
    "job_id = client.train(\n"
    "    runtime=torch_runtime,\n"
    "    trainer=CustomTrainer(\n"
    "        func=train_torch,\n"
    "        func_args={'model_name': f'resnet-{tp_size}', 'epochs': 3},\n"
    "        num_nodes=num_nodes,\n"
    "        resources_per_node=resources_per_node,\n"
    "        env={'TP_SIZE': str(tp_size)},\n"
    "        packages_to_install=['numpy<3'],\n"
    "        pip_index_urls=['https://pypi.org/simple', 'https://download.pytorch.org/whl/cpu'],\n"
    "    ),\n"
    ")\n",
]

XGBOOST_FN = (
    "def train_xgboost():\n"
    "    import os\n"
    "    print('xgboost worker', os.environ.get('DMLC_TASK_ID'))\n"
)
#: xgboost: the runtime by name, through get_runtime().
XGBOOST = [
    IMPORTS,
    XGBOOST_FN,
    "client = TrainerClient()\nruntime = client.get_runtime('xgboost-distributed')\n",
    "client.train(runtime=runtime, trainer=CustomTrainer(func=train_xgboost, num_nodes=2))\n",
]

XGBOOST_PACKAGES_FN = (
    "def train_boosted(rounds=10):\n"
    "    import numpy as np\n"
    "    import xgboost as xgb\n"
    "    print('rounds', rounds, xgb.__version__, np.__version__)\n"
)
#: xgboost with packages_to_install and no pip_index_urls: the SDK's default index; the
#: function's imports (numpy, xgboost) are the image's, never added to the list.
XGBOOST_PACKAGES = [
    IMPORTS,
    XGBOOST_PACKAGES_FN,
    "client = TrainerClient()\n"
    "client.train(runtime='xgboost-distributed', trainer=CustomTrainer(func=train_boosted,\n"
    "    num_nodes=2, packages_to_install=['xgboost', 'scikit-learn>=1.5']))\n",
]

JAX_FN = (
    "def train_jax(steps=10):\n"
    "    import os\n"
    "    print('jax process', os.environ.get('JAX_PROCESS_ID'), steps)\n"
)
#: jax: the runtime's name as a string; resources with a gpu alias.
JAX = [
    IMPORTS,
    JAX_FN,
    "client = TrainerClient()\n"
    "client.train(runtime='jax-distributed', trainer=CustomTrainer(func=train_jax,\n"
    "    num_nodes=2, resources_per_node={'CPU': '1', 'memory': '2Gi'}))\n",
]

CACHE_FN = "def train_cached():\n    print('reading the cache')\n"
#: a data-cache dataset initializer on the runtime that has one.
DATA_CACHE = [
    IMPORTS + "from kubeflow.trainer import DataCacheInitializer, Initializer\n",
    CACHE_FN,
    "table = 'sales'\n"
    "cache = DataCacheInitializer(storage_uri=f'cache://shop/{table}',\n"
    "    metadata_loc='s3://bucket/shop/metadata.json', num_data_nodes=2, head_cpu='1')\n",
    "client = TrainerClient()\n"
    "client.train(runtime='torch-distributed-with-cache', initializer=Initializer(dataset=cache),\n"
    "    trainer=CustomTrainer(func=train_cached, num_nodes=1))\n",
]

PATCH_FN = "def train_patched(lr=0.1):\n    print('lr', lr)\n"
#: options=[RuntimePatch(...), Labels(...), ActiveDeadlineSeconds(...)] and an image.
RUNTIME_PATCH = [
    IMPORTS + "from kubeflow.trainer.options import (ActiveDeadlineSeconds, JobSetSpecPatch,\n"
    "    JobSetTemplatePatch,\n"
    "    JobSpecPatch, JobTemplatePatch, Labels, PodSpecPatch, PodTemplatePatch,\n"
    "    ReplicatedJobPatch, RuntimePatch, TrainingRuntimeSpecPatch)\n",
    PATCH_FN,
    "pool = 'cpu-pool'\n"
    "patch = RuntimePatch(training_runtime_spec=TrainingRuntimeSpecPatch(\n"
    "    template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=[ReplicatedJobPatch(\n"
    "        name='node', template=JobTemplatePatch(spec=JobSpecPatch(template=PodTemplatePatch(\n"
    "            spec=PodSpecPatch(node_selector={'pool': pool})))))]))))\n",
    "client = TrainerClient()\n"
    "client.train(trainer=CustomTrainer(func=train_patched, image='python:3.11-slim',\n"
    "    func_args={'lr': 0.5}),\n"
    "    options=[patch, Labels({'team': 'vision'}), ActiveDeadlineSeconds(3600)])\n",
]

#: two train() calls: a small try, then the real run.
TWO_CALLS = [
    IMPORTS,
    PATCH_FN,
    "client = TrainerClient()\n"
    "client.train(trainer=CustomTrainer(func=train_patched, num_nodes=1, func_args={'lr': 1.0}))\n",
    "client.train(runtime='torch-distributed',\n"
    "    trainer=CustomTrainer(func=train_patched, num_nodes=3, func_args={'lr': 0.01}))\n",
]

#: refused: a name never defined.
MISSING_NAME = [
    IMPORTS,
    PATCH_FN,
    "client = TrainerClient()\n"
    "client.train(trainer=CustomTrainer(func=train_patched,\n"
    "    env={'BUCKET': BUCKET_NAME}))\n",
]

#: a token from the environment: the job must be given it.
ENV_TOKEN = [
    IMPORTS,
    PATCH_FN,
    "hf_token = os.environ['HF_TOKEN']\n",
    "client = TrainerClient()\n"
    "client.train(trainer=CustomTrainer(func=train_patched, env={'HF_TOKEN': hf_token}))\n",
]

#: refused: BuiltinTrainer (TorchTune), its names from a star import (as the Trainer's examples
#: write it): one error, nothing else about the names the star import brings.
BUILTIN_STAR = [
    "from kubeflow.trainer import *\n",
    "client = TrainerClient()\n"
    "client.train(runtime=client.get_runtime('torchtune-llama3.2-1b'),\n"
    "    initializer=Initializer(model=HuggingFaceModelInitializer(\n"
    "        storage_uri='hf://meta-llama/Llama-3.2-1B-Instruct')),\n"
    "    trainer=BuiltinTrainer(config=TorchTuneConfig(num_nodes=1)))\n",
]

#: refused: BuiltinTrainer (TorchTune).
BUILTIN = [
    "from kubeflow.trainer import BuiltinTrainer, TorchTuneConfig, TrainerClient\n",
    "client = TrainerClient()\n"
    "client.train(runtime='torchtune-llama3.2-1b',\n"
    "    trainer=BuiltinTrainer(config=TorchTuneConfig(num_nodes=1)))\n",
]

MLX_FN = (
    "def train_mlx(steps=2):\n"
    "    import os\n"
    "    print('mlx rank', os.environ.get('OMPI_COMM_WORLD_RANK'), steps)\n"
)
#: an MPI runtime (the launcher runs mpirun) by name, with packages, env and resources.
MLX = [
    IMPORTS,
    MLX_FN,
    "client = TrainerClient()\n"
    "client.train(runtime='mlx-distributed', trainer=CustomTrainer(func=train_mlx,\n"
    "    num_nodes=3, resources_per_node={'cpu': 2, 'memory': '2Gi'}, env={'MLX_LOG': '1'},\n"
    "    packages_to_install=['mlx[cpu]'], pip_index_urls=['https://pypi.org/simple'],\n"
    "    func_args={'steps': 4}))\n",
]


def example_cells(name: str) -> list[str]:
    """An example notebook's code cells up to its train() call (what follows reads the job)."""
    import json

    from tests.conftest import EXAMPLES

    cells = json.loads((EXAMPLES / name).read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    last = max(i for i, c in enumerate(code) if ".train(" in c)
    return code[: last + 1]
