"""TrainJob mapping: every generated object validates against the official v2.3.0 CRD."""

import os
from dataclasses import dataclass, field

import pytest
from kubeflow_trainer_api.models import TrainerV1alpha1TrainJob

from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.runtimes import Runtime
from kale_ext.job.spec import build_job_spec, name_limit
from kale_ext.job.trainjob import trainjob_dict
from tests.conftest import notebook
from tests.harness.crd import runtime_manifest, validate_trainjob

NB = notebook(
    ("lr = 0.1\nepochs = 2", ["parameters"]),
    ("import json", ["imports"]),
    "print(json.dumps({'lr': lr, 'epochs': epochs}))",
)


def make(options=None, nb=NB, runtime=None, **kwargs) -> dict:
    spec = build_job_spec(compile_notebook(nb), options, runtime)
    obj = trainjob_dict(spec, **kwargs)
    validate_trainjob(obj)
    again = TrainerV1alpha1TrainJob.from_dict(obj).to_dict()
    assert again == obj  # round-trips through the SDK's model: nothing it does not know
    return obj


def pod_patch(obj) -> dict:
    [patch] = obj["spec"]["runtimePatches"]
    assert patch["manager"] == "kale-ext.io/jupyterlab"
    [node] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert node["name"] == "node"
    return node["template"]["spec"]["template"]


ABSENT = object()  # not in the TrainJob (numProcPerNode unless asked: the runtime chooses)


@dataclass
class Case:
    name: str
    options: dict
    expect: dict = field(default_factory=dict)  # dotted path -> value


CASES = [
    Case("defaults", {}, {
        "spec.runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                            "name": "torch-distributed"},
        "spec.trainer.numNodes": 1, "spec.trainer.numProcPerNode": ABSENT}),
    Case("cli resources", {"nodes": 2, "gpu": 2, "cpu": 4, "memory": "16Gi"}, {
        "spec.trainer.numNodes": 2, "spec.trainer.numProcPerNode": ABSENT,
        "spec.trainer.resourcesPerNode": {
            "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"},
            "limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"}}}),
    Case("processes per node asked", {"procs_per_node": 3, "cpu": 8}, {
        "spec.trainer.numProcPerNode": 3}),
    Case("mig profile", {"gpu": "mig-1g.5gb"}, {
        "spec.trainer.resourcesPerNode.limits": {"nvidia.com/mig-1g.5gb": "1"}}),
    Case("requests and limits apart", {"config": {"requests": {"cpu": 1, "memory": "2Gi"},
                                                  "limits": {"memory": "4Gi"}}}, {
        "spec.trainer.resourcesPerNode": {"requests": {"cpu": "1", "memory": "2Gi"},
                                          "limits": {"memory": "4Gi"}}}),
    Case("env with valueFrom", {"env": {"PLAIN": 1}, "config": {"env": [
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]}}, {
        "spec.trainer.env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                             {"name": "PLAIN", "value": "1"}]}),
    Case("run policy", {"config": {"run_policy": {
        "suspend": True, "active_deadline_seconds": 600, "ttl_seconds_after_finished": 60,
        "clean_pod_policy": "All", "scheduling_policy": {"queue": "team-a", "priority_class": "high"}}}}, {
        "spec.suspend": True, "spec.activeDeadlineSeconds": 600,
        "metadata.labels": {"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "high"},
        "metadata.annotations.kale-ext.io/ttl-seconds-after-finished": "60",
        "metadata.annotations.kale-ext.io/clean-pod-policy": "All"}),
    Case("a queue chosen (--queue)", {"queue": "team-b"}, {
        "metadata.labels": {"kueue.x-k8s.io/queue-name": "team-b"}}),
    Case("a queue chosen over the config's, its priority class kept", {"queue": "team-b", "config": {
        "run_policy": {"scheduling_policy": {"queue": "team-a", "priority_class": "high"}}}}, {
        "metadata.labels": {"kueue.x-k8s.io/queue-name": "team-b", "kueue.x-k8s.io/priority-class": "high"}}),
    Case("parameters", {"parameters": {"epochs": 5}}, {}),
    Case("image and packages", {"image": "python:3.11", "packages": ["requests==2.0"]},
         {"spec.trainer.image": "python:3.11"}),
    Case("dataset initializer", {"dataset_uri": "hf://org/data", "model_uri": "s3://bucket/model"}, {
        "spec.initializer": {"dataset": {"storageUri": "hf://org/data"},
                             "model": {"storageUri": "s3://bucket/model"}}}),
]  # fmt: skip


def lookup(obj, path):
    for part in path.split(".", 2) if path.startswith("metadata.annotations.") else path.split("."):
        if part not in obj:
            return ABSENT
        obj = obj[part]
    return obj


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_mapping(case):
    obj = make(case.options)
    for path, value in case.expect.items():
        assert lookup(obj, path) == value, path


def test_pods_get_labels_annotations_and_scheduling():
    obj = make({"config": {
        "labels": {"team": "ml"}, "annotations": {"example.com/owner": "ana"},
        "node_selector": {"gpu": "a100"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]}}},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}})  # fmt: skip
    template = pod_patch(obj)
    assert template["metadata"] == {
        "labels": {"team": "ml"},
        "annotations": {"example.com/owner": "ana"},
    }
    assert template["spec"]["nodeSelector"] == {"gpu": "a100"}
    assert template["spec"]["tolerations"] == [
        {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert "nodeAffinity" in template["spec"]["affinity"]
    assert obj["metadata"]["labels"] == {"team": "ml"}
    assert obj["metadata"]["annotations"]["example.com/owner"] == "ana"


def test_provenance_annotations():
    job = compile_notebook(NB)
    obj = make(notebook_path="work/nb.ipynb")
    notes = obj["metadata"]["annotations"]
    assert notes["kale-ext.io/notebook"] == "work/nb.ipynb"
    assert notes["kale-ext.io/notebook-sha256"] == job.notebook_sha256
    assert notes["kale-ext.io/source-sha256"] == job.source_sha256
    assert notes["kale-ext.io/version"]


def test_kale_tags_and_cell_config_are_the_lowest_layers():
    nb = notebook(
        ("from kale_ext.distributed import DistributedConfig\n"
         "c = DistributedConfig(limits={'cpu': '2', 'memory': '1Gi'}, labels={'from': 'cell'})",
         ["distributed"]),
        ("print(1)", ["step:a", "limit:memory:8Gi", "label:tag:yes"]),
    )  # fmt: skip
    nb["metadata"]["kale_ext"] = {"config": {"limits": {"cpu": "3"}}, "options": {"nodes": 3}}
    obj = make({"nodes": 4, "cpu": 5}, nb=nb)
    assert obj["spec"]["trainer"]["numNodes"] == 4  # explicit option > metadata
    assert obj["spec"]["trainer"]["resourcesPerNode"]["limits"] == {"cpu": "5", "memory": "1Gi"}
    assert obj["metadata"]["labels"] == {"tag": "yes", "from": "cell"}
    assert make(nb=nb)["spec"]["trainer"]["numNodes"] == 3  # metadata > runtime default
    assert make(nb=nb)["spec"]["trainer"]["resourcesPerNode"]["limits"]["cpu"] == "3"


ABOVE = {"requests": {"cpu": "4"}, "limits": {"cpu": "500m"}}


@pytest.mark.parametrize(
    "stored, options, error, resources",
    [
        # The panel sends its form and keeps it in the notebook's metadata: one problem, one error,
        # named by the field the form shows it at.
        (ABOVE, {"config": ABOVE}, ("requests.cpu", "4 is more than its limit 500m"), None),
        (ABOVE, None, ("requests.cpu", "4 is more than its limit 500m"), None),
        (None, {"config": ABOVE}, ("requests.cpu", "4 is more than its limit 500m"), None),
        # A limit the request raises is judged with the value that runs, not the one replaced.
        (ABOVE, {"config": {"limits": {"cpu": "8"}}}, None, ({"cpu": "4"}, {"cpu": "8"})),
        (ABOVE, {"cpu": 2}, None, ({"cpu": "2"}, {"cpu": "2"})),
    ],
    ids=["panel-form-twice", "metadata-only", "options-only", "limit-raised", "cpu-flag"],
)
def test_a_request_above_its_limit_is_one_error_on_the_values_that_run(
    stored, options, error, resources
):
    nb = notebook(("epochs = 6", ["parameters"]), "print(epochs)")
    if stored is not None:
        nb["metadata"]["kale_ext"] = {"config": stored}
    if error is not None:
        with pytest.raises(ConfigError) as raised:
            make(options, nb=nb)
        assert (raised.value.field, raised.value.message) == error
        return
    per_node = make(options, nb=nb)["spec"]["trainer"]["resourcesPerNode"]
    assert (per_node["requests"], per_node["limits"]) == resources


def test_env_from_expands_to_value_from_references():
    keys = {("Secret", "creds"): ["TOKEN", "bad-name"], ("ConfigMap", "cfg"): ["MODE"]}

    def keys_of(kind, name):
        return keys[(kind, name)]

    options = {"config": {"env": [{"name": "MODE", "value": "explicit"}], "env_from": [
        {"secretRef": {"name": "creds"}, "prefix": "S_"},
        {"configMapRef": {"name": "cfg"}},
        {"secretRef": {"name": "gone", "optional": True}}]}}  # fmt: skip
    env = make(options, env_from_keys=keys_of)["spec"]["trainer"]["env"]
    assert env == [
        {"name": "MODE", "value": "explicit"},
        {"name": "S_TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "TOKEN"}}},
    ]
    with pytest.raises(ConfigError, match=r"env_from\[0\]: Secret 'creds' does not exist"):
        make(options, env_from_keys=lambda kind, name: (_ for _ in ()).throw(KeyError(name)))
    with pytest.raises(ConfigError, match="needs a cluster"):
        make(options)


def test_generated_names_fit_every_runtime():
    cache = Runtime.from_manifest(runtime_manifest("torch-distributed-with-cache"))
    assert cache.replicated_jobs == ("dataset-initializer", "node")
    assert name_limit(cache, 1) == 33
    assert name_limit(Runtime.from_manifest(runtime_manifest("torch-distributed")), 1) == 48
    assert name_limit(Runtime.from_manifest(runtime_manifest("torch-distributed")), 12) == 47
    long_nb = dict(NB)
    job = compile_notebook(
        long_nb, function_name="a_very_long_notebook_name_that_goes_on_and_on_and_on"
    )
    for runtime, limit in ((cache, 33), (None, 48)):
        spec = build_job_spec(job, {}, runtime)
        assert len(spec.name) <= limit and spec.name.startswith("a-very-long")
        validate_trainjob(trainjob_dict(spec))


@pytest.mark.parametrize(
    "options, field, message",
    [
        ({"name": "Digits"}, "name", "not a valid job name"),
        ({"name": "9lives"}, "name", "not a valid job name"),
        ({"name": "x" * 49}, "name", "at most 48"),
        # their outputs folder would be the lineages' checkpoints' (<outputs>/checkpoints/...)
        (
            {"name": "checkpoints"},
            "name",
            "'checkpoints' is reserved: it names the folder of the "
            "lineages' checkpoints on a cluster's outputs volume",
        ),
        ({"name": "lineages"}, "name", "'lineages' is reserved"),
        ({"nodes": 0}, "nodes", "at least 1"),
        ({"nodes": "2"}, "nodes", "whole number"),
        ({"procs_per_node": 0}, "procs_per_node", "at least 1"),
        ({"gpu": -1}, "gpu", "at least 0"),
        ({"cpu": "four"}, "cpu", "not a Kubernetes quantity"),
        (
            {"parameters": {"momentum": 0.9}},
            "parameters.momentum",
            "no such parameter (it has: lr, epochs)",
        ),
        ({"parameters": {"lr": object()}}, "parameters.lr", "expects a float"),
        ({"parameters": {"epochs": "abc"}}, "parameters.epochs", "expects an int"),
        ({"dataset_uri": "ftp://x"}, "dataset_uri", "is not a URI such as hf://"),
        ({"pip_index_urls": ["not a url"]}, "pip_index_urls[0]", "http(s)"),
        ({"colour": "red"}, "options.colour", "unknown option"),
        ({"config": {"limits": {"gpu": 1, "mig-1g.5gb": 1}}}, "options.config.limits", "not both"),
    ],
)
def test_bad_options_name_the_field(options, field, message):
    with pytest.raises(ConfigError) as info:
        build_job_spec(compile_notebook(NB), options)
    assert info.value.field == field and message in str(info.value)


def test_name_too_long_for_an_initializer_runtime():
    cache = Runtime.from_manifest(runtime_manifest("torch-distributed-with-cache"))
    with pytest.raises(ConfigError, match="at most 33"):
        build_job_spec(compile_notebook(NB), {"name": "x" * 34}, cache)


def test_unsupported_run_policy_fields_are_warnings_not_silence():
    spec = build_job_spec(compile_notebook(NB), {"config": {"run_policy": {
        "backoff_limit": 3, "scheduling_policy": {"min_available": 2}}}})  # fmt: skip
    assert any("backoff_limit" in w for w in spec.warnings)
    assert any("min_available" in w for w in spec.warnings)


def test_submit_options_are_recorded_for_a_rerun():
    import json

    obj = make({"nodes": 2, "parameters": {"epochs": 5}, "config": {"labels": {"a": "b"}}})
    recorded = json.loads(obj["metadata"]["annotations"]["kale-ext.io/options"])
    assert recorded == {"nodes": 2, "parameters": {"epochs": 5}, "config": {"labels": {"a": "b"}}}


def many_cells(count: int) -> dict:
    """A notebook of ``count`` one-line cells with JupyterLab's random 8-hex cell ids: little
    code of the user's, a line map as long as the notebook (kale_ext's own)."""
    import random

    ids = random.Random(count)
    nb = notebook(*[f"total = {i % 7}" for i in range(count)])
    for cell in nb["cells"]:
        cell["id"] = f"{ids.getrandbits(32):08x}"
    return nb


def test_the_embedded_limit_counts_the_notebooks_code_not_kale_exts_line_map():
    """Issue 42: a 20,000-cell notebook was refused as "too large to embed", mostly for
    kale_ext's own per-cell line map (one command-line argument held it all). Now the limit
    counts the notebook's code; the source travels in pieces of at most one argument each, and
    comes back whole."""
    from kale_ext.job.embed import check_embeddable
    from kale_ext.job.trainjob import MAX_ARGUMENT, source_of, training_command

    job = compile_notebook(many_cells(20_000))
    spec = build_job_spec(job)
    command = training_command(spec)
    assert len(command) > 5 and all(len(arg) <= MAX_ARGUMENT for arg in command)
    assert source_of(command) == job.source
    check_embeddable(spec, command)  # the notebook's code is small: no error
    trainer = make(nb=many_cells(20_000))["spec"]["trainer"]
    assert source_of(trainer["command"]) == job.source


def test_a_source_in_pieces_runs_byte_exact(tmp_path, monkeypatch):
    """The bootstrap joins the pieces again: a source cut into many runs as one."""
    import json
    import subprocess
    import sys

    from kale_ext.job import trainjob

    monkeypatch.setattr(trainjob, "MAX_ARGUMENT", 200)
    spec = build_job_spec(compile_notebook(NB), {"parameters": {"lr": 0.5}})
    command = trainjob.training_command(spec)
    assert len(command) > 6
    plan = json.loads(command[3])
    plan["launcher"] = "python"  # no torchrun: the module itself, as one process
    command = [sys.executable, command[1], command[2], json.dumps(plan), *command[4:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KALE_EXT_")}
    ran = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**env, "KALE_EXT_OUTPUT_DIR": str(tmp_path / "out")})  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.splitlines()[0]) == {"lr": 0.5, "epochs": 2}


def test_the_definition_annotation_is_the_jobs_definition():
    """What `kale-ext diff` reads of a TrainJob (tests/job/test_definition.py has its fields)."""
    import json

    from kale_ext.job.definition import definition

    options = {"queue": "team-a", "max_restarts": 2}
    recorded = make(options)["metadata"]["annotations"]["kale-ext.io/definition"]
    assert json.loads(recorded) == definition(build_job_spec(compile_notebook(NB), options))
