"""The packages a job installs, and where each came from.

- A Kubeflow SDK notebook (one whose ``train()`` call is the job): what the call's
  ``CustomTrainer(packages_to_install=[...])`` lists, exactly as listed, as the SDK installs it;
  its imports add nothing (the SDK adds nothing either).
- A tagged notebook: its imports by distribution name and its ``%pip`` lines as written
  (compile/packages.py). A version is pinned where the user wrote one, and, when the job asks
  for pinning (``pin_packages``; unset: on for a local runtime, where it keeps the user's
  environment as it is and the job reproducible, off on a cluster, where the image's own
  packages are used), every other one that is installed here is pinned to its version here.
- Above both, the packages option (panel, CLI, magic) replaces a package of the same name.

At start-up a package is installed only as its :attr:`Package.check` says (job/trainjob.py's
bootstrap): a detected import only when it cannot be imported, a pinned one only when the
installed version is not the one asked for, an SDK notebook's list as pip decides.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from ..compile.packages import Package, provides, requirement_name
from ..errors import ConfigError
from .options import BY_NAME, check

if TYPE_CHECKING:
    from ..compile.compiler import CompiledJob
    from .runtimes import Runtime


@dataclass(frozen=True)
class Pinning:
    """Whether the notebook's unpinned packages are pinned to the versions here, and why."""

    on: bool
    why: str

    def text(self) -> str:
        return f"{'on' if self.on else 'off'} ({self.why})"


def pinning(asked: bool | None, runtime: Runtime) -> Pinning:
    """``asked``: the pin_packages option (None: not chosen, the runtime's backend decides)."""
    if asked is not None:
        return Pinning(asked, f"{'--pin-packages' if asked else '--no-pin-packages'} asked")
    if runtime.local:
        return Pinning(True, "the default for local runs: they use this environment's versions")
    return Pinning(False, "the default on a cluster: the image's own packages are used")


def sdk_packages(job: CompiledJob, listed) -> list[Package]:
    """The train() call's packages_to_install, as listed, with where the call lists them."""
    listed = check(BY_NAME["packages"], listed, "CustomTrainer packages_to_install") or []
    where = next((p for p in job.provenance or [] if p.get("setting") == "packages"), {})
    return [Package(text, "sdk", where.get("cell"), where.get("line")) for text in listed]


#: The index a Kubeflow SDK CustomTrainer installs from when it names none (the SDK 0.5.0's
#: ``constants.DEFAULT_PIP_INDEX_URLS`` without its environment variable).
SDK_INDEX_URLS = ("https://pypi.org/simple",)


def sdk_index_urls(job: CompiledJob, packages: list[Package]) -> list[str]:
    """The indexes of a job that names none: an SDK notebook's train() call installs its list
    from the SDK's default index (``--index-url``, not the image's pip configuration); other
    jobs from the image's pip configuration."""
    if any(p.source == "sdk" for p in packages):
        return list(SDK_INDEX_URLS)
    return []


def job_packages(job: CompiledJob, asked: list | None, pin: Pinning) -> list[Package]:
    """The job's packages: the notebook's (its train() call's for an SDK notebook), pinned as
    ``pin`` says, each replaced by the one of its name in ``asked`` (the packages option)."""
    settings = job.settings or {}
    if job.train_calls:  # an SDK notebook: its train() call is the job, its list the packages
        packages = sdk_packages(job, settings.get("packages"))
    else:
        packages = list(job.packages)
        if pin.on:
            packages = [p.pin_here() for p in packages]
    for extra in asked or []:
        if not isinstance(extra, str) or not extra.strip():
            raise ConfigError(
                "packages", f"each package must be a requirement string, not {extra!r}"
            )
        key = canonicalize_name(requirement_name(extra))
        same = [p for p in packages if provides(p, key)]
        module = next((p.module for p in same if p.module), None)  # still the import it provides
        packages = [p for p in packages if p not in same]
        packages.append(replace(Package(extra, "option"), module=module))
    return packages


def package_lines(packages: list[Package], pin: Pinning) -> list[str]:
    """The preview's lines: each package, where it came from, when it is installed."""
    if not packages:
        return ["packages   (none)"]
    lines = [f"packages   pinning {pin.text()}"]
    for p in packages:
        lines.append(f"           {p.requirement}: {p.origin()}; installed {p.when()}")
    return lines
