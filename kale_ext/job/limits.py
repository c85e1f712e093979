"""Bounds a site sets on job options, below the option table's own.

    c.KaleExtApp.option_limits = {"nodes": 8, "procs_per_node": 4, "packages": 20}

Each entry lowers one option's maximum: a count's largest value, a list's or an object's number
of entries, a text's length. A limit can only lower a bound (the table's are the most any job
may ask for). The server applies its own configuration (in its compile processes too); the CLI
and the magics read the same ``jupyter_server_config`` files when they load the defaults
(defaults.load), so a job is held to the same limits however it is submitted. The option
table's checks, its command-line flags and the REST schema (server/schema.py) all ask
:func:`limits_held.site_maximum`, and a refusal names the limit.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from .limits_held import TRAIT, URLS_TRAIT, WHERE, held_by_server, hold
from .options import OPTIONS


def _least(option) -> int:
    """The smallest maximum that still lets the option be chosen at all."""
    if option.kind in ("count", "gpu"):
        return option.minimum or 0
    if option.kind == "quantity":
        return 1
    return 1 if option.kind in ("text", "uri") else 0  # a list may be limited to none


def check(limits: Any) -> dict[str, int]:
    """``limits`` as {option: maximum}, each checked; ConfigError names the entry."""
    if limits is None:
        return {}
    if not isinstance(limits, dict):
        raise ConfigError(TRAIT, f"must be an object of option: maximum (set in the {WHERE})")
    bounded = {o.name: o for o in OPTIONS if o.maximum is not None}
    out = {}
    for name, value in limits.items():
        field = f"{TRAIT}.{name}"
        option = bounded.get(name)
        if option is None:
            known = ", ".join(sorted(bounded))
            raise ConfigError(
                field, f"not an option with a bound (those are: {known}; set in the {WHERE})"
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(field, f"must be a whole number, not {value!r} (set in the {WHERE})")
        least = _least(option)
        if not least <= value <= option.maximum:
            raise ConfigError(
                field,
                f"must be between {least} and {option.maximum} (the built-in bound), got "
                f"{value} (set in the {WHERE})",
            )
        out[name] = value
    return out


def configure(limits: Any, by_server: bool = False, package_urls: Any = False) -> None:
    """Hold this process's jobs to ``limits`` (replacing any earlier ones); ConfigError, with
    nothing changed, when one is invalid. In a server's process (``by_server``), the server's
    configuration stands until :func:`limits_held.release`: what else reads the files there
    (an export) does not change it."""
    if held_by_server() and not by_server:
        return
    checked = check(limits)
    if not isinstance(package_urls, bool) and package_urls is not None:
        raise ConfigError(URLS_TRAIT, f"must be true or false, not {package_urls!r} (set in the "
                          f"{WHERE})")  # fmt: skip
    hold(checked, by_server, bool(package_urls))
