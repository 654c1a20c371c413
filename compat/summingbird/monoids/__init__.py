"""Semigroups and monoids for ``sum_by_key`` (an Algebird subset).

``Sum``, ``Min``, ``Max``, ``First``, ``Last``, ``SetUnion``, ``MapMerge``,
``Product``/``ProductSemigroup``, ``Averaged``, ``TopK``, ``HyperLogLog``,
``CountMinSketch``, and ``Semigroup.of``/``Monoid.of`` for your own; ``laws`` checks them.
"""

from .base import FunctionMonoid, FunctionSemigroup, Monoid, Semigroup
from .basic import (
                    Averaged,
                    AveragedValue,
                    First,
                    Last,
                    MapMerge,
                    Max,
                    Min,
                    Product,
                    ProductSemigroup,
                    SetUnion,
                    Sum,
)
from .cms import CMSketch, CountMinSketch
from .hll import HLLSketch, HyperLogLog
from .topk import TopK

__all__ = [
    "Averaged", "AveragedValue", "CMSketch", "CountMinSketch", "First", "FunctionMonoid",
    "FunctionSemigroup", "HLLSketch", "HyperLogLog", "Last", "MapMerge", "Max", "Min",
    "Monoid", "Product", "ProductSemigroup", "Semigroup", "SetUnion", "Sum", "TopK",
]
