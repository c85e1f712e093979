"""What the panel checks and draws by the server's own rules: the Kubernetes value rules, the
job options' bounds, the volume short forms' kinds and reserved paths, the metrics constants and
the states a jobs list filters by, as one JSON document generated from the Python source (the
TypeScript side holds no copy).

    python -m kale_ext.server.contract > labextension/src/contract.json

tests/server/test_contract.py keeps the committed file equal to this module's output.
"""

from __future__ import annotations

import json

from ..compile.notebook import TAGS, Role
from ..display import STATUSES
from ..job.k8s_values import rules
from ..job.options import OPTIONS
from ..job.outputs import MOUNT
from ..job.volumes import FORMS, KINDS, SHM_MOUNT, WORKDIR
from ..metrics import frontend_constants
from ..runs.search import SEARCHES
from ..runs.space import RANGES
from ..runs.sweep import GOALS, MAX_NAME, MAX_PARALLEL, MAX_TRIALS


def contract() -> dict:
    options = {
        o.name: {
            k: v
            for k, v in (
                ("kind", o.kind),
                ("minimum", o.minimum),
                ("maximum", o.maximum),
                ("pattern", o.pattern),
            )
            if v is not None
        }
        for o in OPTIONS
    }
    volumes = {"kinds": sorted(KINDS), "forms": FORMS, "workdir": WORKDIR,
               "shm_mount": SHM_MOUNT, "outputs_mount": MOUNT}  # fmt: skip
    sweep = {"ranges": list(RANGES), "searches": list(SEARCHES), "goals": list(GOALS),
             "max_trials": MAX_TRIALS, "max_parallel": MAX_PARALLEL,
             "max_name": MAX_NAME}  # fmt: skip
    tags = {"skip": next(r.pattern for r in TAGS if r.role is Role.SKIP)}
    jobs = {"statuses": list(STATUSES)}  # `kale-ext jobs --status`, the panel's state filter
    return {"k8s": rules(), "options": options, "metrics": frontend_constants(),
            "volumes": volumes, "sweep": sweep, "tags": tags, "jobs": jobs}  # fmt: skip


def render() -> str:
    return json.dumps(contract(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
