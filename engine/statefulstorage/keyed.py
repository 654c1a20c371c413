"""Keyed state in checkpoints: by key group, incremental, readable at any parallelism.

A task's keyed state (``state.keyed()``) is stored per key group it owns, never as one
blob, so a restore at another parallelism gives each task exactly the groups it owns now
(engine/common/grouping/key_groups.py) and reads nothing else. Writes are incremental: a
checkpoint writes, per group, only the keys written or deleted since the last one (a
``delta`` file), or the whole group (a ``full`` file) when the group has no base yet,
was cleared, or its chain of deltas has grown to ``COMPACT_AFTER`` files (compaction: a
restore reads at most that many files per group). A group nothing touched writes
nothing. Each task writes a manifest (``<task>.keyed``: every owned group's chain of
files, oldest first) and the list of older checkpoints its chains read from
(``<task>.refs``), which the storage keeps while this checkpoint is kept.

Files, under ``<checkpoint>/<component>/``: ``kg-<group>.full`` / ``kg-<group>.delta``
(the topology's serializer encoding ``[keys, values, deleted keys]``), ``<task>.keyed``
and ``<task>.refs``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from compat.storm_api.state import KeyedState
from engine.common.grouping.key_groups import groups_of, key_group, owner_index
from engine.common.serialization import SerializationError, TupleSerializer
from engine.spi.statefulstorage import CheckpointUnreadable, StatefulStorage
from engine.statefulstorage.codec import StateNotSerializable, hashable_key

FULL, DELTA = "full", "delta"
#: a group's chain holds one full file and at most COMPACT_AFTER - 1 deltas
COMPACT_AFTER = 8
MANIFEST_SUFFIX = ".keyed"
REFS_SUFFIX = ".refs"

#: group -> [(checkpoint id, FULL or DELTA)], oldest first (the first is FULL)
Chains = dict[int, list[tuple[str, str]]]


class ForeignKeyError(StateNotSerializable):
    """A task's keyed state holds a key of a group another task owns: the state is not
    keyed by the input's fields-grouping key. The message names the key and the task."""


@dataclass
class KeyedSaveResult:
    bytes: int = 0
    groups_written: int = 0
    keys_written: int = 0
    chains: Chains = field(default_factory=dict)
    #: bytes of every owned group's whole chain of files: the keyed state as stored
    live_bytes: int = 0


class KeyedStateStore:
    """Saves and restores one component's keyed state through a ``StatefulStorage``."""

    def __init__(self, storage: StatefulStorage, serializer: TupleSerializer, component: str,
                 groups: int) -> None:
        self.storage = storage
        self.serializer = serializer
        self.component = component
        self.groups = groups
        #: group -> bytes of its chain of files, as of the last save or load (what a
        #: parallelism change moves, reported as ``keyed_bytes``)
        self.chain_bytes: dict[int, int] = {}

    # -- save ----------------------------------------------------------------------------
    def save(self, checkpoint_id: str, task: int, index: int, parallelism: int,
             keyed: KeyedState, chains: Chains) -> KeyedSaveResult:
        """Store what changed since the last save; the new chains (keep them for the next
        save). Clears the state's record of what changed."""
        owned = groups_of(index, self.groups, parallelism)
        dirty_by_group = self._dirty_by_group(keyed, task, index, parallelism, owned)
        full_groups = {g for g in owned
                       if keyed.cleared or (g in dirty_by_group and not chains.get(g))
                       or len(chains.get(g, ())) >= COMPACT_AFTER}
        members = self._members(keyed, full_groups) if full_groups else {}
        result = KeyedSaveResult()
        for g in owned:
            chain = list(chains.get(g, ()))
            if g in full_groups:
                keys = members.get(g, [])
                if not keys and not chain:
                    continue  # never held anything: no file, no chain
                stored, size = self._write(checkpoint_id, g, FULL, keys, keyed, ())
                result.bytes += stored
                self.chain_bytes[g] = size
                result.keys_written += len(keys)
                result.groups_written += 1
                chain = [(checkpoint_id, FULL)]
            elif g in dirty_by_group:
                changed = dirty_by_group[g]
                present = [k for k in changed if k in keyed]
                deleted = [k for k in changed if k not in keyed]
                stored, size = self._write(checkpoint_id, g, DELTA, present, keyed, deleted)
                result.bytes += stored
                self.chain_bytes[g] = self.chain_bytes.get(g, 0) + size
                result.keys_written += len(changed)
                result.groups_written += 1
                chain.append((checkpoint_id, DELTA))
            if chain:
                result.chains[g] = chain
        self.chain_bytes = {g: self.chain_bytes.get(g, 0) for g in result.chains}
        result.live_bytes = sum(self.chain_bytes.values())
        manifest = msgpack.packb({g: [list(link) for link in chain]
                                  for g, chain in result.chains.items()})
        result.bytes += self.storage.store_named(checkpoint_id, self.component,
                                                 f"{task}{MANIFEST_SUFFIX}", manifest)
        older = sorted({c for chain in result.chains.values() for c, _ in chain} - {checkpoint_id})
        result.bytes += self.storage.store_named(checkpoint_id, self.component,
                                                 f"{task}{REFS_SUFFIX}",
                                                 "\n".join(older).encode())
        keyed.dirty.clear()
        keyed.cleared = False
        return result

    def _dirty_by_group(self, keyed: KeyedState, task: int, index: int, parallelism: int,
                        owned: range) -> dict[int, list[Any]]:
        out: dict[int, list[Any]] = {}
        groups = self.groups
        for key in keyed.dirty:
            g = key_group(key, groups)
            if g not in owned:
                raise ForeignKeyError(
                    f"the keyed state of {self.component} task {task} holds key {key!r}, of "
                    f"key group {g}, which task index {owner_index(g, groups, parallelism)} "
                    f"owns (this task is index {index} of {parallelism}): key the state by "
                    f"the fields grouping's key of the component's input")
            out.setdefault(g, []).append(key)
        return out

    def _members(self, keyed: KeyedState, wanted: set[int]) -> dict[int, list[Any]]:
        """The keys of each wanted group (a full write: every key's group computed)."""
        out: dict[int, list[Any]] = {}
        groups = self.groups
        for key in keyed:
            g = key_group(key, groups)
            if g in wanted:
                out.setdefault(g, []).append(key)
        return out

    def _write(self, checkpoint_id: str, group: int, kind: str, keys: list[Any],
               keyed: KeyedState, deleted: Iterable[Any]) -> tuple[int, int]:
        """(bytes the storage wrote, bytes of the group's data: what a restore reads)."""
        try:
            data = self.serializer.dumps([keys, [keyed[k] for k in keys], list(deleted)])
        except (SerializationError, TypeError, ValueError, OverflowError) as exc:
            raise StateNotSerializable(f"the keyed state of {self.component} (key group "
                                       f"{group}) cannot be saved: {exc}") from exc
        return (self.storage.store_named(checkpoint_id, self.component, f"kg-{group}.{kind}",
                                         data), len(data))

    # -- restore -------------------------------------------------------------------------
    def chains_in(self, checkpoint_id: str) -> Chains:
        """Every group's chain in a checkpoint, from all its tasks' manifests."""
        merged: Chains = {}
        for name in self.storage.names(checkpoint_id, self.component):
            if not name.endswith(MANIFEST_SUFFIX):
                continue
            blob = self.storage.load_named(checkpoint_id, self.component, name)
            try:
                manifest = msgpack.unpackb(blob, strict_map_key=False)
                for g, chain in manifest.items():
                    merged[int(g)] = [(str(c), str(kind)) for c, kind in chain]
            except (ValueError, TypeError, msgpack.ExtraData) as exc:
                raise CheckpointUnreadable(f"checkpoint {checkpoint_id}, {self.component} "
                                           f"{name}: not a keyed-state manifest ({exc})") from exc
        return merged

    def load(self, checkpoint_id: str, index: int, parallelism: int
             ) -> tuple[KeyedState, Chains]:
        """The keyed state of task ``index`` of ``parallelism``: exactly the groups it
        owns, each read through its chain; and those chains (for the next save)."""
        if not checkpoint_id:
            self.chain_bytes = {}
            return KeyedState(), {}
        everything = self.chains_in(checkpoint_id)
        data: dict[Any, Any] = {}
        chains: Chains = {}
        self.chain_bytes = {}
        for g in groups_of(index, self.groups, parallelism):
            chain = everything.get(g)
            if not chain:
                continue
            chains[g] = chain
            for source, kind in chain:
                blob = self.storage.load_named(source, self.component, f"kg-{g}.{kind}")
                self.chain_bytes[g] = self.chain_bytes.get(g, 0) + len(blob)
                try:
                    keys, values, deleted = self.serializer.loads(blob)
                except Exception as exc:
                    raise CheckpointUnreadable(f"checkpoint {source}, {self.component} key "
                                               f"group {g}: does not decode ({exc})") from exc
                for k, v in zip(keys, values):
                    data[hashable_key(k)] = v
                for k in deleted:
                    data.pop(hashable_key(k), None)
        keyed = KeyedState(data)
        keyed.dirty.clear()
        return keyed, chains
