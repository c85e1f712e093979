"""Kubernetes value rules, as data: names, label keys and values, quantities, env names.

The Python checks below and the panel's checks as you type share these patterns: the panel
gets them from :func:`rules` (served by the server, see kale_ext/server), never a hand copy.
Every pattern is valid in both Python's and JavaScript's regular expressions.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from ..errors import ConfigError

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

#: The rules, as data: a full-match pattern and a length limit each.
PATTERNS: dict[str, dict] = {
    # a TrainJob's name: an RFC 1035 label (its length limit depends on the runtime)
    "job_name": {"pattern": r"^[a-z]([-a-z0-9]*[a-z0-9])?$", "max_length": 63},
    # a namespace, a Secret or ConfigMap name: an RFC 1123 label
    "dns_label": {"pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "max_length": 63},
    # a runtime's name, a label key's prefix: an RFC 1123 subdomain
    "dns_subdomain": {
        "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        "max_length": 253,
    },
    "qualified_name": {"pattern": f"^{_NAME}$", "max_length": 63},
    "label_value": {"pattern": f"^({_NAME})?$", "max_length": 63},
    "env_name": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$", "max_length": 253},
    "config_key": {"pattern": r"^[-._a-zA-Z0-9]+$", "max_length": 253},
    "quantity": {
        "pattern": r"^(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
        r"([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
        "max_length": 64,
    },
}
_RE = {name: re.compile(rule["pattern"]) for name, rule in PATTERNS.items()}
_QUANTITY = _RE["quantity"]
_DNS_SUBDOMAIN = _RE["dns_subdomain"]
_QUALIFIED_NAME = _RE["qualified_name"]
_LABEL_VALUE = _RE["label_value"]
ENV_NAME = _RE["env_name"]
#: Set by the Trainer torch plugin on every node; the webhook rejects a TrainJob that sets them.
RESERVED_ENV = frozenset(
    {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}
)
GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
#: A quantity's suffixes and their factors.
SUFFIXES = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}  # fmt: skip


def matches(rule: str, value: Any) -> bool:
    """Whether ``value`` is a string that the rule ``rule`` of PATTERNS allows."""
    limit = PATTERNS[rule]["max_length"]
    return isinstance(value, str) and len(value) <= limit and bool(_RE[rule].match(value))


def rules() -> dict:
    """The rules as JSON for the panel: PATTERNS, the reserved env names, the suffixes."""
    return {
        "patterns": PATTERNS,
        "reserved_env": sorted(RESERVED_ENV),
        "quantity_suffixes": {k: float(v) for k, v in SUFFIXES.items()},
    }


def resource_key(key: str) -> str:
    """The Kubernetes name of a resource: `gpu` → `nvidia.com/gpu`, `mig-1g.5gb` → MIG."""
    k = key.strip()
    low = k.lower()
    if low == "gpu":
        return GPU
    if low.startswith("mig-"):
        return MIG_PREFIX + low[len("mig-") :]
    if low in ("cpu", "memory", "ephemeral-storage"):
        return low
    if low == "storage":
        return "ephemeral-storage"
    return k


def quantity(value: Any, where: str) -> str:
    """A Kubernetes quantity as a string; numbers become strings, anything else is checked."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(where, f"must be a quantity such as 2, '500m' or '16Gi', not {value!r}")
    text = repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, (int, float)) and value < 0:
        raise ConfigError(where, f"must not be negative, got {value!r}")
    if len(text) > PATTERNS["quantity"]["max_length"] or not _QUANTITY.match(text):
        hint = " (no spaces)" if " " in text.strip() or text != text.strip() else ""
        raise ConfigError(
            where, f"{text!r} is not a Kubernetes quantity such as '500m' or '16Gi'{hint}"
        )
    return text


def quantity_value(text: str) -> Decimal:
    """The numeric value of a valid quantity string (for comparisons)."""
    m = re.match(r"^([0-9.]+)([eE][+-]?[0-9.]+)?([A-Za-z]*)$", text)
    if not m:
        raise ValueError(text)
    try:
        number = Decimal(m.group(1) + (m.group(2) or ""))
    except InvalidOperation:
        raise ValueError(text) from None
    return number * Decimal(SUFFIXES.get(m.group(3), 1))


def check_label_key(key: Any, where: str) -> None:
    if not isinstance(key, str) or not key:
        raise ConfigError(where, f"a key must be a non-empty string, not {key!r}")
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise ConfigError(f"{where}[{key!r}]", "the key's prefix must be a DNS subdomain")
    if len(name) > 63 or not _QUALIFIED_NAME.match(name):
        raise ConfigError(
            f"{where}[{key!r}]",
            "a key must be at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit (optionally prefixed 'domain/')",
        )


def check_labels(values: Any, where: str, *, annotations: bool = False) -> dict[str, str]:
    if not isinstance(values, dict):
        raise ConfigError(where, f"must be a mapping of strings, not {type(values).__name__}")
    for key, value in values.items():
        check_label_key(key, where)
        if not isinstance(value, str):
            raise ConfigError(f"{where}[{key!r}]", f"the value must be a string, not {value!r}")
        if not annotations and (len(value) > 63 or not _LABEL_VALUE.match(value)):
            raise ConfigError(
                f"{where}[{key!r}]",
                f"{value!r} is not a valid label value (at most 63 letters, digits, '-', '_' "
                "or '.', starting and ending with a letter or digit)",
            )
    return dict(values)


def check_resources(values: Any, where: str) -> dict[str, str]:
    """Normalised resources: Kubernetes names, string quantities, whole GPU counts."""
    if not isinstance(values, dict):
        raise ConfigError(
            where, f"must be a mapping of resource names to quantities, not {values!r}"
        )
    out: dict[str, str] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(where, f"resource names must be non-empty strings, not {key!r}")
        name = resource_key(key)
        q = quantity(value, f"{where}.{key}")
        if (name == GPU or name.startswith(MIG_PREFIX)) and quantity_value(q) % 1:
            raise ConfigError(f"{where}.{key}", f"GPUs are whole devices, not {q}")
        out[name] = q
    return out


def check_accelerators(requests: dict, limits: dict, compare: bool = True) -> None:
    """One kind of GPU at a time; with ``compare``, no request above its limit."""
    names = set(requests) | set(limits)
    migs = sorted(n for n in names if n.startswith(MIG_PREFIX))
    if GPU in names and migs:
        raise ConfigError(
            "limits", f"request either whole GPUs or a MIG profile, not both ({migs[0]})"
        )
    if len(migs) > 1:
        raise ConfigError("limits", f"request one MIG profile at a time, not {', '.join(migs)}")
    if not compare:
        return
    for name in names & set(requests) & set(limits):
        if quantity_value(requests[name]) > quantity_value(limits[name]):
            raise ConfigError(
                f"requests.{name}", f"{requests[name]} is more than its limit {limits[name]}"
            )
