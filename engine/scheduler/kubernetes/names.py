"""Kubernetes names for a topology's objects.

Every object of a topology is named from one *Kubernetes name* ``K`` derived from the
topology name:

* ``K-tmanager``: the StatefulSet of container 0 (the Topology Master), pod ``K-tmanager-0``;
* ``K-executors``: the StatefulSet of containers 1..N, pod ``K-executors-(C-1)`` runs
  container ``C``;
* ``K``: the headless Service (Heron names it after the topology too);
* ``K-keys``: the Secret holding the topology's keys and the ZooKeeper digest.

``K`` must be a DNS-1035 label (a Service name: lower-case letters, digits and ``-``,
starting with a letter) short enough that ``K-executors`` stays within 52 characters
(the StatefulSet controller labels each pod with the set's name plus an 11-character
revision hash, and label values are limited to 63). A topology name that already
qualifies is used as it is; any other is mapped deterministically: lower-cased, every run
of other characters turned into ``-``, a ``t-`` prefix when it would not start with a
letter, cut to fit, and ``-`` plus 6 hex digits of the name's SHA-256 appended, so that
``word_count`` and ``word-count`` never share objects. The original name stays in the
``heron/topology-name`` annotation and in the pod command.
"""

from __future__ import annotations

import hashlib
import re

from engine.scheduler.kubernetes.errors import KubernetesConfigError

#: the longest Kubernetes name: ``K-executors`` must stay within 52 characters
MAX_NAME = 52 - len("-executors")
_DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_HASH_LEN = 6


def is_dns_1123_label(value: str) -> bool:
    return len(value) <= 63 and bool(_DNS_1123.match(value))


def kubernetes_name(topology_name: str) -> str:
    """The Kubernetes name of ``topology_name`` (see the module docstring)."""
    if not isinstance(topology_name, str) or not topology_name.strip():
        raise KubernetesConfigError(
            f"a topology name must be a non-empty string, got {topology_name!r}")
    if len(topology_name) <= MAX_NAME and _DNS_1035.match(topology_name):
        return topology_name
    digest = hashlib.sha256(topology_name.encode("utf-8")).hexdigest()[:_HASH_LEN]
    base = re.sub(r"[^a-z0-9]+", "-", topology_name.lower()).strip("-")
    if not base or not base[0].isalpha():
        base = f"t-{base}" if base else "t"
    base = base[:MAX_NAME - _HASH_LEN - 1].rstrip("-")
    return f"{base}-{digest}"


def tmanager_name(k8s_name: str) -> str:
    return f"{k8s_name}-tmanager"


def executors_name(k8s_name: str) -> str:
    return f"{k8s_name}-executors"


def service_name(k8s_name: str) -> str:
    return k8s_name


def secret_name(k8s_name: str) -> str:
    return f"{k8s_name}-keys"


def pod_name(k8s_name: str, container: int) -> str:
    """The pod running ``container`` (0: the Topology Master's)."""
    if container == 0:
        return f"{tmanager_name(k8s_name)}-0"
    return f"{executors_name(k8s_name)}-{container - 1}"
