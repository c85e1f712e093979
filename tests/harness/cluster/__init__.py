"""An emulated Kubernetes cluster with Kubeflow Trainer v2.3, for tests: the production code
path (the real kubernetes client, real HTTP, watches, followed pod logs) runs against it
unchanged, through a generated kubeconfig.

- ``apiserver.py``: the API server, built on kmock's ``KubernetesEmulator`` (HTTP on a loopback
  port the OS picks, discovery, storage, watches), with 201 creates, selectors, patches,
  deletion with propagation and garbage collection, Events;
- ``admission.py``: what it refuses (TrainJobs against the strict schema, the CRD's CEL rules
  and the Trainer's webhooks, as ``tests/harness/crd.py`` and ``trainer_rules.py`` state them;
  ConfigMaps and Secrets), with the API server's 400/403/409/422 ``Status`` answers;
- ``render.py`` and ``trainer.py``: the Trainer (with JobSet and the Job controller): a
  TrainJob's pods as Trainer v2.3 renders them, conditions, events, restarts and failure;
- ``kubelet.py``, ``volumes.py``, ``podlogs.py``: the scheduler and kubelet: each pod's
  container command runs as a local process with the pod's environment (the torch plugin's
  ``PET_*``), volumes as folders, in its own working folder; phases, container states, exit
  codes, logs (followed) and events follow what happens;
- ``kueue.py`` (off unless asked: ``kueue=True``): Kueue for TrainJobs with a queue label:
  their Workloads, admission (a count quota), starting admitted jobs, deactivation;
- ``faults.py``: image pull failures, unschedulable pods, OOM kills, crashes, API 429/500/504.

Use it as a context manager (``with EmulatedCluster(tmp_path) as cluster:``, then
``KUBECONFIG=cluster.kubeconfig``), through the ``emulated_cluster`` fixture
(``tests/harness/emulated.py``), or from a shell without pytest (the browser tests)::

    python -m tests.harness.cluster --kubeconfig /tmp/emulated/kubeconfig

Needs ``kmock`` (the test extra; Python ≥ 3.11).
"""

__all__ = ["EmulatedCluster"]


def __getattr__(name: str):
    """``EmulatedCluster`` on first use: the pure modules (render, objects) need no kmock."""
    if name == "EmulatedCluster":
        from tests.harness.cluster.cluster import EmulatedCluster

        return EmulatedCluster
    raise AttributeError(name)
