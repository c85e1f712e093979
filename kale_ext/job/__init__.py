"""Stage 2, job: a compiled notebook plus every submit-time choice → a validated JobSpec, and
its renderings (the TrainJob, the local command).

    distributed.py (DistributedConfig) · configcell.py (the `distributed` cell, read safely)
    k8s_values.py (Kubernetes value rules, as data)
    options.py (the one option table) · arguments.py (typed parameters) · runtimes.py
    defaults.py (the user's and the site's defaults) · spec.py (JobSpec) · trainjob.py

Imports only the compile stage below it.
"""

import sys
import types


class _CalledAsJob(types.ModuleType):
    """``from kale_ext import job`` gives the function ``kale_ext.job(name)``, until something
    imports this package, whose name the import system then binds there instead: so the package
    answers a call as the function does (kale_ext/__init__.py: job)."""

    def __call__(self, name, backend=None):
        return sys.modules["kale_ext"].open_job(name, backend)


sys.modules[__name__].__class__ = _CalledAsJob
