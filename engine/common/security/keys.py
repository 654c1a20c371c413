"""A topology's CurveZMQ keys: made at submit, kept owner-only, read by its processes.

One key pair per topology (per submission: a resubmitted topology gets new keys). Every
engine process of the topology holds it, servers and clients alike, and a server's
guard accepts a client only if it proves it holds the same secret key. A process of
another topology, or of another user, holds other keys or none and is refused during
the handshake, before any of its bytes reach engine code.

Where they live:
- the state manager, kind ``keys`` (a ZooKeeper node with a digest ACL, or an owner-only
  file of the local state manager), for command-line clients and the tracker;
- ``<working dir>/secrets/topology.keys`` (0600, in a 0700 directory), written beside the
  launch file, which is how the executor hands them to the processes it starts. Never on
  a command line, never in an environment variable a component's subprocess inherits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from engine.common.security.private import UnsafePathError, read_private_file, write_private_file
from engine.messages import security_pb2

#: topology config key: authenticate peers but do not encrypt (trusted single-user machines)
PLAINTEXT_KEY = "heron.network.plaintext"
KEYS_FILE = Path("secrets") / "topology.keys"


class KeysError(Exception):
    """The topology's keys are missing, unreadable or not this submission's; the text
    names where they were looked for."""


@dataclass(frozen=True)
class TopologyKeys:
    topology_name: str
    topology_id: str
    #: Z85, 40 bytes each
    public_key: bytes
    secret_key: bytes
    plaintext: bool = False

    @classmethod
    def generate(cls, topology_name: str, topology_id: str, *,
                 plaintext: bool = False) -> TopologyKeys:
        public, secret = zmq.curve_keypair()
        return cls(topology_name, topology_id, public, secret, plaintext)

    # -- wire form -----------------------------------------------------------------------
    def to_proto(self) -> Any:
        return security_pb2.TopologyKeys(topology_name=self.topology_name,
                                         topology_id=self.topology_id,
                                         public_key=self.public_key,
                                         secret_key=self.secret_key,
                                         plaintext=self.plaintext)

    @classmethod
    def from_proto(cls, message: Any, *, where: str) -> TopologyKeys:
        keys = cls(message.topology_name, message.topology_id, bytes(message.public_key),
                   bytes(message.secret_key), bool(message.plaintext))
        if len(keys.public_key) != 40 or len(keys.secret_key) != 40:
            raise KeysError(f"{where}: not a CurveZMQ key pair (expected 40-character Z85 "
                            f"keys)")
        return keys

    @property
    def plain_password(self) -> bytes:
        """The ZAP PLAIN password of plaintext mode: derived from the secret key, so the
        secret itself never crosses a socket, and different for every topology."""
        return hashlib.sha256(b"heron-plain:" + self.secret_key).hexdigest().encode()

    # -- files ---------------------------------------------------------------------------
    def save(self, working_dir: Path | str) -> Path:
        return write_private_file(Path(working_dir) / KEYS_FILE,
                                  self.to_proto().SerializeToString())

    @classmethod
    def load(cls, working_dir: Path | str, *, topology_id: str | None = None) -> TopologyKeys:
        """The keys in a working directory; KeysError naming the file when they are
        missing, unsafe, damaged, or belong to another submission."""
        return cls.from_file(Path(working_dir) / KEYS_FILE, topology_id=topology_id)

    @classmethod
    def from_file(cls, path: Path | str, *, topology_id: str | None = None) -> TopologyKeys:
        """The keys in an owner-only file (a working directory's, a mounted Secret)."""
        path = Path(path)
        try:
            data = read_private_file(path)
        except FileNotFoundError:
            raise KeysError(f"{path}: the topology's keys are missing (was it submitted by "
                            f"an older version? resubmit it)") from None
        except UnsafePathError as exc:
            raise KeysError(str(exc)) from None
        message = security_pb2.TopologyKeys()
        try:
            message.ParseFromString(data)
        except Exception:
            raise KeysError(f"{path}: damaged keys file") from None
        keys = cls.from_proto(message, where=str(path))
        if topology_id is not None and keys.topology_id != topology_id:
            raise KeysError(f"{path}: keys of submission {keys.topology_id}, not of "
                            f"{topology_id}")
        return keys


def plaintext_requested(config: dict[str, Any]) -> bool:
    """Whether the topology's config opts out of encryption (``heron.network.plaintext``)."""
    value = config.get(PLAINTEXT_KEY, False)
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def keys_belong_in(state: Any) -> bool:
    """Whether a topology's keys may be stored in ``state``: only where nobody else can
    read them (owner-only files, a digest-ACL'd ZooKeeper tree). Elsewhere (ZooKeeper
    without --zk-auth) they stay in the submission's owner-only working directory, and
    only clients on the submitting machine can reach the topology."""
    return bool(getattr(state, "protects_secrets", False))


NO_KEYS_IN_STATE = ("the topology's keys are not stored in a ZooKeeper tree without a digest "
                    "ACL (anyone reaching ZooKeeper could read them); they stay owner-only in "
                    "its working directory, so only this machine's clients can control it. "
                    "Give --zk-auth FILE to store them under a digest ACL")


def keys_from_state(state: Any, topology_name: str,
                    working_dir: Path | str | None = None) -> TopologyKeys:
    """The keys a command-line client or the tracker uses to reach a topology's
    processes: from the state manager, or (a tree that does not protect secrets) from
    the topology's working directory on this machine."""
    message = state.get("keys", topology_name)
    if message is not None:
        return TopologyKeys.from_proto(message, where=f"keys/{topology_name}")
    if working_dir is not None and (Path(working_dir) / KEYS_FILE).exists():
        return TopologyKeys.load(working_dir)
    if not keys_belong_in(state):
        raise KeysError(f"topology {topology_name!r}: {NO_KEYS_IN_STATE}; no keys found in "
                        f"{working_dir or 'its working directory'} on this machine")
    raise KeysError(f"topology {topology_name!r} has no keys in the state manager "
                    f"(submitted by an older version? kill and resubmit it)")
