"""The emulated cluster's fixtures (tests/harness/emulated.py) for every test here."""

from tests.harness.emulated import emulated_cluster, kube_api  # noqa: F401 (fixtures)
