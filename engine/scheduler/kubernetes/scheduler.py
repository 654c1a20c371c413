"""Heron's Kubernetes scheduler: a topology's containers as two StatefulSets.

``launch`` creates, in this order, the Secret, the headless Service, the Topology
Master's StatefulSet and the executors' StatefulSet (see
:mod:`engine.scheduler.kubernetes.manifests`). When one create fails, the objects this
launch created are deleted again, newest first, and the error names the object that
failed and why (an object that already existed is never touched).

``update(proposed_packing)`` scales the executors' StatefulSet to the new plan's
container count, after reading it once: every executor pod has the one size written in
the pod template at submission (the largest container then). When the proposed plan's
largest container needs more CPU, memory or disk than that, the update is refused
before anything changes: changing the pod template would make Kubernetes replace every
executor pod, which is a restart of the whole topology, not an update. Kill and submit
again to resize. A smaller largest container keeps the current size.

``restart(container)``: ``-1`` deletes every pod of the topology (label selector
``app=heron,topology=K``), ``0`` the Topology Master's pod ``K-tmanager-0``, ``C`` the pod
``K-executors-(C-1)``; the StatefulSet controller starts each again.

``kill()`` deletes the executors' StatefulSet, the Topology Master's, the Service and the
Secret (StatefulSets with Foreground propagation, so their pods go first), tolerating
objects that are already gone and trying all four before reporting a failure.

``dry_run(...)`` returns the manifests as YAML documents with the Secret's values
replaced by ``<redacted>``, and makes no API call.

The topology name for ``update``, ``restart`` and ``kill`` is the one ``launch`` was given
or, in a fresh process, the config key ``heron.topology.name``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.packing import PackingPlan
from engine.scheduler.kubernetes import manifests, names
from engine.scheduler.kubernetes.client import KubernetesApi, KubernetesClient
from engine.scheduler.kubernetes.errors import (
    KubernetesApiError,
    KubernetesClientMissing,
    KubernetesConfigError,
    KubernetesConnectionError,
    KubernetesSchedulerError,
)
from engine.scheduler.kubernetes.quantities import parse_quantity
from engine.spi import Scheduler

log = logging.getLogger("heron.scheduler.kubernetes")

TOPOLOGY_NAME_KEY = "heron.topology.name"
_RESOURCE_NAMES = {"cpu": "CPU", "memory": "memory", "ephemeral-storage": "disk"}


@dataclass
class KubernetesLaunch:
    """What ``launch()`` submits when the scheduler was built for one submission (the
    submitter's): the topology, its packing plan, its keys file and the ZooKeeper digest."""

    topology_name: str
    topology_id: str
    packing: PackingPlan
    keys_file_bytes: bytes
    zk_auth_bytes: bytes | None = None


class KubernetesScheduler(Scheduler):
    """Launch, update, restart and kill one topology on Kubernetes.

    ``config`` holds the keys listed in :mod:`engine.scheduler.kubernetes.manifests`;
    ``client`` is anything with :class:`~engine.scheduler.kubernetes.client.KubernetesClient`'s
    methods (tests give a recording fake). Without one, a ``KubernetesClient`` is made on
    first use from ``heron.kubernetes.namespace`` and ``heron.kubernetes.context``.
    ``submission``: what a ``launch()`` without arguments submits.
    """

    def __init__(self, config: Mapping[str, Any], *, client: KubernetesApi | None = None,
                 submission: KubernetesLaunch | None = None) -> None:
        self.submission = submission
        self.config = dict(config)
        self.namespace = manifests.namespace_of(self.config)
        self.context = manifests.context_of(self.config)
        self._client = client
        name = self.config.get(TOPOLOGY_NAME_KEY)
        self.topology_name: str | None = str(name) if name else None
        #: containers of the packing plan last launched or updated here (1..N)
        self.containers: int | None = None

    # -- helpers --------------------------------------------------------------------------
    @property
    def client(self) -> KubernetesApi:
        if self._client is None:
            self._client = KubernetesClient(self.namespace, self.context)
        return self._client

    def _k8s_name(self) -> str:
        if not self.topology_name:
            raise KubernetesConfigError(
                f"no topology: launch one first or set {TOPOLOGY_NAME_KEY} in the config")
        return names.kubernetes_name(self.topology_name)

    def _render(self, topology_name: str, topology_id: str, packing: PackingPlan,
                keys_file_bytes: bytes, zk_auth_bytes: bytes | None) -> list[dict[str, Any]]:
        docs = manifests.render_manifests(topology_name, topology_id, packing, self.config,
                                          keys_file_bytes=keys_file_bytes,
                                          zk_auth_bytes=zk_auth_bytes)
        for doc in docs:
            namespace = doc["metadata"].get("namespace", self.namespace)
            if namespace != self.namespace:
                raise KubernetesConfigError(
                    f"{doc['kind']} {doc['metadata']['name']}: its template sets namespace "
                    f"{namespace!r}, but {manifests.NAMESPACE_KEY} is {self.namespace!r}")
        return docs

    # -- the scheduler contract ---------------------------------------------------------
    def dry_run(self, topology_name: str, topology_id: str, packing: PackingPlan,
                keys_file_bytes: bytes, zk_auth_bytes: bytes | None = None) -> str:
        """The manifests ``launch`` would create, as YAML, the Secret's values redacted."""
        docs = self._render(topology_name, topology_id, packing, keys_file_bytes, zk_auth_bytes)
        return manifests.to_yaml(manifests.redact(docs))

    def launch(self, topology_name: str | None = None, topology_id: str | None = None,
               packing: PackingPlan | None = None, keys_file_bytes: bytes | None = None,
               zk_auth_bytes: bytes | None = None) -> list[dict[str, Any]]:
        """Create the Secret, the Service and both StatefulSets; returns the manifests
        created. Nothing stays behind when a create fails. Without arguments, what the
        scheduler was built for (``submission``) is launched."""
        if topology_name is None:
            if self.submission is None:
                raise KubernetesConfigError("nothing to launch: give the topology, its "
                                            "packing plan and keys, or build the scheduler "
                                            "with submission=")
            sub = self.submission
            topology_name, topology_id, packing = sub.topology_name, sub.topology_id, sub.packing
            keys_file_bytes, zk_auth_bytes = sub.keys_file_bytes, sub.zk_auth_bytes
        assert topology_id is not None and packing is not None and keys_file_bytes is not None
        docs = self._render(topology_name, topology_id, packing, keys_file_bytes, zk_auth_bytes)
        created: list[dict[str, Any]] = []
        for doc in docs:
            try:
                self._create(doc)
            except KubernetesSchedulerError as exc:
                leftovers = self._undo(created)
                message = f"submitting {topology_name!r} to Kubernetes: {exc}"
                if created:
                    undone = ", ".join(_describe(d) for d in reversed(created))
                    message += f"; deleted what this submission had created ({undone})"
                if leftovers:
                    message += "; could not delete " + "; ".join(leftovers) + \
                        " (delete them by hand)"
                raise type(exc)(message) from None
            created.append(doc)
            log.info("created %s in namespace %s", _describe(doc), self.namespace)
        self.topology_name = topology_name
        self.containers = len(packing.containers)
        return docs

    def update(self, proposed_packing: PackingPlan) -> None:
        """Scale the executors' StatefulSet to the proposed plan's containers (see the
        module docstring for pods that would have to grow)."""
        k8s = self._k8s_name()
        replicas = manifests.executor_count(proposed_packing)
        executors = names.executors_name(k8s)
        current = self.client.read_stateful_set(executors)
        if current is None:
            raise KubernetesApiError(
                f"updating {self.topology_name!r}: StatefulSet {self.namespace}/{executors} "
                "does not exist (is the topology running in this namespace?)")
        pod_limits = _executor_limits(current)
        needed = manifests.resource_quantities(
            manifests.executor_resource(proposed_packing),
            ephemeral_storage="ephemeral-storage" in pod_limits)
        grown = _grown(pod_limits, needed)
        if grown:
            raise KubernetesSchedulerError(
                f"cannot update {self.topology_name!r}: the new packing plan's largest "
                f"container needs {', '.join(grown)}, more than the executor pods were "
                "sized for at submission; a StatefulSet has one pod template and changing "
                "it replaces every executor pod, so kill the topology and submit it again "
                "to resize (or keep the largest container within the current size)")
        self.client.scale_stateful_set(executors, replicas)
        log.info("scaled StatefulSet %s/%s to %d", self.namespace, executors, replicas)
        self.containers = replicas

    def restart(self, container: int = -1) -> None:
        """Delete the pod of ``container`` (-1: every pod of the topology) so that the
        StatefulSet controller starts it again."""
        k8s = self._k8s_name()
        if isinstance(container, bool) or not isinstance(container, int) or container < -1:
            raise KubernetesConfigError(
                f"container must be -1 (all) or a container number >= 0, got {container!r}")
        if container == -1:
            self.client.delete_pods(
                f"{manifests.LABEL_APP}={manifests.LABEL_APP_VALUE},"
                f"{manifests.LABEL_TOPOLOGY}={k8s}")
            return
        if self.containers is not None and container > self.containers:
            raise KubernetesConfigError(
                f"topology {self.topology_name!r} has containers 0..{self.containers}, "
                f"not {container}")
        pod = names.pod_name(k8s, container)
        if not self.client.delete_pod(pod):
            raise KubernetesApiError(
                f"restarting container {container} of {self.topology_name!r}: pod "
                f"{self.namespace}/{pod} does not exist")

    def kill(self) -> None:
        """Delete both StatefulSets, the Service and the Secret."""
        k8s = self._k8s_name()
        steps = [("StatefulSet", names.executors_name(k8s), self.client.delete_stateful_set),
                 ("StatefulSet", names.tmanager_name(k8s), self.client.delete_stateful_set),
                 ("Service", names.service_name(k8s), self.client.delete_service),
                 ("Secret", names.secret_name(k8s), self.client.delete_secret)]
        failures: list[str] = []
        for kind, name, delete in steps:
            try:
                if not delete(name):
                    log.info("%s %s/%s was already gone", kind, self.namespace, name)
            except (KubernetesConnectionError, KubernetesClientMissing) as exc:
                done = "; ".join(failures + [str(exc)])   # the next calls would fail alike
                raise type(exc)(f"killing {self.topology_name!r}: {done}") from None
            except KubernetesSchedulerError as exc:
                failures.append(str(exc))
        if failures:
            raise KubernetesApiError(f"killing {self.topology_name!r}: " + "; ".join(failures))
        self.containers = None

    def status(self) -> dict[str, Any]:
        """The topology, its namespace and the executor pods last launched or scaled to."""
        return {"scheduler": "kubernetes", "topology": self.topology_name,
                "namespace": self.namespace, "containers": self.containers}

    # -- internals ------------------------------------------------------------------------
    def _create(self, doc: Mapping[str, Any]) -> None:
        kind = doc.get("kind")
        if kind == "Secret":
            self.client.create_secret(doc)
        elif kind == "Service":
            self.client.create_service(doc)
        elif kind == "StatefulSet":
            self.client.create_stateful_set(doc)
        else:
            raise KubernetesConfigError(f"cannot create a {kind} ({doc['metadata']['name']}): "
                                        "templates must render a Secret, a Service or StatefulSets")

    def _undo(self, created: list[dict[str, Any]]) -> list[str]:
        """Delete ``created``, newest first; the objects that could not be deleted."""
        failures = []
        deleters = {"Secret": self.client.delete_secret, "Service": self.client.delete_service,
                    "StatefulSet": self.client.delete_stateful_set}
        for doc in reversed(created):
            try:
                deleters[doc["kind"]](doc["metadata"]["name"])
            except KubernetesSchedulerError as exc:
                failures.append(f"{_describe(doc)} ({exc})")
        return failures


def _describe(doc: Mapping[str, Any]) -> str:
    return f"{doc['kind']} {doc['metadata']['name']}"


def _executor_limits(statefulset: Mapping[str, Any]) -> dict[str, str]:
    """The limits of the executor container of a StatefulSet read from the API."""
    containers = (((statefulset.get("spec") or {}).get("template") or {}).get("spec") or {}) \
        .get("containers") or []
    chosen = next((c for c in containers if c.get("name") == "executor"),
                  containers[0] if containers else {})
    resources = chosen.get("resources") or {}
    return dict(resources.get("limits") or resources.get("requests") or {})


def _grown(current: Mapping[str, str], needed: Mapping[str, str]) -> list[str]:
    """``needed`` resources above ``current`` limits, as ``"memory 6Gi (pods: 4Gi)"``."""
    out = []
    for key, value in needed.items():
        have = current.get(key)
        if have is None:
            continue  # no limit on this resource: nothing to outgrow
        try:
            if parse_quantity(value) > parse_quantity(have):
                out.append(f"{_RESOURCE_NAMES.get(key, key)} {value} (pods: {have})")
        except ValueError:
            continue
    return out


__all__ = ["KubernetesLaunch", "KubernetesScheduler", "TOPOLOGY_NAME_KEY"]
