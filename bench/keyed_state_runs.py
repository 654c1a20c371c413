"""Keyed state's figures for bench/checkpoint.py, measured on the storage path the engines
use (engine/statefulstorage/keyed.py), in this process:

* rescale 1 -> 4 -> 2 tasks: the time and bytes to save the state at one parallelism and
  restore it at the next (every new task reads only the key groups it owns), for N keys;
* incremental against full checkpoints: with N keys of which a share changes between
  checkpoints, the bytes and time of an incremental save against a full one.

The engine's own checkpoint of the same state adds the serializer's pass over per-task
state and the messages of the protocol, which bench/checkpoint.py's size runs measure.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from compat.storm_api.state import KeyedState
from engine.common.grouping.key_groups import groups_of, key_group
from engine.common.serialization import serializer_for_config
from engine.config.key_groups import DEFAULT_KEY_GROUPS
from engine.statefulstorage import LocalFileSystemStorage
from engine.statefulstorage.keyed import KeyedStateStore


@dataclass
class RescaleStep:
    before: int
    after: int
    save_secs: float
    save_bytes: int
    restore_secs: float
    #: the slowest new task's restore (they restore in parallel in the engine)
    slowest_task_restore_secs: float


@dataclass
class RescaleFigures:
    keys: int
    steps: list[RescaleStep] = field(default_factory=list)


@dataclass
class ChurnFigures:
    keys: int
    churn: float
    full_bytes: int
    full_secs: float
    incremental_bytes: int
    incremental_secs: float

    @property
    def ratio(self) -> float:
        return self.incremental_bytes / self.full_bytes if self.full_bytes else 0.0


def _parts(keys: int, parallelism: int, groups: int) -> list[KeyedState]:
    """What a fields grouping by key group hands each task."""
    owner = [0] * groups
    for index in range(parallelism):
        for g in groups_of(index, groups, parallelism):
            owner[g] = index
    parts: list[dict] = [{} for _ in range(parallelism)]
    for i in range(keys):
        key = f"word-{i}"
        parts[owner[key_group(key, groups)]][key] = i
    return [KeyedState(p) for p in parts]


def rescale(keys: int, path: tuple[int, ...] = (1, 4, 2),
            groups: int = DEFAULT_KEY_GROUPS) -> RescaleFigures:
    serializer = serializer_for_config({})
    root = Path(tempfile.mkdtemp(prefix="heron-bench-keyed-"))
    try:
        store = KeyedStateStore(LocalFileSystemStorage(root), serializer, "count", groups)
        parts = _parts(keys, path[0], groups)
        chains: list[dict] = [{} for _ in parts]
        figures = RescaleFigures(keys)
        for step, after in enumerate(path[1:], start=1):
            checkpoint = f"ckpt-{step}"
            began = time.perf_counter()
            written = 0
            for index, part in enumerate(parts):
                result = store.save(checkpoint, index + 1, index, len(parts), part,
                                    chains[index])
                written += result.bytes
            saved = time.perf_counter() - began
            loaded, slowest = [], 0.0
            began = time.perf_counter()
            for index in range(after):
                one = time.perf_counter()
                loaded.append(store.load(checkpoint, index, after))
                slowest = max(slowest, time.perf_counter() - one)
            restored = time.perf_counter() - began
            if sum(len(k) for k, _ in loaded) != keys:
                raise RuntimeError(f"rescale {len(parts)} -> {after} lost keys")
            figures.steps.append(RescaleStep(len(parts), after, saved, written, restored, slowest))
            parts = [k for k, _ in loaded]
            chains = [c for _, c in loaded]
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def churn(keys: int, share: float, groups: int = DEFAULT_KEY_GROUPS,
          seed: int = 7) -> ChurnFigures:
    serializer = serializer_for_config({})
    root = Path(tempfile.mkdtemp(prefix="heron-bench-churn-"))
    try:
        store = KeyedStateStore(LocalFileSystemStorage(root), serializer, "count", groups)
        keyed = KeyedState((f"word-{i}", i) for i in range(keys))
        began = time.perf_counter()
        full = store.save("ckpt-1", 1, 0, 1, keyed, {})
        full_secs = time.perf_counter() - began
        rng = random.Random(seed)
        for _ in range(int(keys * share)):
            keyed[f"word-{rng.randrange(keys)}"] = -1
        began = time.perf_counter()
        incremental = store.save("ckpt-2", 1, 0, 1, keyed, full.chains)
        return ChurnFigures(keys, share, full.bytes, full_secs, incremental.bytes,
                            time.perf_counter() - began)
    finally:
        shutil.rmtree(root, ignore_errors=True)
