"""The ZooKeeper state manager: Heron's tree in ZooKeeper, through kazoo.

Layout under ``root`` (``/heron`` by default), as Heron's CuratorStateManager keeps it:
``topologies``, ``packingplans``, ``pplans``, ``executionstate``, ``tmanagers``,
``schedulers``, each child named by topology and holding protobuf bytes. Ephemeral
locations are real ZooKeeper ephemeral nodes, so they vanish when the owner's session
ends (closed, or expired because the owner died), which is what lets a new Topology
Master take over.

Every call is bounded: a server that never answered, or one that went away after we
connected, shows up as a one-line StateError naming the address and the node, never as
a hang or a kazoo traceback. Operations go through kazoo's async API with a deadline,
because kazoo's synchronous calls queue and wait forever while the connection is
suspended.

Access control (docs/security.md, "ZooKeeper ACLs"): given a digest ``user:password``
(read from an owner-only file, never from a command line), the client authenticates
with it and every node it creates, the parents it makes on the way included, carries
one ACL entry: all permissions to that digest identity, nothing to anyone else. On
connecting it checks the nodes a topology's nodes hang from (the root and one node per
kind): one that lets ``world:anyone`` create, delete, write or change ACLs is refused,
because in ZooKeeper deleting a node needs DELETE on its *parent*, so an open parent
would let any client delete or replace a topology's protected nodes (its Topology
Master location among them).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.common.security.private import read_private_file
from engine.statemgr.base import KINDS, NodeExistsError, NoNodeError, StateError, StateManager

DEFAULT_ROOT = "/heron"
DEFAULT_SESSION_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 10.0

_log = logging.getLogger(__name__)


#: names the digest file when --zk-auth is not given (the file, never the digest itself)
ZK_AUTH_FILE_ENV = "HERON_ZK_AUTH_FILE"
#: ZooKeeper's permission bits (kazoo.security.Permissions)
_WRITE, _CREATE, _DELETE, _ADMIN = 2, 4, 8, 16
_PERM_NAMES = ((_CREATE, "create"), (_DELETE, "delete"), (_WRITE, "write"), (_ADMIN, "admin"))


class DigestFileError(StateError):
    """The --zk-auth file is missing or not one ``user:password`` line; the text names the
    file and never shows its content."""


def parse_digest(text: str, source: str) -> tuple[str, str]:
    """``(user, password)`` from ``user:password`` (the password may hold ':', as
    ZooKeeper splits at the first one)."""
    line = text.strip("\r\n")
    user, sep, password = line.partition(":")
    if not sep or not user or not password or "\n" in line or line != line.strip():
        raise DigestFileError(f"{source}: expected one line user:password (a ZooKeeper digest "
                              f"identity), with no spaces around it")
    return user, password


def read_digest_file(path: Path | str) -> str:
    """The ``user:password`` held in the owner-only file ``path``: UnsafePathError when
    the file is a symlink, another user's or readable by others; DigestFileError when it
    is missing or malformed."""
    try:
        raw = read_private_file(path)
    except FileNotFoundError:
        raise DigestFileError(f"{path}: no such file (the ZooKeeper digest file holds "
                              f"user:password)") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DigestFileError(f"{path}: not UTF-8 text; expected one line user:password") from None
    user, password = parse_digest(text, str(path))
    return f"{user}:{password}"


def _kazoo() -> Any:
    """Import kazoo late, so the local state manager works where kazoo is not installed."""
    try:
        from kazoo import client, exceptions, retry
    except ImportError as exc:  # pragma: no cover - kazoo is a declared dependency
        raise StateError(f"the ZooKeeper state manager needs kazoo (pip install kazoo): "
                         f"{exc}") from None
    return client, exceptions, retry


class ZooKeeperStateManager(StateManager):
    """Heron's layout in a ZooKeeper ensemble given as ``host:port[,host:port...]``."""

    @property
    def protects_secrets(self) -> bool:  # type: ignore[override]
        """Only a tree under a digest ACL keeps secrets from other ZooKeeper clients."""
        return self.auth_user is not None

    def __init__(self, hosts: str, root: str = DEFAULT_ROOT, *,
                 session_timeout: float = DEFAULT_SESSION_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 auth: str | None = None, auth_source: str | None = None) -> None:
        """``auth``: a digest ``user:password`` (see the module docstring); ``auth_source``
        says where it came from in errors (the file), as the digest itself never is."""
        client_mod, self._errors, retry_mod = _kazoo()
        hosts = (hosts or "").strip()
        if not hosts:
            raise StateError("no ZooKeeper address given (--zk HOST:PORT)")
        if not root.startswith("/"):
            raise StateError(f"ZooKeeper root {root!r} must be an absolute path like /heron")
        self.hosts = hosts
        self.root = root.rstrip("/") or ""
        self.session_timeout = float(session_timeout)
        self.connect_timeout = float(connect_timeout)
        #: How long one operation may wait for its answer once sent on a live connection
        #: (a dropped connection fails it at once; this guards against a stalled server).
        self.op_timeout = max(self.session_timeout, self.connect_timeout)
        self.auth_source = auth_source or "the digest given"
        self.auth_user: str | None = None
        self._acl: list[Any] | None = None
        auth_data = None
        if auth is not None:
            from kazoo.security import make_digest_acl

            user, password = parse_digest(auth, self.auth_source)
            self.auth_user = user
            self._acl = [make_digest_acl(user, password, all=True)]
            auth_data = [("digest", f"{user}:{password}")]
        self._closed = False
        self._close_lock = threading.Lock()
        #: Set while a connection is up; operations wait on it (up to connect_timeout)
        #: instead of queueing inside kazoo for as long as the server stays away.
        self._connected = threading.Event()
        # kazoo logs every failed reconnect attempt (with tracebacks at times); give it a
        # logger of its own with a NullHandler so none of that reaches a terminal through
        # logging's last-resort handler. Applications that configure logging still see it.
        kazoo_logger = logging.getLogger(f"{__name__}.kazoo")
        if not kazoo_logger.handlers:
            kazoo_logger.addHandler(logging.NullHandler())
        try:
            self._client = client_mod.KazooClient(
                hosts=hosts, timeout=self.session_timeout,
                connection_retry=retry_mod.KazooRetry(max_tries=-1, delay=0.1, backoff=2,
                                                      max_delay=1.0, ignore_expire=False),
                logger=kazoo_logger, auth_data=auth_data, default_acl=self._acl)
        except (ValueError, TypeError) as exc:
            raise StateError(f"ZooKeeper address {hosts!r} is not HOST:PORT[,HOST:PORT...]: "
                             f"{exc}") from None
        self._client.add_listener(self._on_state)
        try:
            self._client.start(timeout=self.connect_timeout)
        except self._client.handler.timeout_exception:
            self._stop_client()
            raise StateError(
                f"ZooKeeper at {hosts} did not answer within {self.connect_timeout:g}s "
                f"(is the server running? --zk HOST:PORT)") from None
        except Exception as exc:  # bad host string, resolution failure...
            self._stop_client()
            raise StateError(f"ZooKeeper at {hosts}: cannot connect: {exc}") from None
        if self._acl is not None:
            try:
                self._check_parents()
            except BaseException:
                self.close()
                raise

    # -- node store --------------------------------------------------------------------
    def _full(self, path: str) -> str:
        return f"{self.root}/{path}" if path else (self.root or "/")

    def _wait(self, async_result: Any, path: str, what: str) -> Any:
        """The answer of one async call, with kazoo's failures turned into StateErrors."""
        errors = self._errors
        try:
            return async_result.get(timeout=self.op_timeout)
        except self._client.handler.timeout_exception:
            raise StateError(f"ZooKeeper at {self.hosts}: no answer to {what} "
                             f"{self._full(path)} within {self.op_timeout:g}s "
                             f"(connection lost?)") from None
        except (errors.ConnectionLoss, errors.ConnectionClosedError) as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: connection lost during {what} "
                             f"{self._full(path)} ({type(exc).__name__})") from None
        except errors.SessionExpiredError:
            raise StateError(f"ZooKeeper at {self.hosts}: session expired during {what} "
                             f"{self._full(path)} (the ephemeral nodes of this session are "
                             "gone)") from None
        except errors.NoAuthError:
            raise self._not_authorized(self._full(path), what) from None

    def _not_authorized(self, full_path: str, what: str) -> StateError:
        if self.auth_user is None:
            return StateError(f"ZooKeeper at {self.hosts}: not allowed to {what} {full_path}: "
                              f"it is protected by a digest ACL; give the digest file it was "
                              f"created with (--zk-auth FILE or ${ZK_AUTH_FILE_ENV})")
        return StateError(f"ZooKeeper at {self.hosts}: not allowed to {what} {full_path} with "
                          f"the digest of user {self.auth_user!r} ({self.auth_source}): it was "
                          f"created by another identity; give the digest file it was created "
                          f"with, or use another --zk-root")

    def _check_parents(self) -> None:
        """Refuse a root or kind node that anyone may create in, delete from, write or
        re-ACL (see the module docstring); they are the parents of a topology's nodes."""
        for path in ([""] if self.root else []) + list(KINDS):
            result = self._start(self._client.get_acls_async, path, "read the ACL of")
            try:
                acls, _stat = self._wait(result, path, "read the ACL of")
            except self._errors.NoNodeError:
                continue
            except self._errors.ZookeeperError as exc:
                raise StateError(f"ZooKeeper at {self.hosts}: read the ACL of "
                                 f"{self._full(path)}: {type(exc).__name__} {exc}".rstrip()
                                 ) from None
            full = self._full(path)
            for acl in acls:
                if acl.id.scheme != "world":
                    continue
                loose = [name for bit, name in _PERM_NAMES if acl.perms & bit]
                if loose:
                    raise StateError(
                        f"ZooKeeper at {self.hosts}: {full} lets anyone (world:anyone) "
                        f"{', '.join(loose)}: a client without the digest could delete or "
                        f"replace the protected nodes under it. It was created without "
                        f"--zk-auth: remove it if it holds nothing you need, set its ACL to "
                        f"the digest (setAcl {full} digest:{self.auth_user}:<hash>:cdrwa), "
                        f"or use another --zk-root")

    def _start(self, method: Callable[..., Any], path: str, what: str, *args: Any,
               **kwargs: Any) -> Any:
        """Issue one async call: refused when the manager is closed, and when the
        connection is down and does not come back within connect_timeout."""
        if self._closed:
            raise StateError(f"ZooKeeper at {self.hosts}: {what} {self._full(path)}: "
                             f"state manager is closed")
        if not self._client.connected and not self._connected.wait(self.connect_timeout):
            raise StateError(f"ZooKeeper at {self.hosts}: connection lost and not back "
                             f"within {self.connect_timeout:g}s; cannot {what} "
                             f"{self._full(path)} (is the server running?)")
        try:
            return method(self._full(path), *args, **kwargs)
        except (self._errors.ZookeeperError, OSError, ValueError, TypeError) as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: {what} {self._full(path)}: "
                             f"{exc or type(exc).__name__}") from None

    def _create(self, path: str, data: bytes, ephemeral: bool) -> None:
        errors = self._errors
        result = self._start(self._client.create_async, path, "create", data,
                             ephemeral=ephemeral, makepath=True)
        try:
            self._wait(result, path, "create")
        except errors.NodeExistsError:
            raise NodeExistsError(f"{self._full(path)} already exists in ZooKeeper at "
                                  f"{self.hosts}") from None
        except errors.ZookeeperError as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: create {self._full(path)}: "
                             f"{type(exc).__name__} {exc}".rstrip()) from None

    def _set(self, path: str, data: bytes) -> None:
        errors = self._errors
        result = self._start(self._client.set_async, path, "set", data)
        try:
            self._wait(result, path, "set")
        except errors.NoNodeError:
            raise NoNodeError(f"{self._full(path)} does not exist in ZooKeeper at "
                              f"{self.hosts}") from None
        except errors.ZookeeperError as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: set {self._full(path)}: "
                             f"{type(exc).__name__} {exc}".rstrip()) from None

    def _get(self, path: str) -> bytes | None:
        errors = self._errors
        result = self._start(self._client.get_async, path, "read")
        try:
            data, _stat = self._wait(result, path, "read")
        except errors.NoNodeError:
            return None
        except errors.ZookeeperError as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: read {self._full(path)}: "
                             f"{type(exc).__name__} {exc}".rstrip()) from None
        return data if data is not None else b""

    def _delete(self, path: str) -> None:
        errors = self._errors
        result = self._start(self._client.delete_async, path, "delete")
        try:
            self._wait(result, path, "delete")
        except errors.NoNodeError:
            return
        except errors.ZookeeperError as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: delete {self._full(path)}: "
                             f"{type(exc).__name__} {exc}".rstrip()) from None

    def _children(self, path: str) -> list[str]:
        errors = self._errors
        result = self._start(self._client.get_children_async, path, "list")
        try:
            names = self._wait(result, path, "list")
        except errors.NoNodeError:
            return []
        except errors.ZookeeperError as exc:
            raise StateError(f"ZooKeeper at {self.hosts}: list {self._full(path)}: "
                             f"{type(exc).__name__} {exc}".rstrip()) from None
        return sorted(names)

    def close(self) -> None:
        """End the session (its ephemeral nodes disappear) and stop kazoo's threads."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._stop_client()

    # -- connection --------------------------------------------------------------------
    def _stop_client(self) -> None:
        try:
            self._client.stop()
        except Exception as exc:  # stopping must never raise out of close()
            _log.debug("ZooKeeper at %s: stop failed: %s", self.hosts, exc)
        try:
            self._client.close()
        except Exception as exc:
            _log.debug("ZooKeeper at %s: close failed: %s", self.hosts, exc)

    def _on_state(self, state: str) -> None:
        """Track the connection, and say when it drops or the session (and with it our
        ephemeral nodes) is lost. Runs on kazoo's thread: must not block."""
        if state == "CONNECTED":
            self._connected.set()
        else:
            self._connected.clear()
        if self._closed:
            return
        if state == "SUSPENDED":
            _log.warning("ZooKeeper at %s: connection lost; reconnecting", self.hosts)
        elif state == "LOST":
            _log.warning("ZooKeeper at %s: session lost; ephemeral nodes it owned are gone",
                         self.hosts)
        elif state == "CONNECTED":
            _log.info("ZooKeeper at %s: connected", self.hosts)

    def __repr__(self) -> str:
        return f"ZooKeeperStateManager({self.hosts!r}, root={self.root!r})"
