"""What ``heron update --dry-run`` says moves: the keyed state as stored (every key group's
chain of files), not what the newest incremental checkpoint wrote. The same 500 keys read
25,631 bytes after the first checkpoint and 10,491 seven seconds later, when the newest
checkpoint held a few deltas."""

from __future__ import annotations

from compat.storm_api.state import KeyedState
from engine.common.serialization import serializer_for_config
from engine.messages import ckptmgr_pb2
from engine.statefulstorage import LocalFileSystemStorage
from engine.statefulstorage.keyed import KeyedStateStore
from engine.submitter.update import _moving_state

GROUPS = 16


def store(root) -> KeyedStateStore:
    return KeyedStateStore(LocalFileSystemStorage(root), serializer_for_config({}), "count",
                           GROUPS)


def test_live_bytes_stay_the_size_of_the_state_while_saves_write_only_deltas(tmp_path):
    keyed = KeyedState({f"word-{i:04d}": i for i in range(500)})
    saver = store(tmp_path / "ckpts")
    first = saver.save("ckpt-1", 1, 0, 1, keyed, {})
    assert 0.8 * first.bytes < first.live_bytes <= first.bytes
    keyed["word-0001"] = 10_000  # one key changes
    second = saver.save("ckpt-2", 1, 0, 1, keyed, first.chains)
    assert second.bytes < first.bytes / 5  # the incremental checkpoint is small
    assert second.live_bytes > first.live_bytes  # the state as stored: full plus the delta
    # a task that restores reads the same chains, and knows their size
    reader = store(tmp_path / "ckpts")
    reader.load("ckpt-2", 0, 1)
    assert sum(reader.chain_bytes.values()) == second.live_bytes
    # a task owning half the groups after a rescale holds about half
    half = store(tmp_path / "ckpts")
    half.load("ckpt-2", 0, 2)
    assert 0 < sum(half.chain_bytes.values()) < second.live_bytes


class Topology:
    """What ``_moving_state`` reads of a stored topology: an effectively-once one whose
    ``count`` bolt is stateful."""


def test_the_dry_runs_estimate_uses_the_stored_state_not_the_newest_delta(monkeypatch):
    import engine.submitter.update as update
    monkeypatch.setattr(update, "effectively_once", lambda topology: True)
    monkeypatch.setattr(update, "stateful_components", lambda topology: {"count"})
    monkeypatch.setattr(update, "key_groups", lambda config: 128)
    monkeypatch.setattr(update, "topology_config", lambda topology: {})
    records = ckptmgr_pb2.StatefulConsistentCheckpoints()
    newest = records.consistent_checkpoints.add(checkpoint_id="ckpt-2")
    newest.components.add(component="count", tasks=2, bytes=1_000, keyed_bytes=25_600)
    (moves,) = _moving_state(Topology(), {"count"}, {"count": 2}, {"count": 4}, records)
    assert moves.approx_bytes == 25_600 * moves.moved // 128
    # a component that keeps no keyed state (a sink's per-task state) moves no key group
    newest.components[0].keyed_bytes = 0
    assert _moving_state(Topology(), {"count"}, {"count": 2}, {"count": 4}, records) == []
    # a record written before keyed_bytes existed: what it has
    newest.components[0].ClearField("keyed_bytes")
    (old,) = _moving_state(Topology(), {"count"}, {"count": 2}, {"count": 4}, records)
    assert old.approx_bytes == 1_000 * old.moved // 128
