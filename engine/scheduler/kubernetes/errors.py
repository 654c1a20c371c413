"""What the Kubernetes scheduler raises.

:class:`KubernetesConfigError` is bad input (a missing or invalid configuration key, a
template that does not render): the CLI reports it as a user error (exit 2).
:class:`KubernetesApiError` is the API server refusing or not answering (a missing
kubeconfig, an unreachable server, a 409 or 403): exit 1. Both name the object and the
key or cause, in one line.
"""

from __future__ import annotations


class KubernetesSchedulerError(Exception):
    """Base of every error of the Kubernetes scheduler."""


class KubernetesConfigError(KubernetesSchedulerError, ValueError):
    """A configuration key, a topology name or a template the scheduler cannot use."""


class KubernetesApiError(KubernetesSchedulerError):
    """A call to the Kubernetes API failed; the message names the object and the cause."""


class KubernetesClientMissing(KubernetesSchedulerError):
    """The optional ``kubernetes`` package is not installed."""


class KubernetesConnectionError(KubernetesApiError):
    """No API server to talk to: the kubeconfig cannot be loaded or the server cannot be
    reached. Further calls would fail the same way."""
