"""``Streamlet``: an ordered, possibly unbounded collection of elements, and its operators.

Each operator returns a new streamlet (a node of the graph ``Builder`` keeps). Planning
(``Builder.build``) walks the graph from the sources: every streamlet becomes one heronpy
spout or bolt named after its stage (``map-1``, ``join-1``...) with its number of
partitions as parallelism, subscribed to its parents' ``output`` streams (shuffle; fields
on the key for joins and reductions by key; the repartition function's custom grouping).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heronpy.api.component.component_spec import GlobalStreamId
from heronpy.api.stream import Grouping
from heronpy.streamlet.impl.streamletboltbase import (
    KEYED_OUTPUT,
    OUTPUT_STREAM,
    keyed_outputs,
    packed_config,
)

if TYPE_CHECKING:
    from heronpy.api.topology import TopologyBuilder
    from heronpy.streamlet.windowconfig import WindowConfig


class Streamlet:
    """A node of the streamlet graph; operators add children and return them."""

    def __init__(self) -> None:
        self._name: str | None = None
        self._num_partitions = 1
        self._children: list[Streamlet] = []
        self._built = False
        self._output = OUTPUT_STREAM

    def set_name(self, name: str) -> Streamlet:
        """Name the stage (its component's name)."""
        self._name = name
        return self

    def get_name(self) -> str | None:
        return self._name

    def set_num_partitions(self, num_partitions: int) -> Streamlet:
        """How many tasks run this stage."""
        if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) \
                or num_partitions < 1:
            raise RuntimeError(f"Number of partitions has to be a positive int, given: "
                               f"{num_partitions!r}")
        self._num_partitions = num_partitions
        return self

    def get_num_partitions(self) -> int:
        return self._num_partitions

    # -- operators -------------------------------------------------------------------------

    def map(self, map_function: Callable[[Any], Any]) -> Streamlet:
        """Each element replaced by ``map_function(element)``."""
        from heronpy.streamlet.impl.mapbolt import MapStreamlet
        return self._add_child(MapStreamlet(map_function, self))

    def flat_map(self, flatmap_function: Callable[[Any], Any]) -> Streamlet:
        """Each element replaced by the elements of ``flatmap_function(element)`` (a
        non-iterable result is one element)."""
        from heronpy.streamlet.impl.flatmapbolt import FlatMapStreamlet
        return self._add_child(FlatMapStreamlet(flatmap_function, self))

    def filter(self, filter_function: Callable[[Any], bool]) -> Streamlet:
        """The elements for which ``filter_function(element)`` is true."""
        from heronpy.streamlet.impl.filterbolt import FilterStreamlet
        return self._add_child(FilterStreamlet(filter_function, self))

    def repartition(self, num_partitions: int,
                    repartition_function: Callable[[Any, int], Any] | None = None
                    ) -> Streamlet:
        """The same elements over ``num_partitions`` partitions: shuffled, or sent where
        ``repartition_function(element, num_partitions)`` says (an index or a list of
        indices, taken modulo ``num_partitions``)."""
        from heronpy.streamlet.impl.repartitionbolt import RepartitionStreamlet
        return self._add_child(RepartitionStreamlet(num_partitions, repartition_function, self))

    def clone(self, num_clones: int) -> list[Streamlet]:
        """``num_clones`` streamlets, each with every element of this one."""
        return [self.repartition(self.get_num_partitions()) for _ in range(num_clones)]

    def reduce_by_window(self, window_config: WindowConfig,
                         reduce_function: Callable[[Any, Any], Any]) -> Streamlet:
        """For each window, ``(Window, the window's elements reduced by reduce_function)``."""
        from heronpy.streamlet.impl.reducebywindowbolt import ReduceByWindowStreamlet
        return self._add_child(ReduceByWindowStreamlet(window_config, reduce_function, self))

    def union(self, other_streamlet: Streamlet) -> Streamlet:
        """The elements of this streamlet and of ``other_streamlet``."""
        from heronpy.streamlet.impl.unionbolt import UnionStreamlet
        union = UnionStreamlet(self, other_streamlet)
        other_streamlet._add_child(union)
        return self._add_child(union)

    def transform(self, transform_operator: Any) -> Streamlet:
        """What a ``TransformOperator`` emits for the elements of this streamlet."""
        from heronpy.streamlet.impl.transformbolt import TransformStreamlet
        return self._add_child(TransformStreamlet(transform_operator, self))

    def log(self) -> None:
        """Log every element (info level, in the component's log)."""
        from heronpy.streamlet.impl.logbolt import LogStreamlet
        self._add_child(LogStreamlet(self))

    def consume(self, consume_function: Callable[[Any], Any]) -> None:
        """Call ``consume_function(element)`` for every element."""
        from heronpy.streamlet.impl.consumebolt import ConsumeStreamlet
        self._add_child(ConsumeStreamlet(consume_function, self))

    def join(self, join_streamlet: Streamlet, window_config: WindowConfig,
             join_function: Callable[[Any, Any], Any]) -> Streamlet:
        """Inner join of ``(key, value)`` elements over each window:
        ``(KeyedWindow(key, window), join_function(left_value, right_value))``."""
        return self._join(1, join_streamlet, window_config, join_function)

    def outer_right_join(self, join_streamlet: Streamlet, window_config: WindowConfig,
                         join_function: Callable[[Any, Any], Any]) -> Streamlet:
        """As ``join``, plus ``join_function(None, right_value)`` for right keys with no
        left element in the window."""
        return self._join(3, join_streamlet, window_config, join_function)

    def outer_left_join(self, join_streamlet: Streamlet, window_config: WindowConfig,
                        join_function: Callable[[Any, Any], Any]) -> Streamlet:
        """As ``join``, plus ``join_function(left_value, None)`` for left keys with no
        right element in the window."""
        return self._join(2, join_streamlet, window_config, join_function)

    def outer_join(self, join_streamlet: Streamlet, window_config: WindowConfig,
                   join_function: Callable[[Any, Any], Any]) -> Streamlet:
        """Both outer joins at once."""
        return self._join(4, join_streamlet, window_config, join_function)

    def reduce_by_key_and_window(self, window_config: WindowConfig,
                                 reduce_function: Callable[[Any, Any], Any]) -> Streamlet:
        """For each window and key of ``(key, value)`` elements,
        ``(KeyedWindow(key, window), the key's values reduced by reduce_function)``."""
        from heronpy.streamlet.impl.reducebykeyandwindowbolt import ReduceByKeyAndWindowStreamlet
        return self._add_child(ReduceByKeyAndWindowStreamlet(window_config, reduce_function,
                                                             self))

    def _join(self, join_kind: int, other: Streamlet, window_config: WindowConfig,
              join_function: Callable[[Any, Any], Any]) -> Streamlet:
        from heronpy.streamlet.impl.joinbolt import JOIN_TYPES, JoinStreamlet
        joined = JoinStreamlet(JOIN_TYPES[join_kind], window_config, join_function, self, other)
        other._add_child(joined)
        return self._add_child(joined)

    # -- planning ----------------------------------------------------------------------------

    def _build(self, bldr: Any, stage_names: set[str]) -> None:
        """Add this stage (once its parents are in) and then its children."""
        if self._built:  # reached again through its other parent (union, join)
            return
        if self._build_this(bldr, stage_names):
            self._built = True
            for child in self._children:
                child._build(bldr, stage_names)

    @abstractmethod
    def _build_this(self, builder: TopologyBuilder, stage_names: set[str]) -> bool:
        """Add this stage's spout or bolt to ``builder``; False if a parent is not built yet."""
        raise RuntimeError("Streamlet's _build_this not implemented")

    def _add_child(self, child: Streamlet) -> Streamlet:
        self._children.append(child)
        return child

    def _keyed_parents(self) -> list[Streamlet]:
        """The parents this stage subscribes to by key (join, reduce by key)."""
        return []

    def _default_stage_name_calculator(self, prefix: str, existing_stage_names: set[str]) -> str:
        """``prefix-N``, the first N not taken."""
        index = 1
        while f"{prefix}-{index}" in existing_stage_names:
            index += 1
        return f"{prefix}-{index}"

    def _claim_name(self, prefix: str, stage_names: set[str]) -> str:
        if not self._name:
            self._name = self._default_stage_name_calculator(prefix, stage_names)
        if self._name in stage_names:
            raise RuntimeError(f"Duplicate Names: two stages are named {self._name!r}")
        stage_names.add(self._name)
        return self._name

    def _output_options(self, config: dict[str, Any]) -> tuple[dict[str, Any], list[Any] | None]:
        """The component config and optional outputs that make this stage emit keys when a
        child subscribes by key."""
        if any(self in child._keyed_parents() for child in self._children):
            return {**config, KEYED_OUTPUT: True}, keyed_outputs()
        return config, None

    def _input_of(self, grouping: Any = Grouping.SHUFFLE) -> dict[GlobalStreamId, Any]:
        """``inputs`` entry for a child subscribing to this stage."""
        name = self.get_name()
        assert name is not None  # built, so named (_claim_name), before any child is
        return {GlobalStreamId(name, self._output): grouping}

    def _add_bolt_stage(
        self,
        builder: Any,
        stage_names: set[str],
        prefix: str,
        bolt_cls: type,
        inputs: dict[GlobalStreamId, Any],
        config: dict[str, Any] | None = None,
    ) -> bool:
        name = self._claim_name(prefix, stage_names)
        config, outputs = self._output_options(packed_config(config or {}, name))
        builder.add_bolt(name, bolt_cls, par=self.get_num_partitions(), inputs=inputs,
                         config=config, optional_outputs=outputs)
        return True

    def _add_spout_stage(self, builder: Any, stage_names: set[str], prefix: str,
                         spout_cls: type, config: dict[str, Any]) -> bool:
        name = self._claim_name(prefix, stage_names)
        config, outputs = self._output_options(packed_config(config, name))
        builder.add_spout(name, spout_cls, par=self.get_num_partitions(), config=config,
                          optional_outputs=outputs)
        return True

    def _unbuild(self) -> None:
        """Forget a previous build of this stage and the stages below it."""
        self._built = False
        for child in self._children:
            child._unbuild()

    def _all_built(self) -> bool:
        return self._built and all(child._all_built() for child in self._children)


def check_callable(function: Any, what: str) -> None:
    """heronpy's check that an operator's function is callable."""
    if not callable(function):
        raise RuntimeError(f"{what} function has to be callable")


def check_streamlet(parent: Any, what: str) -> None:
    if not isinstance(parent, Streamlet):
        raise RuntimeError(f"Parent of {what} Streamlet has to be a Streamlet")
