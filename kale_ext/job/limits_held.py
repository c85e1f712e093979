"""The option limits this process holds (limits.py checks and sets them): what the option
table's checks and the REST schema read."""

from __future__ import annotations

TRAIT = "option_limits"
WHERE = "server configuration"
#: The site setting that lets packages be URLs (`pkg @ https://...`, `file:...`): off by default.
URLS_TRAIT = "allow_package_urls"
_limits: dict[str, int] = {}
_urls = [False]
_by_server = [False]  # the server set them: its configuration stands (an export reads files)


def site_maximum(name: str) -> int | None:
    """The site's maximum of option ``name``, or None where the site set none."""
    return _limits.get(name)


def current() -> dict[str, int]:
    """The limits in force in this process."""
    return dict(_limits)


def package_urls_allowed() -> bool:
    """Whether the site lets a job's packages be URLs (KaleExtApp.allow_package_urls)."""
    return _urls[0]


def held_by_server() -> bool:
    """A server set the limits held: its configuration stands."""
    return _by_server[0]


def hold(checked: dict[str, int], by_server: bool, package_urls: bool = False) -> None:
    """Hold these (checked) limits and whether packages may be URLs, replacing any earlier."""
    _limits.clear()
    _limits.update(checked)
    _urls[0] = package_urls
    _by_server[0] = by_server


def release() -> None:
    """No limits (the server that set them stopped)."""
    hold({}, False)
