"""How big a container is asked to be: Heron's padding (room beside the instances for the
Stream Manager and the Metrics Manager), and the first-fit packing's largest container and
the share of it kept free. Read by the packing plug-ins, the Slurm scheduler's job sizing
and the loader's config check, so a bad value is refused at submit in one line, never as a
traceback from the packing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.errors import ConfigError
from engine.config.keys import (
    MAX_CPU_HINT_KEY,
    MAX_DISK_HINT_KEY,
    MAX_RAM_HINT_KEY,
    PADDING_CPU_KEY,
    PADDING_DISK_KEY,
    PADDING_PERCENTAGE_KEY,
    PADDING_RAM_KEY,
)

GIB = 1 << 30
#: Heron's default padding per container
DEFAULT_PADDING_RAM = 2 * GIB
DEFAULT_PADDING_CPU = 1.0
DEFAULT_PADDING_DISK = 12 * GIB
#: Heron's first-fit default: a tenth of a container kept free
DEFAULT_PADDING_PERCENTAGE = 10.0


@dataclass(frozen=True)
class Padding:
    ram: int    # bytes
    cpu: float  # cores
    disk: int   # bytes


@dataclass(frozen=True)
class MaxContainerHints:
    """The first-fit packing's largest container; None where the topology sets none."""

    ram: int | None
    cpu: float | None
    disk: int | None


def byte_count(conf: Mapping[str, Any], key: str, default: int | None,
               *, least: int = 0) -> int | None:
    """A whole number of bytes of at least ``least`` (``default`` when unset or None)."""
    value = conf.get(key)
    if value is None:
        return default
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not value.is_integer()) or value < least):
        more = f" of at least {least}" if least else ""
        raise ConfigError(f"{key} must be a whole number of bytes{more} (e.g. 134217728), "
                          f"got {value!r}")
    return int(value)


def core_count(conf: Mapping[str, Any], key: str, default: float | None,
               *, positive: bool = False) -> float | None:
    """A number of cores, fractions accepted (``default`` when unset or None)."""
    value = conf.get(key)
    if value is None:
        return default
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (value <= 0 if positive else value < 0)):
        least = "> 0" if positive else ">= 0"
        raise ConfigError(f"{key} must be a number of cores {least} (fractions such as 0.5 "
                          f"are accepted), got {value!r}")
    return float(value)


def padding(conf: Mapping[str, Any]) -> Padding:
    """``topology.container.padding.{ram,cpu,disk}`` (Heron's 2 GiB, 1 core, 12 GiB)."""
    ram = byte_count(conf, PADDING_RAM_KEY, DEFAULT_PADDING_RAM)
    cpu = core_count(conf, PADDING_CPU_KEY, DEFAULT_PADDING_CPU)
    disk = byte_count(conf, PADDING_DISK_KEY, DEFAULT_PADDING_DISK)
    assert ram is not None and cpu is not None and disk is not None  # defaults given
    return Padding(ram=ram, cpu=cpu, disk=disk)


def padding_percentage(conf: Mapping[str, Any]) -> float:
    """``topology.container.padding.percentage``: the share of a first-fit container kept
    free, from 0 up to (not including) 100 (default 10)."""
    value = conf.get(PADDING_PERCENTAGE_KEY)
    if value is None:
        return DEFAULT_PADDING_PERCENTAGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value < 100:
        raise ConfigError(f"{PADDING_PERCENTAGE_KEY} must be a number in [0, 100), "
                          f"got {value!r}")
    return float(value)


def max_container_hints(conf: Mapping[str, Any]) -> MaxContainerHints:
    """``topology.container.max.{ram,cpu,disk}.hint``: each positive, None when unset."""
    return MaxContainerHints(ram=byte_count(conf, MAX_RAM_HINT_KEY, None, least=1),
                             cpu=core_count(conf, MAX_CPU_HINT_KEY, None, positive=True),
                             disk=byte_count(conf, MAX_DISK_HINT_KEY, None, least=1))


def check_container_sizing(conf: Mapping[str, Any]) -> None:
    """Every sizing key readable (the loader's config check calls this at submit)."""
    padding(conf)
    padding_percentage(conf)
    max_container_hints(conf)
