"""The calls the Kubernetes scheduler makes, over the official ``kubernetes`` client.

:class:`KubernetesClient` is deliberately small: it exposes exactly what
:class:`~engine.scheduler.kubernetes.scheduler.KubernetesScheduler` uses, one method per
API call, each in one namespace:

==============================  ======================================================
``create_secret(body)``         ``CoreV1Api.create_namespaced_secret``
``create_service(body)``        ``CoreV1Api.create_namespaced_service``
``create_stateful_set(body)``   ``AppsV1Api.create_namespaced_stateful_set``
``read_stateful_set(name)``     ``AppsV1Api.read_namespaced_stateful_set`` (as a dict)
``scale_stateful_set(n, r)``    ``AppsV1Api.patch_namespaced_stateful_set_scale``
``delete_pod(name)``            ``CoreV1Api.delete_namespaced_pod``
``delete_pods(selector)``       ``CoreV1Api.delete_collection_namespaced_pod``
``delete_stateful_set(name)``   ``AppsV1Api.delete_namespaced_stateful_set`` (Foreground)
``delete_service(name)``        ``CoreV1Api.delete_namespaced_service``
``delete_secret(name)``         ``CoreV1Api.delete_namespaced_secret``
==============================  ======================================================

The ``delete_*`` calls of one object return False when it does not exist (404), True
when it was deleted. Every other failure (an ``ApiException``, a missing or broken
kubeconfig, a server that cannot be reached) is raised as one
:class:`~engine.scheduler.kubernetes.errors.KubernetesApiError` naming the object, the
namespace and the cause. Undoing a half-done submission is the scheduler's job (it knows
what it created).

The ``kubernetes`` package is optional (``pip install 'heron-storm-compat[kubernetes]'``)
and imported only when a client is first used. The kubeconfig is the user's (``KUBECONFIG``
or ``~/.kube/config``, context ``heron.kubernetes.context`` or its current one); inside a
pod with no kubeconfig, the pod's service account is used.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from engine.scheduler.kubernetes.errors import (
    KubernetesApiError,
    KubernetesClientMissing,
    KubernetesConnectionError,
)

log = logging.getLogger("heron.scheduler.kubernetes")

INSTALL_HINT = "pip install 'heron-storm-compat[kubernetes]'"
#: seconds one API call may take (connect and read)
REQUEST_TIMEOUT_SECS = 30.0


def import_kubernetes() -> Any:
    """The ``kubernetes`` package, or a clear error telling how to install it."""
    try:  # deferred: an optional dependency ('heron-storm-compat[kubernetes]')
        import kubernetes  # noqa: F401
        import kubernetes.client  # noqa: F401
        import kubernetes.config  # noqa: F401
    except ImportError as exc:
        raise KubernetesClientMissing(
            f"the Kubernetes scheduler needs the 'kubernetes' Python package ({exc}); "
            f"install it with: {INSTALL_HINT}") from None
    return kubernetes


def describe_failure(exc: BaseException) -> str:
    """One line saying why an API call failed."""
    status = getattr(exc, "status", None)
    if status is not None and hasattr(exc, "reason"):  # ApiException
        detail = ""
        body = getattr(exc, "body", None)
        if body:
            try:
                detail = json.loads(body).get("message") or ""
            except (ValueError, AttributeError, TypeError):
                detail = str(body)[:300]
        text = f"HTTP {status} {exc.reason or ''}".strip()
        return f"{text}: {detail}" if detail else text
    reason = getattr(exc, "reason", None)  # urllib3's MaxRetryError names the real cause
    if reason is not None and type(exc).__name__ == "MaxRetryError":
        return f"cannot reach the Kubernetes API server ({reason})"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


class KubernetesApi(Protocol):
    """What the scheduler asks of the cluster: :class:`KubernetesClient`, or a recording
    fake in the tests."""

    def create_secret(self, body: Mapping[str, Any]) -> None: ...
    def create_service(self, body: Mapping[str, Any]) -> None: ...
    def create_stateful_set(self, body: Mapping[str, Any]) -> None: ...
    def read_stateful_set(self, name: str) -> dict[str, Any] | None: ...
    def scale_stateful_set(self, name: str, replicas: int) -> None: ...
    def delete_pod(self, name: str) -> bool: ...
    def delete_pods(self, label_selector: str) -> None: ...
    def delete_stateful_set(self, name: str) -> bool: ...
    def delete_service(self, name: str) -> bool: ...
    def delete_secret(self, name: str) -> bool: ...


class KubernetesClient:
    """The scheduler's API calls in ``namespace``; ``context`` picks the kubeconfig
    context. ``api_client`` (a ``kubernetes.client.ApiClient``) skips loading the
    kubeconfig; tests give one pointing at a local stub server."""

    def __init__(self, namespace: str, context: str | None = None, *,
                 api_client: Any | None = None,
                 request_timeout: float = REQUEST_TIMEOUT_SECS) -> None:
        self.namespace = namespace
        self.context = context
        self.request_timeout = request_timeout
        self._api_client = api_client
        self._apps: Any = None
        self._core: Any = None
        # raw responses: nothing the scheduler does needs the client's models, and a
        # newer server's answer can then never fail to deserialize (errors still raise)
        self._options = {"_request_timeout": request_timeout, "_preload_content": False}

    # -- connection ---------------------------------------------------------------------
    def _connect(self) -> None:
        if self._apps is not None:
            return
        kubernetes = import_kubernetes()
        if self._api_client is None:
            self._api_client = self._load_config(kubernetes)
        self._apps = kubernetes.client.AppsV1Api(self._api_client)
        self._core = kubernetes.client.CoreV1Api(self._api_client)

    def _load_config(self, kubernetes: Any) -> Any:
        configuration = kubernetes.client.Configuration()
        where = f"context {self.context!r}" if self.context else "the current context"
        # read KUBECONFIG now: the package reads it once, when it is imported
        config_file = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        try:
            kubernetes.config.load_kube_config(config_file=config_file, context=self.context,
                                               client_configuration=configuration)
        except Exception as exc:  # ConfigException, a missing or unreadable file, bad YAML
            if self.context is None and _in_cluster():
                try:
                    kubernetes.config.load_incluster_config(client_configuration=configuration)
                    return kubernetes.client.ApiClient(configuration)
                except Exception:
                    pass
            raise KubernetesConnectionError(
                f"cannot load the kubeconfig {config_file} ({where}): "
                f"{describe_failure(exc)}") from None
        return kubernetes.client.ApiClient(configuration)

    def _call(self, action: str, kind: str, name: str, fn: Callable[[], Any],
              *, missing_ok: bool = False) -> Any:
        """Run one API call; a 404 returns the sentinel ``_MISSING`` when ``missing_ok``."""
        self._connect()
        try:
            return _body(fn())
        except Exception as exc:
            if missing_ok and getattr(exc, "status", None) == 404:
                return _MISSING
            error = KubernetesConnectionError if _unreachable(exc) else KubernetesApiError
            raise error(f"{action} {kind} {self.namespace}/{name} failed: "
                        f"{describe_failure(exc)}") from None

    # -- create -------------------------------------------------------------------------
    def create_secret(self, body: Mapping[str, Any]) -> None:
        self._call("creating", "Secret", _name(body), lambda: self._core.create_namespaced_secret(
            self.namespace, dict(body), **self._options))

    def create_service(self, body: Mapping[str, Any]) -> None:
        self._call("creating", "Service", _name(body), lambda: self._core.create_namespaced_service(
            self.namespace, dict(body), **self._options))

    def create_stateful_set(self, body: Mapping[str, Any]) -> None:
        self._call("creating", "StatefulSet", _name(body),
                   lambda: self._apps.create_namespaced_stateful_set(
                       self.namespace, dict(body), **self._options))

    # -- read and scale -----------------------------------------------------------------
    def read_stateful_set(self, name: str) -> dict[str, Any] | None:
        """The StatefulSet as the API's JSON (camelCase keys), None when it does not exist."""
        result = self._call("reading", "StatefulSet", name,
                            lambda: self._apps.read_namespaced_stateful_set(
                                name, self.namespace, **self._options),
                            missing_ok=True)
        if result is _MISSING:
            return None
        return json.loads(result or b"{}")

    def scale_stateful_set(self, name: str, replicas: int) -> None:
        self._call("scaling", "StatefulSet", name,
                   lambda: self._apps.patch_namespaced_stateful_set_scale(
                       name, self.namespace, {"spec": {"replicas": int(replicas)}},
                       **self._options))

    # -- delete -------------------------------------------------------------------------
    def delete_pod(self, name: str) -> bool:
        return self._call("deleting", "Pod", name, lambda: self._core.delete_namespaced_pod(
            name, self.namespace, **self._options),
            missing_ok=True) is not _MISSING

    def delete_pods(self, label_selector: str) -> None:
        self._call("deleting", "Pods", f"[{label_selector}]",
                   lambda: self._core.delete_collection_namespaced_pod(
                       self.namespace, label_selector=label_selector,
                       **self._options))

    def delete_stateful_set(self, name: str) -> bool:
        return self._call("deleting", "StatefulSet", name,
                          lambda: self._apps.delete_namespaced_stateful_set(
                              name, self.namespace, propagation_policy="Foreground",
                              **self._options),
                          missing_ok=True) is not _MISSING

    def delete_service(self, name: str) -> bool:
        return self._call("deleting", "Service", name,
                          lambda: self._core.delete_namespaced_service(
                              name, self.namespace, **self._options),
                          missing_ok=True) is not _MISSING

    def delete_secret(self, name: str) -> bool:
        return self._call("deleting", "Secret", name,
                          lambda: self._core.delete_namespaced_secret(
                              name, self.namespace, **self._options),
                          missing_ok=True) is not _MISSING


_MISSING = object()


def _body(response: Any) -> bytes:
    """The bytes of a raw urllib3 response, its connection released."""
    data = getattr(response, "data", b"")
    release = getattr(response, "release_conn", None)
    if release is not None:
        release()
    return data


def _name(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("name") or "?")


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the server could not be reached at all (not an API answer)."""
    if getattr(exc, "status", None):
        return False
    return type(exc).__name__ in ("MaxRetryError", "NewConnectionError", "ConnectTimeoutError") \
        or isinstance(exc, OSError)


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
