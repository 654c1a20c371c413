"""Declared resources per instance, read from Heron's configuration keys.

Heron declares per-component RAM/CPU/disk as maps in the topology config
(``topology.component.rammap: "count_bolt:536870912,word_spout:268435456"``); instances
without an entry get ``heron.resources.instance.{ram,cpu,disk}`` (Heron's defaults: 1 GiB,
1.0, 1 GiB). Resources are declarations for packing, not limits the engine enforces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.spi.packing_errors import PackingError

GIB = 1024 ** 3
DEFAULT_INSTANCE_RAM = GIB
DEFAULT_INSTANCE_CPU = 1.0
DEFAULT_INSTANCE_DISK = GIB

_MAP_KEYS = {"ram": "topology.component.rammap", "cpu": "topology.component.cpumap",
             "disk": "topology.component.diskmap"}
_DEFAULT_KEYS = {"ram": "heron.resources.instance.ram", "cpu": "heron.resources.instance.cpu",
                 "disk": "heron.resources.instance.disk"}


@dataclass(frozen=True, order=True)
class Resource:
    ram: int = 0      # bytes
    cpu: float = 0.0  # cores
    disk: int = 0     # bytes

    def __add__(self, other: Resource) -> Resource:
        return Resource(self.ram + other.ram, self.cpu + other.cpu, self.disk + other.disk)

    def fits_in(self, limit: Resource) -> bool:
        return self.ram <= limit.ram and self.cpu <= limit.cpu + 1e-9 and self.disk <= limit.disk

    def scaled(self, factor: float) -> Resource:
        return Resource(int(self.ram * factor), self.cpu * factor, int(self.disk * factor))

    @staticmethod
    def largest(resources: Iterable[Resource]) -> Resource:
        items = list(resources)
        return Resource(max((r.ram for r in items), default=0),
                        max((r.cpu for r in items), default=0.0),
                        max((r.disk for r in items), default=0))


def _parse_map(conf: Mapping[str, Any], key: str, components: Iterable[str]) -> dict[str, float]:
    raw = conf.get(key)
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        items = list(raw.items())
    else:
        items = []
        for part in str(raw).split(","):
            name, sep, value = part.strip().rpartition(":")
            if not sep or not name:
                raise PackingError(f"{key}: expected 'component:value,...', got {raw!r}")
            items.append((name, value))
    known = set(components)
    out: dict[str, float] = {}
    for name, value in items:
        if name not in known:
            raise PackingError(f"{key}: unknown component {name!r}; components: {sorted(known)}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise PackingError(
                f"{key}: value {value!r} for component {name!r} is not a number") from None
        if number <= 0:
            raise PackingError(
                f"{key}: value for component {name!r} must be positive, got {value!r}")
        out[name] = number
    return out


def component_resources(conf: Mapping[str, Any], components: Iterable[str]) -> dict[str, Resource]:
    """The resources one instance of each component declares."""
    names = list(components)
    maps = {kind: _parse_map(conf, key, names) for kind, key in _MAP_KEYS.items()}
    defaults = {
        "ram": float(conf.get(_DEFAULT_KEYS["ram"]) or DEFAULT_INSTANCE_RAM),
        "cpu": float(conf.get(_DEFAULT_KEYS["cpu"]) or DEFAULT_INSTANCE_CPU),
        "disk": float(conf.get(_DEFAULT_KEYS["disk"]) or DEFAULT_INSTANCE_DISK),
    }
    return {name: Resource(int(maps["ram"].get(name, defaults["ram"])),
                           float(maps["cpu"].get(name, defaults["cpu"])),
                           int(maps["disk"].get(name, defaults["disk"])))
            for name in names}
