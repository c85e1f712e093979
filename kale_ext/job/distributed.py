"""DistributedConfig: what a job's training pods get beyond their runtime's defaults.

    from kale_ext.distributed import DistributedConfig, V1EnvVar, V1RunPolicy
    config = DistributedConfig(env=[V1EnvVar(name="ENV1", value="VALUE1")],
                               labels={"significant-label": "a-value"},
                               run_policy=V1RunPolicy(clean_pod_policy="All"))

Fields typed with Kubernetes objects take the kubernetes client's objects or plain dicts in
Kubernetes JSON form. Every value is validated when the config is made; an invalid one raises
:class:`ConfigError` naming the field (``limits.cpu``, ``env[1].name``, ...).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import InitVar, dataclass, field
from typing import Any

from ..errors import ConfigError
from .k8s_objects import k8s_dict, k8s_object
from .k8s_values import (
    ENV_NAME,
    RESERVED_ENV,
    check_accelerators,
    check_labels,
    check_resources,
    matches,
    quantity,
)

# The kubernetes client's models that users may import from here (loaded on first use).
_K8S_EXPORTS = (
    "V1EnvVar", "V1EnvVarSource", "V1EnvFromSource", "V1SecretKeySelector",
    "V1ConfigMapKeySelector",
    "V1ObjectFieldSelector", "V1ResourceFieldSelector", "V1SecretEnvSource", "V1ConfigMapEnvSource",
    "V1Affinity", "V1NodeAffinity", "V1PodAffinity", "V1PodAntiAffinity", "V1NodeSelector",
    "V1NodeSelectorTerm", "V1NodeSelectorRequirement", "V1PreferredSchedulingTerm",
    "V1WeightedPodAffinityTerm", "V1PodAffinityTerm", "V1LabelSelector",
    "V1LabelSelectorRequirement", "V1Toleration", "V1Volume", "V1VolumeMount",
    "V1PersistentVolumeClaimVolumeSource", "V1SecretVolumeSource", "V1ConfigMapVolumeSource",
    "V1EmptyDirVolumeSource", "V1PodSecurityContext", "V1LocalObjectReference",
)  # fmt: skip

__all__ = ["DistributedConfig", "V1RunPolicy", "V1SchedulingPolicy", *_K8S_EXPORTS]


def __getattr__(name: str):
    if name in _K8S_EXPORTS:
        import kubernetes.client

        return getattr(kubernetes.client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----- run policy ------------------------------------------------------------------------------


@dataclass
class V1SchedulingPolicy:
    """The Training Operator v1 scheduling policy (queue and priority class are honoured)."""

    min_available: int | None = None
    queue: str | None = None
    min_resources: dict | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None


@dataclass
class V1RunPolicy:
    """The Training Operator v1 run policy, as Kale's DistributedConfig took it."""

    clean_pod_policy: str | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling_policy: V1SchedulingPolicy | dict | None = None
    suspend: bool | None = None


def _fields_of(value: Any, cls, where: str) -> dict:
    """Field values from a dict (snake_case or camelCase keys), our class, or a look-alike
    (the Kubeflow training v1 SDK's V1RunPolicy)."""
    names = [f.name for f in dataclasses.fields(cls)]
    camel = {re.sub(r"_(\w)", lambda m: m[1].upper(), n): n for n in names}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {n: getattr(value, n, None) for n in names}
    elif not isinstance(value, dict):
        if (
            not all(hasattr(value, n) for n in ("clean_pod_policy", "backoff_limit"))
            and cls is V1RunPolicy
        ):
            raise ConfigError(where, f"must be a V1RunPolicy or a dict, not {type(value).__name__}")
        value = {n: getattr(value, n, None) for n in names}
    out = {}
    for key, v in value.items():
        name = key if key in names else camel.get(key)
        if name is None:
            raise ConfigError(f"{where}.{key}", f"unknown field (known: {', '.join(names)})")
        out[name] = v
    return out


def _count(value: Any, where: str, minimum: int = 0) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(where, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise ConfigError(where, f"must be at least {minimum}, got {value}")
    return value


def check_run_policy(value: Any) -> V1RunPolicy | None:
    if value is None:
        return None
    f = _fields_of(value, V1RunPolicy, "run_policy")
    policy = f.get("clean_pod_policy")
    if policy not in (None, "All", "Running", "None"):
        raise ConfigError(
            "run_policy.clean_pod_policy", f"must be All, Running or None, not {policy!r}"
        )
    suspend = f.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        raise ConfigError("run_policy.suspend", f"must be true or false, not {suspend!r}")
    sched = f.get("scheduling_policy")
    if sched is not None:
        s = _fields_of(sched, V1SchedulingPolicy, "run_policy.scheduling_policy")
        for key in ("queue", "priority_class"):
            if s.get(key) is not None:
                check_labels({"x": s[key]}, f"run_policy.scheduling_policy.{key}")
        for key in ("min_available", "schedule_timeout_seconds"):
            _count(s.get(key), f"run_policy.scheduling_policy.{key}")
        sched = V1SchedulingPolicy(**s)
    counts = {
        key: _count(f.get(key), f"run_policy.{key}", 1 if key == "active_deadline_seconds" else 0)
        for key in ("ttl_seconds_after_finished", "active_deadline_seconds", "backoff_limit")
    }
    return V1RunPolicy(clean_pod_policy=policy, scheduling_policy=sched, suspend=suspend, **counts)


# ----- the config ------------------------------------------------------------------------------

_TOLERATION_OPERATORS = (None, "Exists", "Equal")
_TAINT_EFFECTS = (None, "", "NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass
class DistributedConfig:
    """Settings for every training node of a job (master and workers alike)."""

    env: list = field(default_factory=list)
    env_from: list = field(default_factory=list)
    requests: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    node_selector: dict = field(default_factory=dict)
    affinity: Any = None
    tolerations: list = field(default_factory=list)
    run_policy: Any = None
    volumes: list = field(default_factory=list)  # V1Volume
    volume_mounts: list = field(default_factory=list)  # V1VolumeMount, in the trainer container
    service_account_name: str | None = None
    image_pull_secrets: list = field(default_factory=list)  # names (or {"name": ...})
    security_context: Any = None  # V1PodSecurityContext
    shm_size: str | None = None  # a memory-backed /dev/shm of this size
    max_restarts: int | None = None  # the whole job started again after a node fails, at most
    # False for one layer of a job's config (build_job_spec lays the notebook's metadata, the
    # request's options ... over each other): a request above its limit is judged once, on the
    # values that run, not in a layer whose request or limit a higher layer replaces.
    whole: InitVar[bool] = True

    def __post_init__(self, whole: bool) -> None:
        self.env = [self._env(v, i) for i, v in enumerate(_list(self.env, "env"))]
        names = [e.name for e in self.env]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise ConfigError("env", f"`{dup}` is set twice")
        self.env_from = [
            self._env_from(v, i) for i, v in enumerate(_list(self.env_from, "env_from"))
        ]
        self.requests = check_resources(self.requests, "requests")
        self.limits = check_resources(self.limits, "limits")
        check_accelerators(self.requests, self.limits, compare=whole)
        self.annotations = check_labels(self.annotations, "annotations", annotations=True)
        self.labels = check_labels(self.labels, "labels")
        self.node_selector = check_labels(self.node_selector, "node_selector")
        if self.affinity is not None:
            self.affinity = k8s_object(self.affinity, "V1Affinity", "affinity")
        self.tolerations = [
            self._toleration(v, i) for i, v in enumerate(_list(self.tolerations, "tolerations"))
        ]
        self.run_policy = check_run_policy(self.run_policy)
        self._check_pod_settings()

    def _check_pod_settings(self) -> None:
        from .volumes import check_mount, check_volume

        listed = _list(self.volumes, "volumes")
        self.volumes = [k8s_object(v, "V1Volume", f"volumes[{i}]") for i, v in enumerate(listed)]
        for i, volume in enumerate(self.volumes):
            check_volume(volume, i)
        names = [v.name for v in self.volumes]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise ConfigError("volumes", f"two volumes are named {dup!r}")
        listed = _list(self.volume_mounts, "volume_mounts")
        self.volume_mounts = [
            k8s_object(v, "V1VolumeMount", f"volume_mounts[{i}]") for i, v in enumerate(listed)
        ]
        paths: dict[str, str] = {}
        for i, m in enumerate(self.volume_mounts):
            m.mount_path = check_mount(m.mount_path, f"volume_mounts[{i}].mountPath")
            if m.mount_path in paths:
                raise ConfigError(
                    f"volume_mounts[{i}].mountPath",
                    f"{m.mount_path} is the mount of volume {paths[m.mount_path]!r} already",
                )
            paths[m.mount_path] = m.name
        if self.service_account_name is not None and not matches(
            "dns_subdomain", self.service_account_name
        ):
            raise ConfigError(
                "service_account_name", f"{self.service_account_name!r} is not a service account"
            )
        listed = _list(self.image_pull_secrets, "image_pull_secrets")
        self.image_pull_secrets = [_secret_name(v, i) for i, v in enumerate(listed)]
        if self.security_context is not None:
            self.security_context = k8s_object(
                self.security_context, "V1PodSecurityContext", "security_context"
            )
        if self.shm_size is not None:
            self.shm_size = quantity(self.shm_size, "shm_size")
        self._check_bounds()

    def _check_bounds(self) -> None:
        """CPU, memory and shm_size within the option table's bounds, however they are set."""
        from .options import BY_NAME, check

        for section, values in (("requests", self.requests), ("limits", self.limits)):
            for key in ("cpu", "memory"):
                if key in values:
                    check(BY_NAME[key], values[key], f"{section}.{key}")
        check(BY_NAME["shm_size"], self.shm_size, "shm_size")
        self.max_restarts = check(BY_NAME["max_restarts"], self.max_restarts, "max_restarts")

    @staticmethod
    def _env(value, i):
        env = k8s_object(value, "V1EnvVar", f"env[{i}]")
        if not ENV_NAME.match(env.name or ""):
            raise ConfigError(
                f"env[{i}].name",
                f"{env.name!r} is not a valid variable name (letters, digits and _, not "
                "starting with a digit)",
            )
        if env.name in RESERVED_ENV:
            raise ConfigError(f"env[{i}].name", f"{env.name} is set by the Trainer on each node")
        if env.value is not None and env.value_from is not None:
            raise ConfigError(f"env[{i}]", "set either value or valueFrom, not both")
        if isinstance(env.value, str) and "\x00" in env.value:
            raise ConfigError(f"env[{i}].value", "holds a NUL byte, which no process's "
                              "environment can carry")  # fmt: skip
        return env

    @staticmethod
    def _env_from(value, i):
        source = k8s_object(value, "V1EnvFromSource", f"env_from[{i}]")
        if (source.secret_ref is None) == (source.config_map_ref is None):
            raise ConfigError(f"env_from[{i}]", "name exactly one of secretRef or configMapRef")
        ref = source.secret_ref or source.config_map_ref
        if not ref.name:
            raise ConfigError(f"env_from[{i}]", "the referenced Secret or ConfigMap needs a name")
        if source.prefix and not ENV_NAME.match(source.prefix):
            raise ConfigError(f"env_from[{i}].prefix", f"{source.prefix!r} is not a valid prefix")
        return source

    @staticmethod
    def _toleration(value, i):
        t = k8s_object(value, "V1Toleration", f"tolerations[{i}]")
        if t.operator not in _TOLERATION_OPERATORS:
            raise ConfigError(
                f"tolerations[{i}].operator", f"must be Exists or Equal, not {t.operator!r}"
            )
        if t.effect not in _TAINT_EFFECTS:
            raise ConfigError(
                f"tolerations[{i}].effect",
                f"must be NoSchedule, PreferNoSchedule or NoExecute, not {t.effect!r}",
            )
        if t.operator == "Exists" and t.value:
            raise ConfigError(f"tolerations[{i}].value", "must be empty when operator is Exists")
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            raise ConfigError(
                f"tolerations[{i}].tolerationSeconds", "applies only to the NoExecute effect"
            )
        return t

    # -- plain dicts (notebook metadata, the REST API) --

    def to_dict(self) -> dict:
        """A JSON-ready dict: Kubernetes objects in Kubernetes JSON form, empty fields left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value in (None, [], {}):
                continue
            if f.name in ("env", "env_from", "tolerations", "volumes", "volume_mounts"):
                value = [k8s_dict(v) for v in value]
            elif f.name in ("affinity", "security_context"):
                value = k8s_dict(value)
            elif f.name == "run_policy":
                value = {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
            out[f.name] = value
        return out

    @classmethod
    def from_dict(
        cls, data: Any, where: str = "config", *, whole: bool = True
    ) -> DistributedConfig:
        """A config from its JSON form (ConfigError names `where.field`); ``whole=False``: one
        layer of several, whose requests are compared with their limits once merged."""
        if isinstance(data, DistributedConfig):
            return data
        if not isinstance(data, dict):
            raise ConfigError(where, f"must be an object, not {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"{where}.{unknown[0]}", f"unknown field (known: {', '.join(sorted(known))})"
            )
        try:
            return cls(**data, whole=whole)
        except ConfigError as e:  # the field, named where the config came from (when told)
            if where == "config" or e.field.startswith(f"{where}.") or e.field == where:
                raise
            raise ConfigError(f"{where}.{e.field}", e.message) from None

    def merged(self, other: DistributedConfig | None, whole: bool = True) -> DistributedConfig:
        """This config with ``other`` laid over it: mappings merge key by key, env by name,
        lists of tolerations and env sources add up, and set values replace. ``whole=False``:
        more layers are to come (requests are compared with their limits in the last)."""
        if other is None:
            return self
        env = {e.name: e for e in self.env}
        env.update({e.name: e for e in other.env})
        return DistributedConfig(
            env=list(env.values()),
            env_from=self.env_from + other.env_from,
            requests={**self.requests, **other.requests},
            limits={**self.limits, **other.limits},
            annotations={**self.annotations, **other.annotations},
            labels={**self.labels, **other.labels},
            node_selector={**self.node_selector, **other.node_selector},
            affinity=other.affinity if other.affinity is not None else self.affinity,
            tolerations=self.tolerations + other.tolerations,
            run_policy=_run_policy_over(self.run_policy, other.run_policy),
            volumes=list({v.name: v for v in self.volumes + other.volumes}.values()),
            volume_mounts=list(
                {m.mount_path: m for m in self.volume_mounts + other.volume_mounts}.values()
            ),
            service_account_name=other.service_account_name or self.service_account_name,
            image_pull_secrets=list(
                dict.fromkeys(self.image_pull_secrets + other.image_pull_secrets)
            ),
            security_context=other.security_context or self.security_context,
            shm_size=other.shm_size or self.shm_size,
            max_restarts=self.max_restarts if other.max_restarts is None else other.max_restarts,
            whole=whole,
        )


def _secret_name(value: Any, i: int) -> str:
    """An image pull secret: its name, or {"name": ...} (a V1LocalObjectReference)."""
    name = value.get("name") if isinstance(value, dict) else getattr(value, "name", value)
    if not matches("dns_subdomain", name):
        raise ConfigError(f"image_pull_secrets[{i}]", f"{name!r} is not a Secret name")
    return name


def _list(value: Any, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ConfigError(where, f"must be a list, not {type(value).__name__}")
    return list(value)


def _run_policy_over(under: V1RunPolicy | None, over: V1RunPolicy | None) -> V1RunPolicy | None:
    """``over`` laid over ``under`` field by field: a layer that sets the TTL keeps the
    deadline a lower layer set (a Kubeflow SDK notebook's ActiveDeadlineSeconds)."""
    if under is None or over is None:
        return over if over is not None else under
    merged = _fields_over(under, over, V1RunPolicy)
    # the scheduling policy too: a queue chosen at submit keeps the notebook's priority class
    sched_under, sched_over = under.scheduling_policy, over.scheduling_policy
    if sched_under is not None and sched_over is not None:
        merged.scheduling_policy = _fields_over(sched_under, sched_over, V1SchedulingPolicy)
    return merged


def _fields_over(under, over, cls):
    """A ``cls`` with ``over``'s fields where set, else ``under``'s."""
    return cls(
        **{
            f.name: getattr(over, f.name) if getattr(over, f.name) is not None
            else getattr(under, f.name)
            for f in dataclasses.fields(cls)
        }
    )  # fmt: skip
