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

**What it is conformant for.** ``tests/harness/controlplane/test_conformance.py`` runs the same
TrainJobs (built by kale_ext) through it and through the real control plane (kube-apiserver,
kube-controller-manager, kube-scheduler, JobSet v0.12.0, Kubeflow Trainer v2.3.0) and compares
its ``FIELDS``. It holds for the torch, xgboost and jax runtimes, CPU or GPU-requesting (those
stay Pending, ``PodScheduled=False/Unschedulable``), with kale_ext's runtime patches (its
workspace, configMap and secret volumes), env and resources, and for torchtune's runtime with
initializers (JobSet's ``dependsOn``: the dataset and model initializer Jobs first, the
trainer's once they Complete; their ``STORAGE_URI``; the ``volumeClaimPolicies`` claim): the
number of pods and their JobSet names and indexes; their env (``PET_*``, ``DMLC_*``, ``JAX_*``,
the TrainJobStatus variables, ``JOB_COMPLETION_INDEX``; compared by name, as the real Trainer's
order varies), command, args, image, resources, ports, volumes and mounts, labels and
annotations, hostname, restart policy, service account, node selector; the pods' phases and
the TrainJob's conditions over a job's life, its final ``jobsStatus`` and its stored spec (CRD
defaults, runtime-patch times). Over a job's life: to Complete; a node failing every attempt
(kale_ext's ``max_restarts``: the JobSet's failure policy, ``ReachedMaxRestarts``); a node
failing the first attempt only (every pod made again, labelled with the restart attempt, then
Complete); a suspension (kale_ext's stop: the pods stopped and gone, ``Suspended``); every pod
the job ever had, deleted ones too, with its phases and its container's exit codes and
reasons. It is **not** conformant, and a test that needs these uses the real control plane
(``tests/harness/controlplane``):

- MPI runtimes (``deepspeed-distributed``, ``mlx-distributed``): the MPI plugin (the hostfile
  ConfigMap, the SSH Secret, ``OMPI_*``, the launcher as a node) is not emulated; it runs the
  launcher's trainer job only (a ``NotEmulated`` event names the rest). MPI is tested on the
  real control plane only, and no test of the fast tier relies on the emulator for it;
- ``torch-distributed-with-cache`` (which the Trainer's v2.3.0 release does not install): its
  cache initializer's own plugin is not emulated (it runs as any initializer);
- the ServiceAccount admission plugin's ``kube-api-access-*`` volume and mount, and the API
  server's other pod defaults (dnsPolicy, tolerations, schedulerName, priority,
  terminationGracePeriodSeconds, enableServiceLinks): not made;
- Kueue's webhook, which on the real control plane adds a runtime patch of its own to every
  TrainJob (Kueue is off here unless asked);
- a watch from a resourceVersion (a client's watch started again) gets the objects changed
  since as they are now, each once as ``ADDED`` (``apiserver.py``), where a real API server
  replays every change since from its watch cache: a phase a pod went through meanwhile is
  not seen (the conformance test's watches are never started again during a run);
- JobSet objects (the emulator makes none: the TrainJob carries what a test reads), a
  container restarted in place after its Job failed (the kubelet's race with the Job
  controller's delete), the backoff limit's in-place restarts, deadlines, the scheduler's
  messages, pod conditions other than ``PodScheduled`` (the real control plane's pods are run by
  the harness's own process kubelet): not compared.

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
