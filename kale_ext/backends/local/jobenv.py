"""A local job's environment from its config's ``env``: the values given, and the field
references a node's pod would read resolved as this machine gives them (its address is
loopback, its namespace ``local``, its pod's name the job's). What only a cluster can resolve (a
Secret's or ConfigMap's key, ``env_from``) is refused, naming the field."""

from __future__ import annotations

from ...errors import ConfigError
from ...job.k8s_objects import k8s_dict
from ...job.spec import JobSpec

#: The fieldRef paths a local node resolves, and their values (metadata.name: the job's name).
FIELD_REFS = {
    "status.podIP": "127.0.0.1",
    "status.hostIP": "127.0.0.1",
    "metadata.namespace": "local",
}


def job_env(spec: JobSpec) -> dict[str, str]:
    """The job's env, every value resolved here (ConfigError: one only a cluster can)."""
    env = {}
    for i, var in enumerate(spec.config.env):
        data = k8s_dict(var)
        if "valueFrom" not in data:
            env[var.name] = data.get("value", "")
            continue
        ref = data["valueFrom"].get("fieldRef", {}).get("fieldPath")
        if ref in FIELD_REFS:
            env[var.name] = FIELD_REFS[ref]
        elif ref == "metadata.name":
            env[var.name] = spec.name
        else:
            source = next(iter(data["valueFrom"]))
            raise ConfigError(
                f"env[{i}].valueFrom",
                f"{var.name} reads a {source}, which only a cluster can resolve: run on "
                "Kubernetes, or give it a value",
            )
    if spec.config.env_from:
        raise ConfigError("env_from", "Secrets and ConfigMaps exist only on a cluster")
    return env
