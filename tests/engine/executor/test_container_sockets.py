"""A cluster container's executor removes its ipc sockets when it stops, and the
topology's ipc directory once no other container of it on the node uses it: nothing else
does on a node, and ``/tmp/heron-UID`` kept a folder for every topology that ever ran
there (issue 44, item 5)."""

from __future__ import annotations

from engine.common.launch import local_socket_name, metrics_socket_name
from engine.common.network.endpoints import ipc_dir
from engine.executor.main import remove_container_sockets

TOPOLOGY = "wc-0123456789abcdef"


def sockets(container: int) -> list[str]:
    return [local_socket_name(container, spout=True), local_socket_name(container, spout=False),
            metrics_socket_name(container)]


def test_the_last_container_out_removes_the_topology_s_ipc_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HERON_RUNTIME_DIR", str(tmp_path / "runtime"))
    directory = ipc_dir(TOPOLOGY)
    for container in (1, 2):
        for name in sockets(container):
            (directory / name).touch()
    remove_container_sockets(TOPOLOGY, 1)
    assert sorted(p.name for p in directory.iterdir()) == sorted(sockets(2))
    remove_container_sockets(TOPOLOGY, 2)
    assert not directory.exists()
    remove_container_sockets(TOPOLOGY, 2)  # already gone: nothing to do, nothing made
    assert not directory.exists()
