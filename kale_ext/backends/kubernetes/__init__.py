"""Kubernetes with Kubeflow Trainer: TrainJobs through the kubernetes client; status, events
and logs read from the TrainJob and its pods."""

from .backend import KubernetesBackend

__all__ = ["KubernetesBackend"]
