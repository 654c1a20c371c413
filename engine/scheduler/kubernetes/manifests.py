"""The Kubernetes objects of a topology, rendered from Jinja2 templates.

:func:`render_manifests` returns, in the order they must be created:

1. a Secret ``K-keys`` (``secret.yaml.j2``): the topology's keys file as
   ``topology.keys`` and, when given, the ZooKeeper digest as ``zk-auth`` (base64);
2. a headless Service ``K`` (``service.yaml.j2``): ``clusterIP: None``, selecting
   ``app=heron, topology=K``;
3. a StatefulSet ``K-tmanager`` (``tmanager-statefulset.yaml.j2``): container 0, the
   Topology Master, 1 replica;
4. a StatefulSet ``K-executors`` (``executors-statefulset.yaml.j2``): containers 1..N,
   N replicas, ``podManagementPolicy: Parallel``, ``serviceName: K``.

``K`` is :func:`engine.scheduler.kubernetes.names.kubernetes_name` of the topology name.
Every object carries the labels ``app=heron, topology=K`` and the annotations
``heron/topology-name``, ``heron/topology-id`` and ``heron/packing-plan``; each
StatefulSet's pods add ``role=tmanager`` or ``role=executors`` (the two sets' selectors
must not overlap). Both pod templates come from ``_pod.yaml.j2``.

Configuration keys read from ``config`` (a mapping of dotted keys; strings are accepted
for numbers and booleans):

``heron.executor.docker.image`` (required)
    The image every pod runs; it must hold Python 3, ``sh`` and this package.
``heron.package.url``, ``heron.package.sha256`` (required)
    Where each pod fetches the topology package, and its SHA-256 (64 hex digits).
``heron.statemgr.connection.string`` (required)
    The ZooKeeper ensemble (``host:port,...``) the pods use as state manager.
``heron.statemgr.root.path`` (default ``/heron``)
    The ZooKeeper root of the engine's tree.
``heron.kubernetes.namespace`` (default ``default``)
``heron.kubernetes.templates.dir`` (optional)
    A directory whose files replace ours by name (``secret.yaml.j2``,
    ``service.yaml.j2``, ``tmanager-statefulset.yaml.j2``,
    ``executors-statefulset.yaml.j2``, ``_pod.yaml.j2``); the others still come from us.
``heron.kubernetes.tmanager.cpu`` / ``.ram`` / ``.disk`` (default 1 core, 1 GiB, 1 GiB)
    The Topology Master's pod: it is not in the packing plan, so it gets these.
``heron.kubernetes.ephemeral.storage`` (default true)
    Whether the packing plan's disk becomes an ``ephemeral-storage`` request and limit.
``heron.kubernetes.image.pull.policy`` (optional: ``Always``, ``IfNotPresent``, ``Never``)
``heron.kubernetes.termination.grace.secs`` (default 30)

Resources: requests equal limits (Kubernetes' Guaranteed class when CPU and memory are
both set). The executors' pods get the largest container of the packing plan, each of
CPU, RAM and disk taken separately (a container's ``required`` resources, or what its
instances use when ``required`` is empty): a StatefulSet has one pod template, so, as in
Heron, every executor pod is sized for the largest container. A resource that is zero
everywhere is left out.

The pod command (``sh -c``): ``SHARD`` is ``0`` in the Topology Master's pod and the pod
ordinal plus one in the executors' (``SHARD=$(( ${POD_NAME##*-} + 1 ))``), then::

    exec python3 -m engine.executor.remote --topology NAME --topology-id ID
        --container "$SHARD" --package URL --sha256 HEX --zk HOSTS --zk-root ROOT
        [--zk-auth-file /var/run/heron/secrets/zk-auth]
        --keys-file /var/run/heron/secrets/topology.keys --bind-host "$POD_IP"

with ``POD_NAME`` and ``POD_IP`` from the downward API and the Secret's files mounted
read-only, mode 0400, in ``/var/run/heron/secrets``, one ``subPath`` mount per file (a
plain secret volume shows each file as a symlink, which the executor refuses to read
secrets through; the files belong to root, so the executor must run as root in the pod).
``--zk-auth-file`` is passed only when a digest was given. Every argument is shell-quoted.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
import yaml

from engine.packing import ContainerPlan, PackingPlan, Resource
from engine.scheduler.kubernetes import names
from engine.scheduler.kubernetes.errors import KubernetesConfigError
from engine.scheduler.kubernetes.quantities import bytes_quantity, cpu_quantity
from engine.spi.resources import GIB

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
#: the templates rendered, in creation order (``_pod.yaml.j2`` is imported by the two
#: StatefulSets)
TEMPLATE_NAMES = ("secret.yaml.j2", "service.yaml.j2", "tmanager-statefulset.yaml.j2",
                  "executors-statefulset.yaml.j2")

SECRETS_DIR = "/var/run/heron/secrets"
KEYS_FILE = "topology.keys"
ZK_AUTH_FILE = "zk-auth"
REDACTED = "<redacted>"

IMAGE_KEY = "heron.executor.docker.image"
PACKAGE_URL_KEY = "heron.package.url"
PACKAGE_SHA256_KEY = "heron.package.sha256"
ZK_HOSTS_KEY = "heron.statemgr.connection.string"
ZK_ROOT_KEY = "heron.statemgr.root.path"
NAMESPACE_KEY = "heron.kubernetes.namespace"
CONTEXT_KEY = "heron.kubernetes.context"
TEMPLATES_DIR_KEY = "heron.kubernetes.templates.dir"
TMANAGER_CPU_KEY = "heron.kubernetes.tmanager.cpu"
TMANAGER_RAM_KEY = "heron.kubernetes.tmanager.ram"
TMANAGER_DISK_KEY = "heron.kubernetes.tmanager.disk"
EPHEMERAL_STORAGE_KEY = "heron.kubernetes.ephemeral.storage"
IMAGE_PULL_POLICY_KEY = "heron.kubernetes.image.pull.policy"
GRACE_KEY = "heron.kubernetes.termination.grace.secs"

DEFAULT_NAMESPACE = "default"
DEFAULT_ZK_ROOT = "/heron"
#: the Topology Master's pod when heron.kubernetes.tmanager.* are not set
DEFAULT_TMANAGER_RESOURCE = Resource(ram=GIB, cpu=1.0, disk=GIB)
DEFAULT_GRACE_SECS = 30
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")

LABEL_APP = "app"
LABEL_APP_VALUE = "heron"
LABEL_TOPOLOGY = "topology"
LABEL_ROLE = "role"
ANNOTATION_TOPOLOGY_NAME = "heron/topology-name"
ANNOTATION_TOPOLOGY_ID = "heron/topology-id"
ANNOTATION_PACKING_PLAN = "heron/packing-plan"

_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


# -- configuration --------------------------------------------------------------------
def _required(config: Mapping[str, Any], key: str, what: str) -> str:
    value = config.get(key)
    if value is None or not str(value).strip():
        raise KubernetesConfigError(f"{key} is required for the Kubernetes scheduler ({what})")
    return str(value).strip()


def _number(config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise KubernetesConfigError(f"{key} must be a number, got {value!r}") from None
    if number < 0 or number != number:
        raise KubernetesConfigError(f"{key} must not be negative, got {value!r}")
    return number


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise KubernetesConfigError(f"{key} must be true or false, got {value!r}")


def namespace_of(config: Mapping[str, Any]) -> str:
    namespace = str(config.get(NAMESPACE_KEY) or DEFAULT_NAMESPACE).strip()
    if not names.is_dns_1123_label(namespace):
        raise KubernetesConfigError(
            f"{NAMESPACE_KEY}: {namespace!r} is not a valid namespace (a DNS-1123 label: "
            "lower-case letters, digits and '-', at most 63 characters)")
    return namespace


def context_of(config: Mapping[str, Any]) -> str | None:
    value = config.get(CONTEXT_KEY)
    return str(value).strip() or None if value is not None else None


def tmanager_resource(config: Mapping[str, Any]) -> Resource:
    """What container 0's pod requests: heron.kubernetes.tmanager.{cpu,ram,disk}."""
    d = DEFAULT_TMANAGER_RESOURCE
    return Resource(ram=int(_number(config, TMANAGER_RAM_KEY, d.ram)),
                    cpu=_number(config, TMANAGER_CPU_KEY, d.cpu),
                    disk=int(_number(config, TMANAGER_DISK_KEY, d.disk)))


def container_size(container: ContainerPlan) -> Resource:
    """A container's size: its ``required`` resources, or its instances' when unset."""
    required = container.required
    return required if required != Resource() else container.used


def executor_resource(packing: PackingPlan) -> Resource:
    """The executors' pod size: the largest container, per resource."""
    return Resource.largest(container_size(c) for c in packing.containers)


def resource_quantities(resource: Resource, *, ephemeral_storage: bool = True) -> dict[str, str]:
    """``{"cpu": ..., "memory": ..., "ephemeral-storage": ...}``, leaving out zeros."""
    out: dict[str, str] = {}
    if resource.cpu > 0:
        out["cpu"] = cpu_quantity(resource.cpu)
    if resource.ram > 0:
        out["memory"] = bytes_quantity(resource.ram)
    if ephemeral_storage and resource.disk > 0:
        out["ephemeral-storage"] = bytes_quantity(resource.disk)
    return out


def executor_count(packing: PackingPlan) -> int:
    """The executors' replicas: the plan's containers, which must be numbered 1..N."""
    ids = sorted(c.id for c in packing.containers)
    if not ids:
        raise KubernetesConfigError(f"packing plan {packing.id!r} has no containers")
    if ids != list(range(1, len(ids) + 1)):
        raise KubernetesConfigError(
            f"packing plan {packing.id!r}: container ids must be 1..{len(ids)} (pod "
            f"K-executors-i runs container i+1), got {ids}")
    return len(ids)


# -- the pod command --------------------------------------------------------------------
def _quote(arg: str) -> str:
    """Shell-quote one argument (``shlex.quote``, spelled out so "$SHARD" is left alone)."""
    if arg and re.fullmatch(r"[A-Za-z0-9@%+=:,./_-]+", arg):
        return arg
    return "'" + arg.replace("'", "'\"'\"'") + "'"


def pod_script(*, shard: str, topology_name: str, topology_id: str, package_url: str,
               package_sha256: str, zk_hosts: str, zk_root: str, zk_auth: bool) -> str:
    """The ``sh -c`` script of a pod; ``shard`` is the shell assignment of ``SHARD``."""
    args = ["python3", "-m", "engine.executor.remote",
            "--topology", topology_name, "--topology-id", topology_id]
    quoted = " ".join(_quote(a) for a in args) + ' --container "$SHARD"'
    rest = ["--package", package_url, "--sha256", package_sha256,
            "--zk", zk_hosts, "--zk-root", zk_root]
    if zk_auth:
        rest += ["--zk-auth-file", f"{SECRETS_DIR}/{ZK_AUTH_FILE}"]
    rest += ["--keys-file", f"{SECRETS_DIR}/{KEYS_FILE}"]
    quoted += " " + " ".join(_quote(a) for a in rest) + ' --bind-host "$POD_IP"'
    return f"SHARD={shard} && exec {quoted}"


TMANAGER_SHARD = "0"
EXECUTORS_SHARD = "$(( ${POD_NAME##*-} + 1 ))"


# -- rendering --------------------------------------------------------------------------
def _environment(templates_dir: str | Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if templates_dir is not None:
        path = Path(templates_dir).expanduser()
        if not path.is_dir():
            raise KubernetesConfigError(
                f"{TEMPLATES_DIR_KEY}: {str(path)!r} is not a directory")
        loaders.append(jinja2.FileSystemLoader(str(path)))
    loaders.append(jinja2.FileSystemLoader(str(TEMPLATES_DIR)))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    env.filters["json"] = _json_filter
    return env


def _json_filter(value: Any) -> str:
    """A value as JSON, which is YAML: quoting can never break the document."""
    if isinstance(value, jinja2.Undefined):
        value._fail_with_undefined_error()
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise jinja2.TemplateRuntimeError(f"cannot write {value!r} as JSON: {exc}") from None


def _template_path(env: jinja2.Environment, name: str) -> str:
    try:
        source = env.loader.get_source(env, name)  # type: ignore[union-attr]
        return source[1] or name
    except jinja2.TemplateNotFound:
        return name


def render_manifests(topology_name: str, topology_id: str, packing: PackingPlan,
                     config: Mapping[str, Any], *, keys_file_bytes: bytes,
                     zk_auth_bytes: bytes | None = None,
                     templates_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The topology's Secret, Service and two StatefulSets, in creation order.

    ``templates_dir`` overrides ``heron.kubernetes.templates.dir``. Raises
    :class:`KubernetesConfigError` naming the key, the value or the template at fault.
    """
    image = _required(config, IMAGE_KEY, "the container image every pod runs")
    package_url = _required(config, PACKAGE_URL_KEY, "where pods fetch the topology package")
    package_sha256 = _required(config, PACKAGE_SHA256_KEY, "the package's SHA-256")
    if not _SHA256.match(package_sha256):
        raise KubernetesConfigError(
            f"{PACKAGE_SHA256_KEY} must be 64 hex digits, got {package_sha256!r}")
    zk_hosts = _required(config, ZK_HOSTS_KEY,
                         "the ZooKeeper ensemble the pods use as state manager, host:port,...")
    zk_root = str(config.get(ZK_ROOT_KEY) or DEFAULT_ZK_ROOT).strip()
    if not zk_root.startswith("/"):
        raise KubernetesConfigError(f"{ZK_ROOT_KEY} must be an absolute path, got {zk_root!r}")
    if not topology_id or not str(topology_id).strip():
        raise KubernetesConfigError("a topology id is required")
    if not isinstance(keys_file_bytes, (bytes, bytearray)) or not keys_file_bytes:
        raise KubernetesConfigError("the topology's keys file is empty or missing")
    if zk_auth_bytes is not None and not isinstance(zk_auth_bytes, (bytes, bytearray)):
        raise KubernetesConfigError("the ZooKeeper digest must be bytes")
    pull_policy = config.get(IMAGE_PULL_POLICY_KEY)
    if pull_policy is not None and pull_policy not in IMAGE_PULL_POLICIES:
        raise KubernetesConfigError(f"{IMAGE_PULL_POLICY_KEY} must be one of "
                                    f"{', '.join(IMAGE_PULL_POLICIES)}, got {pull_policy!r}")
    namespace = namespace_of(config)
    replicas = executor_count(packing)
    ephemeral = _flag(config, EPHEMERAL_STORAGE_KEY, True)
    grace = int(_number(config, GRACE_KEY, DEFAULT_GRACE_SECS))

    k8s = names.kubernetes_name(topology_name)
    labels = {LABEL_APP: LABEL_APP_VALUE, LABEL_TOPOLOGY: k8s}
    script = functools.partial(pod_script, topology_name=topology_name,
                               topology_id=str(topology_id), package_url=package_url,
                               package_sha256=package_sha256, zk_hosts=zk_hosts,
                               zk_root=zk_root, zk_auth=zk_auth_bytes is not None)
    secret_data = {KEYS_FILE: base64.b64encode(bytes(keys_file_bytes)).decode("ascii")}
    if zk_auth_bytes is not None:
        secret_data[ZK_AUTH_FILE] = base64.b64encode(bytes(zk_auth_bytes)).decode("ascii")
    context = {
        "topology_name": topology_name, "topology_id": str(topology_id),
        "kubernetes_name": k8s, "namespace": namespace, "image": image,
        "image_pull_policy": pull_policy, "package_url": package_url,
        "package_sha256": package_sha256, "zk_hosts": zk_hosts, "zk_root": zk_root,
        "labels": labels,
        "tmanager_labels": {**labels, LABEL_ROLE: "tmanager"},
        "executors_labels": {**labels, LABEL_ROLE: "executors"},
        "annotations": {ANNOTATION_TOPOLOGY_NAME: topology_name,
                        ANNOTATION_TOPOLOGY_ID: str(topology_id),
                        ANNOTATION_PACKING_PLAN: packing.id},
        "tmanager_name": names.tmanager_name(k8s), "executors_name": names.executors_name(k8s),
        "service_name": names.service_name(k8s), "secret_name": names.secret_name(k8s),
        "executor_replicas": replicas,
        "tmanager_resources": resource_quantities(tmanager_resource(config),
                                                  ephemeral_storage=ephemeral),
        "executors_resources": resource_quantities(executor_resource(packing),
                                                   ephemeral_storage=ephemeral),
        "tmanager_script": script(shard=TMANAGER_SHARD),
        "executors_script": script(shard=EXECUTORS_SHARD),
        "secrets_dir": SECRETS_DIR, "keys_file": KEYS_FILE, "zk_auth_file": ZK_AUTH_FILE,
        "secret_data": secret_data, "termination_grace_secs": grace,
    }
    chosen_dir = templates_dir if templates_dir is not None else config.get(TEMPLATES_DIR_KEY)
    env = _environment(chosen_dir or None)
    docs = []
    for name in TEMPLATE_NAMES:
        docs.append(_render_one(env, name, context))
    return docs


def _render_one(env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> dict[str, Any]:
    where = _template_path(env, name)
    try:
        text = env.get_template(name).render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise KubernetesConfigError(
            f"template {exc.filename or where}:{exc.lineno}: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise KubernetesConfigError(f"template {where}: {exc}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubernetesConfigError(f"template {where} does not render valid YAML: "
                                    f"{' '.join(str(exc).split())}") from None
    if not isinstance(doc, dict) or not doc.get("kind") or not doc.get("apiVersion") \
            or not isinstance(doc.get("metadata"), dict) or not doc["metadata"].get("name"):
        raise KubernetesConfigError(f"template {where} must render one Kubernetes object "
                                    "with apiVersion, kind and metadata.name")
    return doc


# -- output -----------------------------------------------------------------------------
def redact(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``manifests`` with every Secret's ``data``/``stringData`` values redacted."""
    out = []
    for doc in manifests:
        doc = copy.deepcopy(doc)
        if doc.get("kind") == "Secret":
            for field in ("data", "stringData"):
                if isinstance(doc.get(field), dict):
                    doc[field] = {key: REDACTED for key in doc[field]}
        out.append(doc)
    return out


def to_yaml(manifests: list[dict[str, Any]]) -> str:
    """YAML documents separated by ``---``, keys in rendering order."""
    return yaml.safe_dump_all(manifests, sort_keys=False, default_flow_style=False,
                              explicit_start=True, width=2 ** 20)
