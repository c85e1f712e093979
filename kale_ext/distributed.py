"""The public home of DistributedConfig, as a `distributed` cell imports it:

    from kale_ext.distributed import DistributedConfig, V1EnvVar, V1RunPolicy

It lives in kale_ext.job.distributed; the kubernetes client's models load on first use.
"""

from .job import distributed as _impl
from .job.distributed import (  # noqa: F401
    DistributedConfig,
    V1RunPolicy,
    V1SchedulingPolicy,
    __all__,
)


def __getattr__(name: str):
    return _impl.__getattr__(name)
