"""Items 2, 5, 10, 12, 13 and 14: what a job asks for is bounded, a package is never a pip
option, 0 GPUs is a choice, SDK-style notebooks say what they do, a package is listed once."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import notebook

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

TRAIN_FN = "def train_fn(lr: float = 0.1):\n    print('lr', lr)\n"


def sdk_notebook(trainer_args: str, tagged: bool = True) -> dict:
    """A Kubeflow-SDK-style notebook: the training function, then the TrainerClient cell."""
    driver = (
        "from kubeflow.trainer import TrainerClient, CustomTrainer\n"
        f"TrainerClient().train(trainer=CustomTrainer(func=train_fn{trainer_args}))\n"
    )
    return notebook((TRAIN_FN, ["entrypoint"] if tagged else []), driver)


async def submit_refused(api, jobs_dir, body: dict, field: str, says: str) -> None:
    r = await api.post("jobs", body)
    assert r.status == 400, r.text
    assert r.json["field"] == field and says in r.json["message"], r.json
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())  # nothing half-created


PLAIN = {"path": "plain_python.ipynb"}


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({**PLAIN, "options": {"nodes": 20_000}}, "nodes", "at most 1000"),
        ({**PLAIN, "options": {"procs_per_node": 1_000}}, "procs_per_node", "at most 256"),
        ({"notebook": sdk_notebook(", num_nodes=20000")}, "nodes", "at most 1000"),
        ({**PLAIN, "options": {"env": {f"V{i}": "x" for i in range(101)}}}, "env", "at most 100"),
    ],
    ids=["nodes", "procs", "sdk-num-nodes", "env-entries"],
)
async def test_2_what_a_job_asks_for_is_bounded(api, jobs_dir, body, field, says):
    await submit_refused(api, jobs_dir, body, field, says)


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({**PLAIN, "options": {"packages": ["-e /etc"]}}, "packages[0]", "is a pip option"),
        ({**PLAIN, "options": {"packages": ["numpy", "--index-url=http://x.invalid"]}},
         "packages[1]", "is a pip option"),
        ({**PLAIN, "options": {"packages": "numpy"}}, "packages", "must be a list"),
        ({"notebook": sdk_notebook(", packages_to_install=['--index-url=http://x.invalid']")},
         "CustomTrainer packages_to_install[0]", "is a pip option"),
        ({"notebook": sdk_notebook(", packages_to_install='numpy'")},
         "CustomTrainer packages_to_install", "must be a list"),
    ],
    ids=["editable", "index-url", "a-string", "sdk-option", "sdk-string"],
)  # fmt: skip
async def test_5_package_entries_are_never_pip_options(api, jobs_dir, body, field, says):
    await submit_refused(api, jobs_dir, body, field, says)


async def test_10_gpu_0_overrides_a_notebooks_gpu(api):
    nb = notebook("print(1)")
    nb["metadata"]["kale_ext"] = {"options": {"gpu": 1}}
    data = (await api.post("compile", {"notebook": nb, "options": {"gpu": 0}})).json
    assert data["ok"], data["errors"]
    trainer = yaml.safe_load(data["trainjob_yaml"])["spec"]["trainer"]
    assert "nvidia.com/gpu" not in json.dumps(trainer.get("resourcesPerNode", {}))


async def test_10_gpus_on_a_machine_without_them_are_refused_by_default(api, jobs_dir):
    body = {"notebook": notebook("print(1)"), "options": {"gpu": 1}}
    await submit_refused(api, jobs_dir, body, "gpu", "allow CPU for local runs")


class TestAllowCpuForGpu:
    @pytest.fixture
    def kale_config(self, tmp_path):
        return {"backend": "local", "jobs_dir": str(tmp_path / "jobs"), "warm_up": False,
                "compile_processes": 0, "allow_cpu_for_gpu": True}  # fmt: skip

    async def test_10_the_server_setting_runs_a_gpu_job_on_the_cpu(self, api):
        nb = notebook("import os\nprint('visible', repr(os.environ['CUDA_VISIBLE_DEVICES']))")
        name = await api.submit({"gpu": 1}, notebook=nb)
        events = await api.follow(name)
        assert events[-1].data["status"] == "Complete"
        assert any(e.data.get("text") == "visible ''" for e in events)


async def test_12_custom_trainer_func_args_are_the_jobs_arguments(api):
    data = (await api.post("compile", {"notebook": sdk_notebook(", func_args={'lr': 0.5}")})).json
    assert data["ok"], data["errors"]
    command = yaml.safe_load(data["trainjob_yaml"])["spec"]["trainer"]["command"]
    assert json.loads(command[3])["args"] == {"lr": 0.5}
    options = {"parameters": {"lr": 0.25}}  # explicit options still win
    data = (
        await api.post(
            "compile", {"notebook": sdk_notebook(", func_args={'lr': 0.5}"), "options": options}
        )
    ).json
    assert json.loads(yaml.safe_load(data["trainjob_yaml"])["spec"]["trainer"]["command"][3])[
        "args"
    ] == {"lr": 0.25}


async def test_13_an_sdk_notebook_without_an_entrypoint_tag_is_the_job_its_train_call_names(api):
    """No tag needed (issue 25): the train() call's func= is the job, its settings the job's; a
    func= that the notebook never defines is one error naming the cell."""
    data = (
        await api.post("compile", {"notebook": sdk_notebook(", num_nodes=2", tagged=False)})
    ).json
    assert data["ok"] is True, data["errors"]
    assert data["function_name"] == "train_fn" and "print('lr', lr)" in data["source"]
    assert "TrainerClient" not in data["source"]  # the cell that drives the client is left out
    missing = notebook(TRAIN_FN, "from kubeflow.trainer import TrainerClient, CustomTrainer\n"
                       "TrainerClient().train(trainer=CustomTrainer(func=train_other))\n")  # fmt: skip
    data = (await api.post("compile", {"notebook": missing})).json
    assert data["ok"] is False
    [error] = data["errors"]
    assert "train_other" in error["message"] and error["cell"] == 1


async def test_14_a_package_listed_twice_is_refused(api, jobs_dir):
    body = {**PLAIN, "options": {"packages": ["numpy>=1", "NumPy==2.0"]}}
    await submit_refused(api, jobs_dir, body, "packages[1]", "listed twice")
