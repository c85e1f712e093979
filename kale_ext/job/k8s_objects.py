"""Kubernetes client models from and to their JSON form (dicts), unknown keys refused."""

from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError


def k8s_object(value: Any, model: str, where: str):
    """A kubernetes client model from itself or from a dict in Kubernetes JSON form.

    Unknown keys are an error (the kubernetes client would silently drop them).
    """
    import kubernetes.client

    cls = getattr(kubernetes.client, model)
    if isinstance(value, cls):
        value = kubernetes.client.ApiClient().sanitize_for_serialization(value)
    if not isinstance(value, dict):
        raise ConfigError(where, f"must be a {model} or a dict, not {type(value).__name__}")
    _check_keys(value, cls, where)
    try:
        return kubernetes.client.ApiClient()._ApiClient__deserialize(value, model)
    except (ValueError, TypeError) as e:
        raise ConfigError(where, str(e).replace("`", "")) from None


def _check_keys(data: dict, cls, where: str) -> None:
    import kubernetes.client

    json_to_attr = {v: k for k, v in cls.attribute_map.items()}
    for key, value in data.items():
        attr = json_to_attr.get(key, key if key in cls.attribute_map else None)
        if attr is None:
            known = ", ".join(sorted(cls.attribute_map.values()))
            raise ConfigError(f"{where}.{key}", f"unknown field (known: {known})")
        kind = cls.openapi_types[attr]
        inner = re.fullmatch(r"list\[(V1\w+)\]", kind)
        if kind.startswith("V1") and isinstance(value, dict):
            _check_keys(value, getattr(kubernetes.client, kind), f"{where}.{key}")
        elif inner and isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    _check_keys(item, getattr(kubernetes.client, inner[1]), f"{where}.{key}[{i}]")


def k8s_dict(obj) -> dict:
    """Kubernetes JSON form of a kubernetes client model."""
    from kubernetes.client import ApiClient

    return ApiClient().sanitize_for_serialization(obj)
