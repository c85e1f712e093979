"""A real Kubernetes control plane for the tests, built from Go modules at the versions pinned in
``versions.py``: etcd, kube-apiserver, kube-controller-manager (Job, garbage-collector,
namespace, service-account, PV binder controllers ...), kube-scheduler, the JobSet controller,
the Kubeflow Trainer controller manager (webhooks, status server, ``TrainJobStatus`` on) and
Kueue, with a process kubelet (``kubelet.py``) that runs the pods as local processes.

- ``build.py``: each binary built once per version into ``~/.cache/kale_ext/controlplane``.
- ``pki.py``: the CA, serving and client certificates, the service-account signing key.
- ``manifests.py``: CRDs, webhook configurations and runtimes from the modules' own source.
- ``controlplane.py``: starts and stops everything (``ControlPlane``).
- ``kubelet.py`` / ``logserver.py``: the Node, its pods, their logs for ``pods/log``.
- ``provisioner.py``: a default StorageClass whose claims get a folder volume.
- ``kueue.py``: Kueue's CRDs, webhooks and configuration.
- ``fixtures.py``: the session fixture ``control_plane``.

Start it by hand: ``python -m tests.harness.controlplane --kubeconfig /tmp/cp.kubeconfig``.
"""
