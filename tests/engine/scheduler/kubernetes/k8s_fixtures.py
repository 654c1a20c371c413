"""Shared pieces of the Kubernetes scheduler tests: a config, packing plans, and a fake
client that records every call the scheduler makes (expectations are written by hand in
the tests, never recorded)."""

from __future__ import annotations

from typing import Any

from engine.packing import ContainerPlan, InstancePlan, PackingPlan, Resource
from engine.scheduler.kubernetes.errors import KubernetesApiError

GIB = 1024 ** 3
MIB = 1024 ** 2
SHA = "0123456789abcdef" * 4
KEYS = b"-----topology keys: public and secret CurveZMQ keys-----\n" * 3
ZK_AUTH = b"heron:s3cret-digest-password"


def config(**extra: Any) -> dict[str, Any]:
    conf = {
        "heron.executor.docker.image": "registry.example/heron-storm-compat:0.1.0",
        "heron.package.url": "https://packages.example/wc.tar.gz?token=a&b=c",
        "heron.package.sha256": SHA,
        "heron.statemgr.connection.string": "zk-0.zk:2181,zk-1.zk:2181",
        "heron.statemgr.root.path": "/heron",
        "heron.kubernetes.namespace": "streaming",
    }
    conf.update({k.replace("__", "."): v for k, v in extra.items()})
    return conf


def inst(component: str, task: int, index: int, ram: int = GIB, cpu: float = 1.0,
         disk: int = GIB) -> InstancePlan:
    return InstancePlan(component, task, index, Resource(ram, cpu, disk))


def one_container_plan() -> PackingPlan:
    return PackingPlan("wc-one", [ContainerPlan(1, [inst("spout", 1, 0), inst("bolt", 2, 0)],
                                                required=Resource(4 * GIB, 3.0, 14 * GIB))])


def three_container_plan() -> PackingPlan:
    """Three containers of different sizes: the largest RAM, CPU and disk are each in a
    different container, so per-resource maxima are checked."""
    return PackingPlan("wc-three", [
        ContainerPlan(1, [inst("spout", 1, 0)], required=Resource(6 * GIB, 1.5, 2 * GIB)),
        ContainerPlan(2, [inst("bolt", 2, 0), inst("bolt", 3, 1)],
                      required=Resource(2 * GIB, 2.25, 3 * GIB)),
        ContainerPlan(3, [inst("sink", 4, 0, ram=512 * MIB, cpu=0.5, disk=5 * GIB)]),
    ])


class FakeClient:
    """Records calls as ``(method, argument...)``; ``fail`` maps a call, e.g.
    ``("create_stateful_set", "wc-tmanager")``, to the error it raises. Deleting or
    reading something never created answers as the API would (False, None)."""

    def __init__(self, fail: dict[tuple[str, str], Exception] | None = None,
                 existing: dict[str, dict[str, Any]] | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail or {}
        self.objects: dict[str, dict[str, Any]] = dict(existing or {})
        self.missing_pods: set[str] = set()

    def _record(self, method: str, key: str, *args: Any) -> None:
        self.calls.append((method, key, *args))
        error = self.fail.get((method, key))
        if error is not None:
            raise error

    def _create(self, method: str, body: dict[str, Any]) -> None:
        name = body["metadata"]["name"]
        self._record(method, name)
        if f"{body['kind']}/{name}" in self.objects:
            raise KubernetesApiError(f"creating {body['kind']} {name} failed: HTTP 409 Conflict")
        self.objects[f"{body['kind']}/{name}"] = body

    def create_secret(self, body):
        self._create("create_secret", body)

    def create_service(self, body):
        self._create("create_service", body)

    def create_stateful_set(self, body):
        self._create("create_stateful_set", body)

    def read_stateful_set(self, name):
        self._record("read_stateful_set", name)
        return self.objects.get(f"StatefulSet/{name}")

    def scale_stateful_set(self, name, replicas):
        self._record("scale_stateful_set", name, replicas)

    def delete_pod(self, name):
        self._record("delete_pod", name)
        return name not in self.missing_pods

    def delete_pods(self, label_selector):
        self._record("delete_pods", label_selector)

    def _delete(self, method: str, kind: str, name: str) -> bool:
        self._record(method, name)
        return self.objects.pop(f"{kind}/{name}", None) is not None

    def delete_stateful_set(self, name):
        return self._delete("delete_stateful_set", "StatefulSet", name)

    def delete_service(self, name):
        return self._delete("delete_service", "Service", name)

    def delete_secret(self, name):
        return self._delete("delete_secret", "Secret", name)
