"""Stage 2, job: a compiled notebook plus every submit-time choice → a validated JobSpec, and
its renderings (the TrainJob, the local command).

    distributed.py (DistributedConfig) · configcell.py (the `distributed` cell, read safely)
    k8s_values.py (Kubernetes value rules, as data)
    options.py (the one option table) · arguments.py (typed parameters) · runtimes.py
    defaults.py (the user's and the site's defaults) · spec.py (JobSpec) · trainjob.py

Imports only the compile stage below it.
"""
