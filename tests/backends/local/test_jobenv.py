"""A local job's environment from its config's env (kale_ext/backends/local/jobenv.py)."""

from __future__ import annotations

import pytest

from kale_ext.backends.local.jobenv import job_env
from kale_ext.compile.compiler import compile_notebook
from kale_ext.errors import ConfigError
from kale_ext.job.spec import build_job_spec
from tests.conftest import notebook


def spec(env: list[dict] | None = None, **options):
    config = {"env": env} if env is not None else {}
    return build_job_spec(compile_notebook(notebook("print(1)")), {"config": config, **options})


def field(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def test_values_and_the_field_references_a_node_reads_are_resolved_here():
    env = [{"name": "GREETING", "value": "hi"}, {"name": "EMPTY"},
           field("POD_IP", "status.podIP"), field("HOST_IP", "status.hostIP"),
           field("NS", "metadata.namespace"), field("POD", "metadata.name")]  # fmt: skip
    assert job_env(spec(env, name="fit")) == {"GREETING": "hi", "EMPTY": "", "POD_IP": "127.0.0.1",
                                              "HOST_IP": "127.0.0.1", "NS": "local", "POD": "fit"}  # fmt: skip
    assert job_env(spec()) == {}


@pytest.mark.parametrize(
    "env, where, source",
    [
        ([{"name": "A", "value": "1"},
          {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
         "env[1].valueFrom", "secretKeyRef"),
        ([{"name": "CONF", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}],
         "env[0].valueFrom", "configMapKeyRef"),
        ([field("NODE", "spec.nodeName")], "env[0].valueFrom", "fieldRef"),
    ],
)  # fmt: skip
def test_a_value_only_a_cluster_can_resolve_is_refused_naming_it(env, where, source):
    with pytest.raises(ConfigError) as info:
        job_env(spec(env))
    assert info.value.field == where
    assert f"reads a {source}, which only a cluster can resolve" in str(info.value)


def test_env_from_a_secret_or_config_map_is_refused():
    with pytest.raises(ConfigError) as info:
        job_env(spec(env_from_secrets=["tokens"]))
    assert info.value.field == "env_from" and "exist only on a cluster" in str(info.value)
