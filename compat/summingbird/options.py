"""Options by node name, Summingbird's way.

A platform takes ``{name: Options(...)}``; a node's option of a given class is looked up
under each ``name`` downstream of the node, nearest first, then under ``"DEFAULT"``.
So ``.sum_by_key(store, Sum()).name("counts")`` with ``{"counts": Options(
SummerParallelism(4))}`` configures that summer and, for the options that apply to
them, the maps feeding it. The memory platform is sequential and ignores them; the
batch platform uses parallelism as partition counts; the streaming planner (part 2)
uses all of them. Unknown names are refused, because a misspelt name would otherwise
silently configure nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Union

from .errors import PlanningError
from .graph import JobGraph
from .producer import DEFAULT_NAME, Producer


class Option:
    """Base of option values; each option class holds one setting."""

    _integers: tuple[str, ...] = ("count", "lower_bound")

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            wanted = int if name in self._integers else (int, float)
            if isinstance(value, bool) or not isinstance(value, wanted):
                kind = "an integer" if wanted is int else "a number"
                raise PlanningError(f"{type(self).__name__}.{name} must be {kind}, got {value!r}")
            if value < 0 or (value == 0 and self._positive(name)):
                raise PlanningError(f"{type(self).__name__}.{name} must be "
                                    f"{'> 0' if self._positive(name) else '>= 0'}, got {value!r}")

    def _positive(self, field_name: str) -> bool:
        return True


@dataclass(frozen=True)
class SourceParallelism(Option):
    """Tasks reading a source (batch: partitions of the source)."""

    count: int


@dataclass(frozen=True)
class FlatMapParallelism(Option):
    """Tasks running the maps and joins between a source and a summer (streaming)."""

    count: int


@dataclass(frozen=True)
class SummerParallelism(Option):
    """Tasks merging into a store (batch: partitions of the ``reduceByKey``)."""

    count: int


@dataclass(frozen=True)
class CacheSize(Option):
    """Keys a streaming node pre-aggregates before emitting (0: no cache, the default).

    ``fuzz`` adds up to that fraction on top, so caches of parallel tasks do not all flush
    at once (Summingbird's ``CacheSize(lowerBound, fuzz)``).
    """

    lower_bound: int
    fuzz: float = 0.2

    def _positive(self, field_name: str) -> bool:
        return False


@dataclass(frozen=True)
class FlushFrequency(Option):
    """Seconds between time-based cache flushes on a streaming node."""

    seconds: float


OptionT = TypeVar("OptionT", bound=Option)
OptionsLike = Union["Options", Option, Iterable[Option]]


class Options:
    """An immutable set of option values, at most one per option class."""

    def __init__(self, *options: Option) -> None:
        values: dict[type, Option] = {}
        for option in options:
            if not isinstance(option, Option):
                raise PlanningError(f"Options takes option values such as SummerParallelism(4), "
                                    f"got {option!r}")
            values[type(option)] = option
        self._values = values

    def set(self, option: Option) -> Options:
        """A copy with ``option`` added (replacing one of the same class)."""
        return Options(*self._values.values(), option)

    def get(self, cls: type[OptionT]) -> OptionT | None:
        # _values maps each option class to an instance of it, which a dict's type cannot say
        return self._values.get(cls)  # type: ignore[return-value]

    def __contains__(self, cls: object) -> bool:
        return cls in self._values

    def __iter__(self) -> Any:
        return iter(self._values.values())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and self._values == other._values

    def __repr__(self) -> str:
        return f"Options({', '.join(repr(v) for v in self._values.values())})"


def normalize(options: Mapping[str, OptionsLike] | None) -> dict[str, Options]:
    """``{name: Options}`` from a mapping whose values may be an Option or a list of them."""
    result: dict[str, Options] = {}
    for name, value in (options or {}).items():
        if not isinstance(name, str):
            raise PlanningError(f"option names must be strings, got {name!r}")
        if isinstance(value, Options):
            result[name] = value
        elif isinstance(value, Option):
            result[name] = Options(value)
        else:
            try:
                result[name] = Options(*value)
            except TypeError:
                raise PlanningError(f"options for {name!r} must be Options, an option or a list "
                                    f"of options, got {value!r}") from None
    return result


def check_names(graph: JobGraph, options: Mapping[str, Options]) -> None:
    """Refuse options given to names the job does not have."""
    unknown = sorted(set(options) - graph.names - {DEFAULT_NAME})
    if unknown:
        known = ", ".join(sorted(graph.names)) or "none"
        raise PlanningError(f"options given for {', '.join(map(repr, unknown))}, but no node of "
                            f"this job has that name (names in the job: {known}; "
                            f"{DEFAULT_NAME!r} applies to every node)")


def resolve(graph: JobGraph, node: Producer, cls: type[OptionT],
            options: Mapping[str, Options]) -> OptionT | None:
    """The option of class ``cls`` for ``node``: nearest downstream name, then DEFAULT."""
    for name in graph.option_names(node):
        found = options.get(name)
        if found is not None and cls in found:
            return found.get(cls)
    return None
