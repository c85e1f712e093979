"""The official Kubeflow Trainer v2.3.0 ClusterTrainingRuntimes, as the tests build them: the
package's facts (kale_ext/job/published_runtimes.py), and the official files' facts to check
them against (``runtimes/`` in the shared Trainer folder) wherever those are present
(``tests/harness/test_runtimes.py``).
"""

from __future__ import annotations

import yaml

from kale_ext.job.published_runtimes import (  # noqa: F401 (the tests' names for them)
    ANCESTOR,
    CONTAINER_FACTS,
    FRAMEWORK,
    MPI,
    RUNTIMES,
    SSHD,
    TORCH_IMAGE,
    container,
    job,
    runtime,
)
from kale_ext.job.published_runtimes import published_manifest as runtime_manifest  # noqa: F401
from tests.harness.shared import trainer_dir


def facts_of(manifest: dict) -> dict:
    """The facts of a runtime manifest, in the form of ``RUNTIMES``."""
    jobs = []
    for step in manifest["spec"]["template"]["spec"]["replicatedJobs"]:
        pod = step["template"]["spec"]["template"]["spec"]
        labels = (step["template"].get("metadata") or {}).get("labels") or {}
        containers = [{k: c[k] for k in CONTAINER_FACTS if k in c} for c in pod["containers"]]
        after = tuple((d["name"], d["status"]) for d in step.get("dependsOn") or ())
        jobs.append(job(step["name"], *containers, ancestor=labels.get(ANCESTOR), after=after))
    meta = manifest["metadata"]
    return runtime(meta["name"], meta.get("labels") or {}, manifest["spec"]["mlPolicy"], *jobs)


def official_runtimes() -> dict[str, dict] | None:
    """The ClusterTrainingRuntimes in the shared Trainer folder by name, or None without it."""
    folder = trainer_dir()
    if folder is None:
        return None
    found = {}
    for path in sorted((folder / "runtimes").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ClusterTrainingRuntime":
                found[doc["metadata"]["name"]] = doc
    return found
