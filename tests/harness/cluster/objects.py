"""Object rules the emulated cluster shares: timestamps, label and field selectors, and the
strategic merge patch (the API server's, used for PATCH and for the Trainer's runtime patches)."""

from __future__ import annotations

import asyncio
import copy
import re
from datetime import datetime, timezone
from typing import Any

#: The key a list's items are merged by (Kubernetes' patchMergeKey); other lists are replaced.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "replicatedJobs": "name",
    "ownerReferences": "uid",
    "conditions": "type",
}


def now() -> str:
    """This moment as the API server writes it (UTC, whole seconds)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def strategic_merge(base: Any, patch: Any, key: str | None = None) -> Any:
    """``patch`` merged into a copy of ``base``: maps key by key (None deletes), lists named in
    MERGE_KEYS item by item on their merge key, anything else replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = strategic_merge(out.get(k), v, k)
        return out
    merge_key = MERGE_KEYS.get(key or "")
    if merge_key and isinstance(base, list) and isinstance(patch, list):
        out = copy.deepcopy(base)
        at = {item.get(merge_key): i for i, item in enumerate(out) if isinstance(item, dict)}
        for item in patch:
            found = at.get(item.get(merge_key)) if isinstance(item, dict) else None
            if found is None:
                out.append(copy.deepcopy(item))
            else:
                out[found] = strategic_merge(out[found], item)
        return out
    return copy.deepcopy(patch)


def merge_patch(base: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base) if isinstance(base, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


_TERM = re.compile(
    r"\s*(?P<neg>!)?(?P<key>[\w./-]+)\s*"
    r"(?:(?P<op>==|=|!=)\s*(?P<value>[\w.-]*)|\s(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?\s*(,|$)"
)


def parse_selector(text: str | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """A label selector as (key, operator, values) terms; ValueError when it cannot be read."""
    terms, at, text = [], 0, text or ""
    while at < len(text):
        m = _TERM.match(text, at)
        if not m or m.end() == at:
            raise ValueError(f"unable to parse requirement: {text[at:]!r}")
        key = m["key"]
        if m["neg"]:
            terms.append((key, "!", ()))
        elif m["op"]:
            terms.append((key, "!=" if m["op"] == "!=" else "=", (m["value"],)))
        elif m["set"]:
            values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
            terms.append((key, m["set"], values))
        else:
            terms.append((key, "exists", ()))
        at = m.end()
    return terms


def selected(values: dict, terms: list[tuple[str, str, tuple[str, ...]]]) -> bool:
    """Whether labels (or field values) ``values`` satisfy every term."""
    for key, op, wanted in terms:
        have = values.get(key)
        ok = {
            "=": have == wanted[0] if wanted else False,
            "!=": have != wanted[0] if wanted else True,
            "in": have in wanted,
            "notin": have not in wanted,
            "exists": key in values,
            "!": key not in values,
        }[op]
        if not ok:
            return False
    return True


def field_values(obj: dict, terms: list[tuple[str, str, tuple[str, ...]]]) -> dict:
    """The values of the dotted fields a field selector names (``involvedObject.name``...)."""
    out = {}
    for key, _, _ in terms:
        node: Any = obj
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            out[key] = str(node)
    return out


async def within(awaitable, timeout: float | None) -> asyncio.Future | None:
    """The finished task of ``awaitable``, or None after ``timeout`` seconds (it is then
    cancelled). Unlike asyncio.wait_for in Python 3.11, a cancellation meanwhile is never lost."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    finally:
        if not task.done():
            task.cancel()
    return task if done else None
