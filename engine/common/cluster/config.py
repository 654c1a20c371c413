"""A cluster described once, as Heron describes it: ``~/.heron/conf/CLUSTER/``.

Three YAML files, and an optional fourth, each a flat map of Heron-style dotted keys:

``scheduler.yaml``
    ``heron.class.scheduler``: ``local``, ``slurm`` or ``kubernetes`` (Heron's Java class
    names, e.g. ``org.apache.heron.scheduler.slurm.SlurmScheduler``, are accepted too),
    plus the scheduler's own keys (``heron.slurm.*``, ``heron.kubernetes.*``,
    ``heron.executor.docker.image``, ``heron.network.bind.interface``).
``statemgr.yaml``
    ``heron.class.state.manager``: ``local`` or ``zookeeper``;
    ``heron.statemgr.connection.string`` (``host:port[,host:port]``),
    ``heron.statemgr.root.path`` (``/heron``), ``heron.statemgr.zookeeper.auth.file``
    (an owner-only file holding the digest ``user:password``; never the digest itself).
``uploader.yaml``
    ``heron.class.uploader``: ``localfs`` or ``http``;
    ``heron.uploader.localfs.file.system.directory`` (a directory every node mounts) or
    ``heron.uploader.http.uri`` (PUT there, fetched from there).
``stateful.yaml`` (optional)
    where effectively-once topologies keep their checkpoints, as Heron's file of that
    name: ``heron.statefulstorage.classname`` (``localfs``),
    ``heron.statefulstorage.localfs.root.path`` (on a cluster, a directory every node
    mounts: a container moved to another node reads its task's state from there) and
    ``heron.statefulstorage.localfs.max.checkpoints``. Heron nests the storage's own
    keys under ``heron.statefulstorage.config``; both forms are read. The submitter
    copies them into a topology's config when the topology sets none of its own
    (engine/submitter/checkpoints.py).
``defaults.yaml`` (optional)
    topology config every topology submitted to this cluster gets unless it sets the key
    itself (the lowest precedence: cluster defaults < the project's config.json env
    options < ``Topology.config`` < ``-o``; engine/submitter/submitter.py): above all
    the sizing keys that fit containers to the nodes (``heron.resources.instance.ram``,
    ``.cpu``, ``topology.container.padding.ram``, ``.cpu``), and any ``topology.*`` key.
    ``scheduler.yaml`` may set the sizing keys and ``topology.*`` keys too; they are
    defaults in the same way. Keys of the other files are refused here.

``CLUSTER[/ROLE[/ENV]]`` names a cluster, as ``heron submit`` takes it; role defaults to
the user and env to ``default``. ``local`` needs no directory: it is this machine, as it
always was.
"""

from __future__ import annotations

import getpass
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.config.keys import RETENTION_KEY, STORAGE_CLASS_KEY, STORAGE_ROOT_KEY

CONF_FILES = ("scheduler.yaml", "statemgr.yaml", "uploader.yaml", "stateful.yaml",
              "defaults.yaml")
DEFAULTS_FILE = "defaults.yaml"
#: the keys that fit containers to the nodes: bytes (an integer) and cores (fractions
#: accepted; a Slurm job asks for the container's total rounded up to whole CPUs)
SIZING_RAM_KEYS = ("heron.resources.instance.ram", "topology.container.padding.ram")
SIZING_CPU_KEYS = ("heron.resources.instance.cpu", "topology.container.padding.cpu")
#: scheduler.yaml keys that are topology defaults rather than the scheduler's own
_DEFAULT_PREFIXES = ("topology.", "heron.resources.")
#: keys that describe the cluster itself, refused in defaults.yaml (the file they belong in)
_CLUSTER_KEY_FILES = (("heron.class.scheduler", "scheduler.yaml"),
                      ("heron.slurm.", "scheduler.yaml"), ("heron.kubernetes.", "scheduler.yaml"),
                      ("heron.network.", "scheduler.yaml"),
                      ("heron.executor.docker.", "scheduler.yaml"),
                      ("heron.class.state.manager", "statemgr.yaml"),
                      ("heron.statemgr.", "statemgr.yaml"),
                      ("heron.class.uploader", "uploader.yaml"),
                      ("heron.uploader.", "uploader.yaml"),
                      ("heron.statefulstorage.", "stateful.yaml"))
#: the keys of ``stateful.yaml`` (those of engine.config.checkpointing)
STATEFUL_STORAGE_KEYS = (STORAGE_CLASS_KEY, STORAGE_ROOT_KEY, RETENTION_KEY)
#: where Heron's stateful.yaml nests the storage's own keys
_HERON_STORAGE_CONFIG = "heron.statefulstorage.config"
LOCAL = "local"
SCHEDULERS = ("local", "slurm", "kubernetes")
STATE_MANAGERS = ("local", "zookeeper")
UPLOADERS = ("localfs", "http")
STATE_STORAGES = ("localfs",)
#: Heron's class names, for users who copy a Heron cluster directory
_HERON_CLASSES = {
    "org.apache.heron.scheduler.local.LocalScheduler": "local",
    "org.apache.heron.scheduler.slurm.SlurmScheduler": "slurm",
    "org.apache.heron.scheduler.kubernetes.KubernetesScheduler": "kubernetes",
    "org.apache.heron.statemgr.localfs.LocalFileSystemStateManager": "local",
    "org.apache.heron.statemgr.zookeeper.curator.CuratorStateManager": "zookeeper",
    "org.apache.heron.uploader.localfs.LocalFileSystemUploader": "localfs",
    "org.apache.heron.uploader.http.HttpUploader": "http",
    "org.apache.heron.statefulstorage.localfs.LocalFileSystemStorage": "localfs",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ClusterConfigError(Exception):
    """A cluster name or directory that cannot be used; the text names the file and key."""


@dataclass(frozen=True)
class ClusterRef:
    """``CLUSTER[/ROLE[/ENV]]`` as given on the command line."""

    cluster: str
    role: str
    environ: str

    @classmethod
    def parse(cls, text: str) -> ClusterRef:
        parts = (text or "").split("/")
        if not 1 <= len(parts) <= 3 or not all(parts):
            raise ClusterConfigError(f"{text!r}: expected CLUSTER[/ROLE[/ENV]], e.g. "
                                     f"slurm/{getpass.getuser()}/prod")
        for part in parts:
            if not _NAME.match(part):
                raise ClusterConfigError(f"{text!r}: {part!r} is not a valid name (letters, "
                                         f"digits, '_', '.', '-')")
        role = parts[1] if len(parts) > 1 else getpass.getuser()
        environ = parts[2] if len(parts) > 2 else "default"
        return cls(parts[0], role, environ)

    def __str__(self) -> str:
        return f"{self.cluster}/{self.role}/{self.environ}"


@dataclass
class ClusterConfig:
    """What one cluster directory says, with its choices resolved and checked."""

    name: str
    directory: Path | None
    scheduler: str = "local"
    state_manager: str = "local"
    uploader: str | None = None
    #: every key of the files (scheduler's keys are read by the scheduler)
    values: dict[str, Any] = field(default_factory=dict)
    #: the topology config defaults (defaults.yaml, and scheduler.yaml's ``topology.*``
    #: and ``heron.resources.*`` keys): what a topology gets for a key it does not set
    topology_defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        return self.scheduler == "local"

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def require(self, key: str, *, file: str) -> Any:
        value = self.values.get(key)
        if value in (None, ""):
            raise ClusterConfigError(f"{self._file(file)}: {key} is required for the "
                                     f"{self.scheduler} scheduler")
        return value

    def _file(self, name: str) -> str:
        return str(self.directory / name) if self.directory else name

    # -- state manager -------------------------------------------------------------------
    @property
    def zk_hosts(self) -> str | None:
        value = self.values.get("heron.statemgr.connection.string")
        return str(value) if value else None

    @property
    def zk_root(self) -> str:
        return str(self.values.get("heron.statemgr.root.path") or "/heron")

    @property
    def zk_auth_file(self) -> Path | None:
        value = self.values.get("heron.statemgr.zookeeper.auth.file")
        return Path(str(value)).expanduser() if value else None

    # -- stateful storage ----------------------------------------------------------------
    @property
    def stateful_storage(self) -> dict[str, Any]:
        """The ``stateful.yaml`` keys this cluster sets (Heron's class name read as
        ``localfs``), for the submitter to give effectively-once topologies that set
        none of their own."""
        out = {key: self.values[key] for key in STATEFUL_STORAGE_KEYS
               if self.values.get(key) not in (None, "")}
        if STORAGE_CLASS_KEY in out:
            out[STORAGE_CLASS_KEY] = _choice(
                out, STORAGE_CLASS_KEY, STATE_STORAGES, None,
                self._file("stateful.yaml"))
        return out

    def file_of(self, name: str) -> str:
        """Where this cluster's file ``name`` is (or would be), for messages."""
        return self._file(name)


def conf_dir(home: Path, cluster: str) -> Path:
    """Where a cluster's files live: ``HOME/conf/CLUSTER`` (HOME is ``~/.heron``)."""
    return Path(home).expanduser() / "conf" / cluster


def _choice(values: dict[str, Any], key: str, allowed: tuple[str, ...], default: str | None,
            where: str) -> str | None:
    raw = values.get(key)
    if raw in (None, ""):
        return default
    text = _HERON_CLASSES.get(str(raw), str(raw)).strip().lower()
    if text not in allowed:
        raise ClusterConfigError(f"{where}: {key}: {raw!r} is not one of "
                                 f"{', '.join(allowed)}")
    return text


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ClusterConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ClusterConfigError(f"{where}: not valid YAML: "
                                 f"{getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ClusterConfigError(f"{path}: expected a map of keys to values, got "
                                 f"{type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ClusterConfigError(f"{path}: keys must be strings: {bad[0]!r}")
    return data


def load_cluster(home: Path, cluster: str) -> ClusterConfig:
    """The configuration of ``cluster``; ``local`` without a directory is this machine.

    A cluster other than ``local`` needs its directory (ClusterConfigError naming the
    path and the files it should hold). Keys must not repeat across the files.
    """
    directory = conf_dir(home, cluster)
    if not directory.is_dir():
        if cluster == LOCAL:
            return ClusterConfig(LOCAL, None)
        raise ClusterConfigError(
            f"no cluster {cluster!r}: {directory} does not exist (describe the cluster there "
            f"in {', '.join(CONF_FILES[:3])}, and optionally {' and '.join(CONF_FILES[3:])}; see "
            f"docs/clusters.md)")
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    for name in CONF_FILES:
        path = directory / name
        read = _read_yaml(path)
        if name == "stateful.yaml":
            read = _flatten_storage_config(read, path)
        if name == DEFAULTS_FILE:
            _refuse_cluster_keys(read, path)
            defaults.update(read)
        elif name == "scheduler.yaml":
            defaults.update({k: v for k, v in read.items() if k.startswith(_DEFAULT_PREFIXES)})
        for key, value in read.items():
            if key in values and values[key] != value:
                raise ClusterConfigError(f"{path}: {key} is also set, differently, in "
                                         f"{origin[key]}")
            values[key] = value
            origin[key] = str(path)
    config = ClusterConfig(cluster, directory, values=values, topology_defaults=defaults)
    _check_sizing(defaults, origin)
    config.scheduler = _choice(values, "heron.class.scheduler", SCHEDULERS, LOCAL,
                               str(directory / "scheduler.yaml")) or LOCAL
    config.state_manager = _choice(values, "heron.class.state.manager", STATE_MANAGERS,
                                   LOCAL, str(directory / "statemgr.yaml")) or LOCAL
    config.uploader = _choice(values, "heron.class.uploader", UPLOADERS, None,
                              str(directory / "uploader.yaml"))
    _check_stateful(config)
    _check(config)
    return config


def _refuse_cluster_keys(data: dict[str, Any], path: Path) -> None:
    """defaults.yaml holds topology config: a key that describes the cluster belongs in
    the file that reads it (set here it would silently do nothing)."""
    for key in data:
        for prefix, file in _CLUSTER_KEY_FILES:
            if key == prefix or (prefix.endswith(".") and key.startswith(prefix)):
                raise ClusterConfigError(f"{path}: {key} describes the cluster, not a "
                                         f"topology: set it in {path.parent / file}")


def _check_sizing(defaults: dict[str, Any], origin: dict[str, str]) -> None:
    """The sizing defaults are numbers Slurm can be asked for: bytes an integer >= 0
    (instances: > 0), cores a number > 0 (fractions accepted)."""
    for key in (*SIZING_RAM_KEYS, *SIZING_CPU_KEYS):
        if key not in defaults:
            continue
        value = defaults[key]
        least = 0 if key.startswith("topology.container.padding") else 1
        if key in SIZING_RAM_KEYS:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= least
            what = f"a whole number of bytes{' > 0' if least else ''} (e.g. 134217728)"
        else:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and (value > 0 if least else value >= 0))
            what = (f"a number of cores{' > 0' if least else ''}; fractions such as 0.5 "
                    f"are accepted (a container's job rounds its total up to whole CPUs)")
        if not ok:
            raise ClusterConfigError(f"{origin[key]}: {key} must be {what}, got {value!r}")


def _flatten_storage_config(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Heron's stateful.yaml nests the storage's keys under ``heron.statefulstorage.config``:
    lift them to the top, so a file copied from a Heron cluster reads the same as a flat
    one."""
    nested = data.get(_HERON_STORAGE_CONFIG)
    if nested is None:
        return data
    if not isinstance(nested, dict):
        raise ClusterConfigError(f"{path}: {_HERON_STORAGE_CONFIG} must be a map of keys to "
                                 f"values, got {type(nested).__name__}")
    flat = {k: v for k, v in data.items() if k != _HERON_STORAGE_CONFIG}
    for key, value in nested.items():
        if key in flat and flat[key] != value:
            raise ClusterConfigError(f"{path}: {key} is set twice, differently (at the top "
                                     f"and under {_HERON_STORAGE_CONFIG})")
        flat[str(key)] = value
    return flat


def _check_stateful(config: ClusterConfig) -> None:
    """stateful.yaml's values, checked when the cluster is read (a local cluster's too),
    so a wrong one is an error at submit naming the file, not a task failing to save its
    first checkpoint on some node."""
    where = config._file("stateful.yaml")
    _ = config.stateful_storage  # read for its check: the class name, one of STATE_STORAGES
    root = config.values.get(STORAGE_ROOT_KEY)
    if root not in (None, ""):
        if not isinstance(root, str):
            raise ClusterConfigError(f"{where}: {STORAGE_ROOT_KEY} must "
                                     f"be a directory path, got {root!r}")
        if not (root.startswith("/") or root.startswith("~")):
            raise ClusterConfigError(f"{where}: {STORAGE_ROOT_KEY} must "
                                     f"be an absolute path (every container resolves it on "
                                     f"its own node), got {root!r}")
    kept = config.values.get(RETENTION_KEY)
    if kept is not None and (isinstance(kept, bool) or not isinstance(kept, int) or kept < 1):
        raise ClusterConfigError(f"{where}: {RETENTION_KEY} "
                                 f"must be a positive integer, got {kept!r}")


def _check(config: ClusterConfig) -> None:
    """What a cluster needs before anything is submitted to it."""
    if config.is_local:
        return
    if config.state_manager != "zookeeper":
        raise ClusterConfigError(
            f"{config._file('statemgr.yaml')}: the {config.scheduler} scheduler runs "
            f"containers on other machines, which cannot read this machine's files: "
            f"heron.class.state.manager must be zookeeper (with "
            f"heron.statemgr.connection.string)")
    if not config.zk_hosts:
        raise ClusterConfigError(f"{config._file('statemgr.yaml')}: "
                                 f"heron.statemgr.connection.string is required "
                                 f"(host:port[,host:port])")
    if config.uploader is None:
        raise ClusterConfigError(f"{config._file('uploader.yaml')}: heron.class.uploader is "
                                 f"required (localfs or http): the nodes fetch the topology "
                                 f"package from there")
    if config.uploader == "localfs":
        config.require("heron.uploader.localfs.file.system.directory", file="uploader.yaml")
    if config.uploader == "http":
        config.require("heron.uploader.http.uri", file="uploader.yaml")
