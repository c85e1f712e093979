"""The real control plane's fixtures (tests/harness/controlplane/fixtures.py) for every test here."""

from tests.harness.controlplane.fixtures import control_plane, control_plane_env  # noqa: F401
