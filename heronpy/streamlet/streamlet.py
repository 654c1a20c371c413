"""``Streamlet``: an ordered, possibly unbounded collection of elements, and its operators.

Each operator returns a new streamlet (a node of the graph ``Builder`` keeps) around the
stage that computes it (heronpy.streamlet.impl: ``MapStage``, ``JoinStage``...). Planning
(``Builder.build``) walks the graph from the sources: every streamlet becomes one heronpy
spout or bolt named after its stage (``map-1``, ``join-1``...) with its number of
partitions as parallelism, subscribed to its parents' ``output`` streams (shuffle; fields
on the key for joins and reductions by key; the repartition function's custom grouping).
The graph and the planning live below, in heronpy.streamlet.impl.stage, so the stages never
import the operators that make them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from heronpy.streamlet.impl.consumebolt import ConsumeStage
from heronpy.streamlet.impl.filterbolt import FilterStage
from heronpy.streamlet.impl.flatmapbolt import FlatMapStage
from heronpy.streamlet.impl.joinbolt import JOIN_TYPES, JoinStage
from heronpy.streamlet.impl.logbolt import LogStage
from heronpy.streamlet.impl.mapbolt import MapStage
from heronpy.streamlet.impl.reducebykeyandwindowbolt import ReduceByKeyAndWindowStage
from heronpy.streamlet.impl.reducebywindowbolt import ReduceByWindowStage
from heronpy.streamlet.impl.repartitionbolt import RepartitionStage
from heronpy.streamlet.impl.stage import StreamletNode
from heronpy.streamlet.impl.transformbolt import TransformStage
from heronpy.streamlet.impl.unionbolt import UnionStage

if TYPE_CHECKING:
    from heronpy.streamlet.windowconfig import WindowConfig


class Streamlet(StreamletNode):
    """A node of the streamlet graph; operators add children and return them."""

    def _child(self, child: Streamlet) -> Streamlet:
        self._add_child(child)
        return child

    # -- operators -------------------------------------------------------------------------

    def map(self, map_function: Callable[[Any], Any]) -> Streamlet:
        """Each element replaced by ``map_function(element)``."""
        return self._child(Streamlet(MapStage(map_function, self)))

    def flat_map(self, flatmap_function: Callable[[Any], Any]) -> Streamlet:
        """Each element replaced by the elements of ``flatmap_function(element)`` (a
        non-iterable result is one element)."""
        return self._child(Streamlet(FlatMapStage(flatmap_function, self)))

    def filter(self, filter_function: Callable[[Any], bool]) -> Streamlet:
        """The elements for which ``filter_function(element)`` is true."""
        return self._child(Streamlet(FilterStage(filter_function, self)))

    def repartition(self, num_partitions: int,
                    repartition_function: Callable[[Any, int], Any] | None = None
                    ) -> Streamlet:
        """The same elements over ``num_partitions`` partitions: shuffled, or sent where
        ``repartition_function(element, num_partitions)`` says (an index or a list of
        indices, taken modulo ``num_partitions``)."""
        return self._child(Streamlet(RepartitionStage(num_partitions, repartition_function,
                                                      self)))

    def clone(self, num_clones: int) -> list[Streamlet]:
        """``num_clones`` streamlets, each with every element of this one."""
        return [self.repartition(self.get_num_partitions()) for _ in range(num_clones)]

    def reduce_by_window(self, window_config: WindowConfig,
                         reduce_function: Callable[[Any, Any], Any]) -> Streamlet:
        """For each window, ``(Window, the window's elements reduced by reduce_function)``."""
        return self._child(Streamlet(ReduceByWindowStage(window_config, reduce_function, self)))

    def union(self, other_streamlet: Streamlet) -> Streamlet:
        """The elements of this streamlet and of ``other_streamlet``."""
        union = Streamlet(UnionStage(self, other_streamlet))
        other_streamlet._add_child(union)
        return self._child(union)

    def transform(self, transform_operator: Any) -> Streamlet:
        """What a ``TransformOperator`` emits for the elements of this streamlet."""
        return self._child(Streamlet(TransformStage(transform_operator, self)))

    def log(self) -> None:
        """Log every element (info level, in the component's log)."""
        self._child(Streamlet(LogStage(self)))

    def consume(self, consume_function: Callable[[Any], Any]) -> None:
        """Call ``consume_function(element)`` for every element."""
        self._child(Streamlet(ConsumeStage(consume_function, self)))

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
        return self._child(Streamlet(ReduceByKeyAndWindowStage(window_config, reduce_function,
                                                               self)))

    def _join(self, join_kind: int, other: Streamlet, window_config: WindowConfig,
              join_function: Callable[[Any, Any], Any]) -> Streamlet:
        joined = Streamlet(JoinStage(JOIN_TYPES[join_kind], window_config, join_function, self,
                                     other))
        other._add_child(joined)
        return self._child(joined)
