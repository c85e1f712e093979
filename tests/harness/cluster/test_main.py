"""The emulated cluster without pytest (`python -m tests.harness.cluster`), as the browser
tests start it: it serves, writes the kubeconfig, and stops with its pods on SIGTERM."""

import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("kmock", reason="the emulated cluster is built on kmock (Python ≥ 3.11)")

from tests.conftest import ROOT  # noqa: E402


def test_it_serves_until_told_to_stop(tmp_path):
    kubeconfig = tmp_path / "kc" / "config"
    command = [sys.executable, "-m", "tests.harness.cluster", "--kubeconfig", str(kubeconfig),
               "--folder", str(tmp_path / "pods")]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline()
        assert ready.startswith("ready http://127.0.0.1:"), ready
        from kale_ext.backends.kubernetes import KubernetesBackend

        backend = KubernetesBackend(config_file=str(kubeconfig))
        assert backend.namespace == "team"
        assert "torch-distributed" in [r.name for r in backend.list_runtimes()]
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
    assert not os.path.exists(tmp_path / "pods" / "team")  # no pod ever ran
