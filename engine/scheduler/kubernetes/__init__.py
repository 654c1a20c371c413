"""Heron's Kubernetes scheduler: a topology's containers as two StatefulSets (container 0,
the Topology Master, and containers 1..N, the executors), a headless Service and a Secret
with the topology's keys, rendered from Jinja2 templates users can override.

The ``kubernetes`` client package is optional and imported only when the API is called
(``pip install 'heron-storm-compat[kubernetes]'``); rendering and ``dry_run`` need only
Jinja2 and PyYAML. See docs/kubernetes.md.

The names below load on first use (PEP 562): the CLI names this scheduler's errors for
every command, and the manifests' Jinja2 templates and the scheduler would otherwise be
loaded by ``heron list`` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.common.lazy_names import names_on_first_use

if TYPE_CHECKING:
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

#: each public name -> the submodule that defines it
_HOMES = {
    "KubernetesApiError": "errors", "KubernetesClientMissing": "errors",
    "KubernetesConfigError": "errors", "KubernetesConnectionError": "errors",
    "KubernetesSchedulerError": "errors",
    "redact": "manifests", "render_manifests": "manifests", "to_yaml": "manifests",
    "kubernetes_name": "names", "KubernetesScheduler": "scheduler",
}

__all__ = ["KubernetesApiError", "KubernetesClientMissing", "KubernetesConfigError",
           "KubernetesConnectionError", "KubernetesScheduler", "KubernetesSchedulerError",
           "kubernetes_name", "redact", "render_manifests", "to_yaml"]

__getattr__ = names_on_first_use(__name__, _HOMES)
