"""The ZooKeeper manager's digest ACL (docs/security.md, "ZooKeeper ACLs"): given a digest
file, every node it creates (parents included) is readable and writable by that digest
identity only; a client without it, or with another one, can neither read nor change nor
delete them, and gets a one-line StateError; a tree left open to the world is refused."""

from __future__ import annotations

import os
import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import OPEN_ACL_UNSAFE

from engine.common.security.private import UnsafePathError
from engine.messages import security_pb2, tmanager_pb2, topology_pb2
from engine.statemgr import StateError, ZooKeeperStateManager, open_state_manager
from engine.statemgr.base import KINDS
from engine.statemgr.zookeeper import DigestFileError, read_digest_file

pytestmark = pytest.mark.timeout(60)

DIGEST = "heron-test:s3cret:with-colon"


def unique_root() -> str:
    return f"/heron-acl-{uuid.uuid4().hex[:12]}"


def kazoo_client(hosts: str, digest: str | None = None) -> KazooClient:
    client = KazooClient(hosts=hosts, timeout=2.0,
                         auth_data=[("digest", digest)] if digest else None)
    client.start(5)
    return client


@pytest.fixture
def digest_file(tmp_path):
    path = tmp_path / "zk-auth"
    path.write_text(DIGEST + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def tree(zookeeper, digest_file):
    """A topology's nodes of every kind, keys included, created through the typed API by
    a manager holding the digest; removed at the end with the digest."""
    root = unique_root()
    manager = open_state_manager("zookeeper", zk_hosts=zookeeper.hosts, zk_root=root,
                                 zk_session_timeout=2.0, zk_auth_file=digest_file)
    manager.create("topologies", "wc", topology_pb2.Topology(name="wc", id="wc-1"))
    manager.create("tmanagers", "wc", tmanager_pb2.TManagerLocation(topology_name="wc"),
                   ephemeral=True)
    manager.create("keys", "wc", security_pb2.TopologyKeys(
        topology_name="wc", public_key=b"P" * 40, secret_key=b"S" * 40, topology_id="wc-1"))
    yield root, manager
    manager.close()
    cleaner = kazoo_client(zookeeper.hosts, DIGEST)
    cleaner.delete(root, recursive=True)
    cleaner.stop()
    cleaner.close()


def test_every_node_and_parent_gives_all_permissions_to_the_digest_only(zookeeper, tree):
    root, _manager = tree
    client = kazoo_client(zookeeper.hosts, DIGEST)
    try:
        for path in (root, f"{root}/topologies", f"{root}/topologies/wc", f"{root}/keys",
                     f"{root}/keys/wc", f"{root}/tmanagers/wc"):
            acls, _ = client.get_acls(path)
            assert [(a.id.scheme, a.id.id.split(":")[0], a.perms) for a in acls] == \
                [("digest", "heron-test", 31)], path
    finally:
        client.stop()
        client.close()


def test_a_client_without_the_digest_can_neither_read_nor_change_nor_delete(zookeeper, tree):
    root, _manager = tree
    client = kazoo_client(zookeeper.hosts)
    try:
        for path in (f"{root}/topologies/wc", f"{root}/keys/wc", f"{root}/tmanagers/wc"):
            with pytest.raises(NoAuthError):
                client.get(path)
            with pytest.raises(NoAuthError):
                client.set(path, b"forged")
            with pytest.raises(NoAuthError):
                client.delete(path)
        with pytest.raises(NoAuthError):
            client.get_children(f"{root}/topologies")
        # nor plant a node beside them (a forged Topology Master location)
        with pytest.raises(NoAuthError):
            client.create(f"{root}/tmanagers/other", b"forged")
        with pytest.raises(NoAuthError):
            client.set_acls(f"{root}/keys/wc", OPEN_ACL_UNSAFE)
    finally:
        client.stop()
        client.close()


def test_the_manager_without_the_digest_gets_a_state_error_naming_the_fix(zookeeper, tree):
    root, _manager = tree
    with ZooKeeperStateManager(zookeeper.hosts, root, session_timeout=2.0) as manager:
        for attempt in (lambda: manager.get("keys", "wc"), manager.topologies,
                        lambda: manager.delete("topologies", "wc"),
                        lambda: manager.set("topologies", "wc", topology_pb2.Topology())):
            with pytest.raises(StateError) as info:
                attempt()
            message = str(info.value)
            assert "digest ACL" in message and "--zk-auth" in message, message
            assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_wrong_digest_is_a_clear_state_error_when_opening(zookeeper, tree, tmp_path):
    root, _manager = tree
    wrong = tmp_path / "wrong-auth"
    wrong.write_text("heron-test:not-the-password\n")
    wrong.chmod(0o600)
    with pytest.raises(StateError) as info:
        open_state_manager("zookeeper", zk_hosts=zookeeper.hosts, zk_root=root,
                           zk_session_timeout=2.0, zk_auth_file=wrong)
    message = str(info.value)
    assert "'heron-test'" in message and str(wrong) in message and root in message
    assert "not-the-password" not in message and "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_client_with_the_digest_reads_changes_and_cleans(zookeeper, tree, digest_file):
    root, _manager = tree
    with open_state_manager("zookeeper", zk_hosts=zookeeper.hosts, zk_root=root,
                            zk_session_timeout=2.0, zk_auth_file=digest_file) as other:
        assert other.get("keys", "wc").secret_key == b"S" * 40
        assert other.topologies() == ["wc"]
        other.set("topologies", "wc", topology_pb2.Topology(name="wc", id="wc-2"))
        assert other.get("topologies", "wc").id == "wc-2"
        other.clean("wc")
        assert other.topologies() == [] and other.get("keys", "wc") is None


def test_a_tree_open_to_the_world_is_refused_with_the_digest(zookeeper, raw_open_tree,
                                                             digest_file):
    with pytest.raises(StateError) as info:
        open_state_manager("zookeeper", zk_hosts=zookeeper.hosts, zk_root=raw_open_tree,
                           zk_session_timeout=2.0, zk_auth_file=digest_file)
    message = str(info.value)
    assert f"{raw_open_tree} lets anyone (world:anyone) create, delete" in message
    assert "--zk-root" in message and "\n" not in message


@pytest.fixture
def raw_open_tree(zookeeper):
    """A tree an earlier submission without --zk-auth left (world-open ACLs)."""
    root = unique_root()
    with ZooKeeperStateManager(zookeeper.hosts, root, session_timeout=2.0) as manager:
        manager.create("topologies", "old", topology_pb2.Topology(name="old"))
    yield root
    client = kazoo_client(zookeeper.hosts)
    client.delete(root, recursive=True)
    client.stop()
    client.close()


def test_the_keys_kind_is_among_the_checked_parents():
    assert "keys" in KINDS  # a new kind's parent is checked like the others


# -- the digest file --------------------------------------------------------------------
def test_the_digest_file_must_be_owner_only(digest_file):
    assert read_digest_file(digest_file) == DIGEST
    digest_file.chmod(0o644)
    with pytest.raises(UnsafePathError, match="mode 0644"):
        read_digest_file(digest_file)
    link = digest_file.parent / "link"
    digest_file.chmod(0o600)
    os.symlink(digest_file, link)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        read_digest_file(link)


@pytest.mark.parametrize("content", ["", "nocolon\n", ":pa55\n", "us3r:\n",
                                     "us3r:pw\nsecond:line\n", " us3r:pw\n"])
def test_a_malformed_digest_file_is_named_without_its_content(tmp_path, content):
    path = tmp_path / "zk-auth"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(DigestFileError) as info:
        read_digest_file(path)
    assert str(path) in str(info.value) and "user:password" in str(info.value)
    if content.strip():
        assert content.strip().split("\n")[0] not in str(info.value)


def test_a_missing_digest_file_is_named(tmp_path):
    with pytest.raises(DigestFileError, match="no such file"):
        read_digest_file(tmp_path / "absent")
