"""GET runtimes/{name}/packages against a real Jupyter server: the local backend's environment,
and the Kubernetes backend (faked at the kubernetes client's boundary, tests/fake_kube.py) with
no cached list, a probe job, then the cache."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

from tests.conftest import notebook
from tests.harness.fake_kube import FakeKube

pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.harness.server"]

PACKAGES = "runtimes/torch-distributed/packages"


# -- the local backend: its runtime is this Python environment --


async def test_local_backend_answers_with_this_environment(api):
    r = await api.get(PACKAGES)
    assert r.status == 200, r.text
    data = r.json
    assert (data["runtime"], data["source"]) == ("torch-distributed", "environment")
    assert data["packages"]["pytest"] == version("pytest")
    assert data["packages"]["jupyter-server"] == version("jupyter_server")  # canonical names
    assert list(data["packages"]) == sorted(data["packages"])


async def test_probe_on_the_local_backend_starts_no_job(api, jobs_dir):
    r = await api.get(PACKAGES, params={"probe": "1"})
    assert r.status == 200, r.text
    assert r.json["source"] == "environment"
    assert r.json["packages"]["pytest"] == version("pytest")
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())


@pytest.mark.parametrize(
    ("runtime", "message"),
    [
        ("my-runtime", "runtime 'my-runtime' not found (available: torch-distributed, "
                       "xgboost-distributed, jax-distributed, deepspeed-distributed, "
                       "mlx-distributed)"),
        ("torch-distributed-with-cache", "runtime 'torch-distributed-with-cache' runs only on a "
                                         "cluster: it streams its dataset from the data cache "
                                         "the cluster runs beside it, which kale_ext does not "
                                         "do on this machine; submit it to Kubernetes, or run "
                                         "locally on torch-distributed, xgboost-distributed, "
                                         "jax-distributed, deepspeed-distributed, "
                                         "mlx-distributed"),
    ],
)  # fmt: skip
async def test_a_runtime_the_local_backend_cannot_run_is_a_404_saying_why(api, runtime, message):
    r = await api.get(f"runtimes/{runtime}/packages")
    assert r.status == 404, r.text
    assert r.json["message"] == message
    assert r.json["reason"] == "NotFound"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"verbose": "1"}, "unknown query parameter 'verbose' (this endpoint takes: probe)"),
        ({"probe": "yes"}, "query parameter 'probe' must be 0 or 1, not 'yes'"),
    ],
)
async def test_bad_query_parameters_are_a_400(api, params, message):
    r = await api.get(PACKAGES, params=params)
    assert r.status == 400, r.text
    assert r.json["message"] == message
    assert r.json["field"] == next(iter(params))


async def test_an_invalid_runtime_name_is_a_400(api):
    r = await api.get("runtimes/Not_A_Name/packages")
    assert r.status == 400 and "not a valid runtime name" in r.json["message"]


# -- the Kubernetes backend: a cached list, or a probe job --


def run_probe_jobs(kube: FakeKube, found: dict[str, str]) -> list[str]:
    """Play the cluster: each TrainJob created gets one pod that prints the probe's line
    (`KALE_PACKAGES {...}`) and succeeds. Returns the names of the jobs it ran."""
    ran: list[str] = []

    def hook(_count: int) -> None:
        for name in list(kube._store("trainjobs", kube.namespace)):
            if name in ran:
                continue
            ran.append(name)
            pod = kube.add_pod(name, 0, phase="Succeeded")
            kube.logs[pod].write("installing nothing", "KALE_PACKAGES " + json.dumps(found))
            kube.logs[pod].end()
            kube.set_conditions(name, ("Complete", "True", "AllJobsCompleted", "done"))

    kube.hooks["list_namespaced_pod"] = hook
    return ran


class TestKubernetes:
    @pytest.fixture
    def kale_config(self, kube):
        return {"backend": "kubernetes", "poll_interval": 0.01, "warm_up": False}

    async def test_without_a_cached_list_the_packages_are_null_and_no_job_starts(self, api, kube):
        r = await api.get(PACKAGES)
        assert r.status == 200, r.text
        assert r.json == {"runtime": "torch-distributed", "packages": None, "source": None}
        assert kube.count("create_namespaced_custom_object") == 0

    async def test_unknown_runtime_is_a_404(self, api, kube):
        r = await api.get("runtimes/deepspeed-distributed/packages")
        assert r.status == 404, r.text
        assert "runtime 'deepspeed-distributed' not found" in r.json["message"]
        assert "available: torch-distributed" in r.json["message"]

    async def test_probe_runs_a_job_once_then_the_cache_answers(self, api, kube):
        ran = run_probe_jobs(kube, {"Torch": "2.13.0", "scikit_learn": "1.7.0"})
        r = await api.get(PACKAGES, params={"probe": "1"}, request_timeout=120)
        assert r.status == 200, r.text
        expected = {"scikit-learn": "1.7.0", "torch": "2.13.0"}  # canonical names
        assert r.json == {"runtime": "torch-distributed", "packages": expected, "source": "probe"}
        assert len(ran) == 1
        assert kube._store("trainjobs", kube.namespace) == {}  # the probe job was deleted

        for params in (None, {"probe": "1"}):  # a known list: no other job
            again = await api.get(PACKAGES, params=params)
            assert again.json == {**r.json, "source": "cache"}
        assert len(ran) == 1

    async def test_a_failed_probe_reports_why(self, api, kube):
        def fail(_count: int) -> None:
            for name in list(kube._store("trainjobs", kube.namespace)):
                kube.add_pod(name, 0, phase="Failed")
                kube.set_conditions(name, ("Failed", "True", "JobFailed", "image pull failed"))

        kube.hooks["list_namespaced_pod"] = fail
        r = await api.get(PACKAGES, params={"probe": "1"}, request_timeout=120)
        assert r.status == 500, r.text
        assert r.json["message"].startswith("the package probe on runtime torch-distributed failed")
        assert "Traceback" not in r.text
        assert (await api.get(PACKAGES)).json["packages"] is None  # nothing was cached

    async def test_the_preview_warns_before_a_submit_about_imports_the_image_lacks(self, api, kube):
        nb = notebook(
            ("import json\nimport yaml\nimport not_installed_anywhere", ["imports"]),
            "print(json, yaml, not_installed_anywhere)",
        )
        before = (await api.post("compile", {"notebook": nb})).json
        assert before["ok"], before
        assert not [w for w in before["warnings"] if w["code"] == "missing-package"]  # unknown

        run_probe_jobs(kube, {"torch": "2.13.0"})  # an image without PyYAML
        probed = await api.get(PACKAGES, params={"probe": "1"}, request_timeout=120)
        assert probed.status == 200, probed.text
        after = (await api.post("compile", {"notebook": nb})).json
        missing = [w["message"] for w in after["warnings"] if w["code"] == "missing-package"]
        # yaml is pinned from this environment (installed by the job); the other is nowhere
        assert missing == [
            "`not_installed_anywhere` is imported, but runtime torch-distributed does not have "
            "not-installed-anywhere and the job does not install it: add it to the packages"
        ]
