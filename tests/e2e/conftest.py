"""End to end on the emulated cluster (tests/harness/cluster): the CLI, the REST API and the
magics against a Kubernetes API served over HTTP, with Kubeflow Trainer's behaviour emulated
and each pod a real local process (so a 2-node job really trains)."""

from tests.harness.emulated import emulated_cluster, kube_api  # noqa: F401 (fixtures)
from tests.ipython.conftest import shell  # noqa: F401 (fixture: one IPython shell)
