"""Many jobs as one: sweeps over parameters, comparing jobs, experiment tracking; and one job
from Python (handle.py: kale_ext.get_job(name) and kale_ext.run(notebook), .result() and .outputs).

A stage after backends (it submits and watches ordinary jobs through them) and before the front
ends (the CLI, the REST API and the magics call it).
"""
