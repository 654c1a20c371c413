"""Heron's Kubernetes scheduler: a topology's containers as two StatefulSets (container 0,
the Topology Master, and containers 1..N, the executors), a headless Service and a Secret
with the topology's keys, rendered from Jinja2 templates users can override.

The ``kubernetes`` client package is optional and imported only when the API is called
(``pip install 'heron-storm-compat[kubernetes]'``); rendering and ``dry_run`` need only
Jinja2 and PyYAML. See docs/kubernetes.md.
"""

from engine.scheduler.kubernetes.errors import (
                                                KubernetesApiError,
                                                KubernetesClientMissing,
                                                KubernetesConfigError,
                                                KubernetesConnectionError,
                                                KubernetesSchedulerError,
)
from engine.scheduler.kubernetes.manifests import redact, render_manifests, to_yaml
from engine.scheduler.kubernetes.names import kubernetes_name
from engine.scheduler.kubernetes.scheduler import KubernetesScheduler

__all__ = ["KubernetesApiError", "KubernetesClientMissing", "KubernetesConfigError",
           "KubernetesConnectionError",
           "KubernetesScheduler", "KubernetesSchedulerError", "kubernetes_name", "redact",
           "render_manifests", "to_yaml"]
