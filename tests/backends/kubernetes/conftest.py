"""The fake cluster's fixtures (tests/harness/kube_fixtures.py) for every test here."""

from tests.harness.kube_fixtures import backend, kube, kubeconfig  # noqa: F401 (fixtures)
